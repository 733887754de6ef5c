"""The name and version ``@system`` / ``@rag_system`` declare, when oloproof.yaml overrides them:
bumping the decorator's version still executes every case again (a system that reads a file
Oloproof cannot see relies on it), and agreeing values change no identity. Real CLI runs."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support import oloproof, write_project

APP = """
from pathlib import Path
from oloproof import system

@system(name="echo", version="{version}")
def run(case):
    return {{"answer": Path("kb.txt").read_text() + case["q"]}}
"""


def cache_line(out: str) -> str:
    return next(line for line in out.splitlines() if line.startswith("Cache:"))


def test_bumping_the_decorator_s_version_executes_every_case_again(tmp_path: Path) -> None:
    root = write_project(
        tmp_path / "p",
        app=APP.format(version="1"),
        config=(
            'system: {name: echo, version: "1", callable: app:run}\ndataset: cases.jsonl\n'
            "evaluators:\n  - {type: contains, criterion: ok, field: answer, expected_field: answer}\n"
        ),
        policy="version: 1\nrules:\n  - {id: floor, metric: ok, min: 0.1}\n",
        cases=[
            {"id": f"c{i}", "input": {"q": f"q{i}"}, "expected": {"answer": f"q{i}"}}
            for i in range(4)
        ],
    )
    (root / "kb.txt").write_text("right ")
    first = oloproof("run", cwd=root)
    assert first.code == 0, first.err
    again = oloproof("run", cwd=root)
    assert cache_line(again.out).startswith("Cache: execution 4 hit/0 miss"), again.out
    # The file changed, which no fingerprint sees; the user bumps the decorator's version, and
    # oloproof.yaml (which still says "1") is what the run records as its version.
    (root / "kb.txt").write_text("wrong ")
    (root / "app.py").write_text(APP.format(version="2"))
    planned = oloproof("run", "--dry-run", cwd=root)
    assert "  4 executions: the name or version its decorator declares changed" in planned.lines
    bumped = oloproof("run", "--json", cwd=root)
    assert bumped.code == 0, bumped.err
    report = json.loads(bumped.out)
    assert report["cache"]["execution"][:2] == [0, 4]  # no hit, four executed
    run_id = report["run_id"]
    shown = oloproof("inspect", run_id, "--case", "c0", cwd=root)
    assert "answer: wrong q0" in shown.out, shown.out
    listed = next(line for line in oloproof("runs", cwd=root).lines if line.startswith(run_id))
    assert "echo 1" in listed
