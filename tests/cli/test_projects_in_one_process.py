"""The Python API runs projects in one process as the CLI runs each in a process of its own:
a project run again after its code was edited runs the edited code, nested projects each run
their own modules, and two threads may evaluate two projects at once. Each scenario runs in a
Python process of its own, as a notebook would."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.support import oloproof, write_project

# Imports a sibling module by a name every project uses; counts its imports in a file.
APP = """
from pathlib import Path

import helper

with open(Path(__file__).with_name("imports.txt"), "a") as counted:
    counted.write("imported\\n")


def answer(case):
    return {"answer": helper.ANSWER}
"""
CONFIG = """
system: {name: s, version: "1", callable: app:answer}
dataset: cases.jsonl
evaluators:
  - {type: contains, criterion: said, field: answer, expected_field: answer}
"""


def _project(root: Path, answer: str, expected: str) -> Path:
    write_project(
        root,
        app=APP,
        config=CONFIG,
        policy="version: 1\nrules:\n  - {id: r, metric: said, min: 0.5}\n",
        cases=[
            {"id": f"c{i}", "input": {"i": i}, "expected": {"answer": expected}} for i in range(3)
        ],
    )
    (root / "helper.py").write_text(f"ANSWER = {answer!r}\n")
    return root


def _python(script: str, cwd: Path) -> list[dict[str, object]]:
    """Run ``script`` in a fresh Python; each line it prints is a JSON object."""
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=cwd, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]


REPORT = (
    "def said(report):\n"
    "    row = report.metrics[0]\n"
    "    print(json.dumps({'passed': row.successes, 'execution': report.cache['execution']}))\n"
)


def test_a_project_run_again_after_an_edit_runs_the_edited_code(tmp_path: Path) -> None:
    root = _project(tmp_path / "p", "old", "new")
    script = (
        "import json, pathlib, oloproof\n" + REPORT + "said(oloproof.evaluate('oloproof.yaml'))\n"
        "said(oloproof.evaluate('oloproof.yaml'))\n"  # unchanged: cached, not imported again
        "pathlib.Path('helper.py').write_text(\"ANSWER = 'new'\\n\")\n"
        "said(oloproof.evaluate('oloproof.yaml'))\n"
    )
    first, again, edited = _python(script, root)
    assert first == {"passed": 0, "execution": [0, 3, 0]}
    assert again == {"passed": 0, "execution": [3, 0, 0]}
    assert edited == {"passed": 3, "execution": [0, 3, 0]}  # the new code ran, not the cache
    assert (root / "imports.txt").read_text() == "imported\n" * 2
    codes = {line.split()[-1] for line in oloproof("runs", cwd=root).lines}
    assert len(codes) == 2  # the edited code has a fingerprint of its own
    fresh = oloproof("run", "--json", cwd=root)
    assert json.loads(fresh.out)["cache"]["execution"] == [3, 0, 0]  # as the CLI sees it


def test_nested_projects_each_run_their_own_modules(tmp_path: Path) -> None:
    outer = _project(tmp_path / "outer", "outer", "outer")
    _project(outer / "inner", "inner", "inner")
    script = (
        "import json, oloproof\n" + REPORT + "for folder in ('.', 'inner', '.', 'inner'):\n"
        "    said(oloproof.evaluate(folder + '/oloproof.yaml'))\n"
    )
    passed = [row["passed"] for row in _python(script, outer)]
    assert passed == [3, 3, 3, 3]


def test_two_threads_evaluate_two_projects_at_once(tmp_path: Path) -> None:
    for name in ("a", "b"):
        _project(tmp_path / name, name, name)
    script = (
        "import json, threading, oloproof\n"
        "done = {}\n"
        "def run(name):\n"
        "    done[name] = oloproof.evaluate(name + '/oloproof.yaml').metrics[0].successes\n"
        "for _ in range(5):\n"
        "    threads = [threading.Thread(target=run, args=(n,)) for n in 'ab']\n"
        "    [t.start() for t in threads]\n"
        "    [t.join() for t in threads]\n"
        "    print(json.dumps(done))\n"
    )
    assert _python(script, tmp_path) == [{"a": 3, "b": 3}] * 5


def test_evaluate_inside_a_running_loop_says_how_before_anything_runs(tmp_path: Path) -> None:
    root = _project(tmp_path / "p", "p", "p")
    script = (
        "import asyncio, json, oloproof\n"
        "from oloproof.errors import ConfigError\n"
        "async def main():\n"
        "    try:\n"
        "        oloproof.evaluate('oloproof.yaml')\n"
        "    except ConfigError as exc:\n"
        "        print(json.dumps({'refused': str(exc)}))\n"
        "    report = await asyncio.to_thread(oloproof.evaluate, 'oloproof.yaml')\n"
        "    print(json.dumps({'passed': report.metrics[0].successes}))\n"
        "asyncio.run(main())\n"
    )
    done = subprocess.run(
        [sys.executable, "-W", "error", "-c", script],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert "never awaited" not in done.stderr
    refused, ran = (json.loads(line) for line in done.stdout.splitlines())
    assert refused["refused"].startswith("evaluate() runs an event loop of its own")
    assert "asyncio.to_thread(evaluate, config)" in refused["refused"]
    assert ran == {"passed": 3}
    assert (root / "imports.txt").read_text() == "imported\n"  # imported by the thread's run only


def test_the_python_api_takes_paths_as_text(tmp_path: Path) -> None:
    root = _project(tmp_path / "p", "p", "p")
    script = (
        "import json, oloproof\n"
        "from oloproof.errors import OloproofError\n"
        "done = {'load_config': type(oloproof.load_config('oloproof.yaml')).__name__}\n"
        "done['load_dataset'] = len(oloproof.load_dataset('cases.jsonl').cases)\n"
        "done['plan_run'] = len(oloproof.plan_run('oloproof.yaml', policy_path='policy.yaml').cases)\n"
        "oloproof.evaluate('oloproof.yaml')\n"
        "ledger = oloproof.open_project_ledger('.', create=False)\n"
        "done['read_run_report'] = oloproof.read_run_report(ledger, 'latest').exit_code\n"
        "try:\n"
        "    oloproof.read_run_report(ledger, 42)\n"
        "except OloproofError as exc:\n"
        "    done['refused'] = str(exc)\n"
        "ledger.close()\n"
        "print(json.dumps(done))\n"
    )
    assert _python(script, root) == [
        {
            "load_config": "ProjectConfig",
            "load_dataset": 3,
            "plan_run": 3,
            "read_run_report": 0,
            "refused": "a run is named by its id, a ref or an address, not 42",
        }
    ]
