"""A project's ``secrets:`` are kept out while that project runs, not for the rest of the
process: a Python process that evaluates one project and then another must judge the second
as its own process would.

Before, the values a project declared stayed registered for the whole process, so a later
project whose system legitimately answered that word had its answer stored as ``[redacted]``
and its ``contains`` verdict turned into a fail. Each scenario runs in a Python process of its
own (as a notebook would), through ``oloproof.evaluate``; the ledgers are read afterwards.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.support import copy_example, oloproof, stored_bytes, write_project

CITY = "Amsterdam"  # a word, long enough to be a secret (six characters or more)
ANSWER = f"The capital is {CITY}."

APP = f"""
import time
from pathlib import Path


def answer(case):
    if case.get("wait"):  # until the other project has run and ended beside this one
        here = Path(__file__).parent
        (here / "started").touch()
        while not (here / "other_done").exists():
            time.sleep(0.01)
    return {{"answer": {ANSWER!r}}}
"""

CONFIG = """
system: {{name: s, version: "1", callable: app:answer}}
dataset: cases.jsonl
policy: policy.yaml
{secrets}evaluators:
  - {{type: contains, criterion: said, field: answer, expected_field: answer}}
"""


def _project(root: Path, *, declares: str | None, wait: bool = False) -> Path:
    """A project whose system answers ``ANSWER`` to each of its three cases, each expecting
    ``CITY``; ``declares`` is the variable its ``secrets:`` lists, if any."""
    return write_project(
        root,
        app=APP,
        config=CONFIG.format(secrets=f"secrets: [{declares}]\n" if declares else ""),
        policy="version: 1\nrules:\n  - {id: r, metric: said, min: 0.5}\n",
        cases=[
            {"id": f"c{i}", "input": {"i": i, "wait": wait}, "expected": {"answer": CITY}}
            for i in range(3)
        ],
    )


# Prints one JSON line per evaluation: the verdicts passed and the occurrences redacted.
REPORTED = (
    "import json, os, oloproof\n"
    "def evaluate(folder):\n"
    "    report = oloproof.evaluate(folder + '/oloproof.yaml', use_cache=False)\n"
    "    row = report.metrics[0]\n"
    "    print(json.dumps({'project': folder, 'passed': row.successes,\n"
    "                      'redacted': report.redacted}), flush=True)\n"
)


def _python(script: str, cwd: Path, env: dict[str, str]) -> list[dict[str, object]]:
    done = subprocess.run(
        [sys.executable, "-c", REPORTED + script],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, **env},
    )
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]


def test_a_word_one_project_declares_is_left_alone_in_the_next(tmp_path: Path) -> None:
    a = _project(tmp_path / "a", declares="CITY")
    b = _project(tmp_path / "b", declares=None)
    reported = _python("evaluate('a')\nevaluate('b')\nevaluate('a')\n", tmp_path, {"CITY": CITY})
    first_a, then_b, again_a = reported
    # While A runs, what it declared is kept out (its answers and expected values alike), and
    # again when it runs after B.
    assert first_a == {"project": "a", "passed": 0, "redacted": 6}
    assert again_a == {"project": "a", "passed": 0, "redacted": 6}
    assert CITY.encode() not in stored_bytes(a)
    # B declared nothing: its answers are stored as written and judged on what they say.
    assert then_b == {"project": "b", "passed": 3, "redacted": 0}
    stored = stored_bytes(b)
    assert ANSWER.encode() in stored
    assert b"[redacted]" not in stored
    shown = oloproof("inspect", "latest", "--case", "c0", cwd=b)
    assert f"    answer: {ANSWER}" in shown.lines, shown.out


def test_a_declared_value_also_named_as_a_credential_stays_kept_out(tmp_path: Path) -> None:
    # The same value in a variable named like a credential was registered for the process
    # (the user's code may read it at any time): A ending does not release it, even once the
    # variable is gone and B's own planning can no longer find it.
    value = f"{CITY}-7d41c2f09b-key"  # long enough (16+) to be taken for a credential
    a = _project(tmp_path / "a", declares="CITY")
    b = _project(tmp_path / "b", declares=None)
    for root in (a, b):
        (root / "cases.jsonl").write_text(
            (root / "cases.jsonl").read_text().replace(json.dumps(CITY), json.dumps(value))
        )
        (root / "app.py").write_text(APP.replace(ANSWER, f"The capital is {value}."))
    script = (
        "evaluate('a')\ndel os.environ['CITY'], os.environ['SEARCH_API_TOKEN']\nevaluate('b')\n"
    )
    reported = _python(script, tmp_path, {"CITY": value, "SEARCH_API_TOKEN": value})
    assert reported == [
        {"project": "a", "passed": 0, "redacted": 6},
        {"project": "b", "passed": 0, "redacted": 6},
    ]
    assert value.encode() not in stored_bytes(a) + stored_bytes(b)


def test_a_project_running_beside_another_keeps_its_secret_out_to_the_end(
    tmp_path: Path,
) -> None:
    # A's cases wait, A's secret held, until B (declaring the same variable) has run and
    # ended in another thread: B's end must not release what A still holds. Then C, which
    # declares nothing, runs once both have ended and keeps its answers.
    a = _project(tmp_path / "a", declares="CITY", wait=True)
    b = _project(tmp_path / "b", declares="CITY")
    c = _project(tmp_path / "c", declares=None)
    script = (
        "import pathlib, threading, time\n"
        "beside = threading.Thread(target=evaluate, args=('a',))\n"
        "beside.start()\n"
        "while not pathlib.Path('a/started').exists():\n"
        "    time.sleep(0.01)\n"
        "evaluate('b')\n"
        "pathlib.Path('a/other_done').touch()\n"
        "beside.join()\n"
        "evaluate('c')\n"
    )
    then_b, first_a, last_c = _python(script, tmp_path, {"CITY": CITY})
    assert then_b == {"project": "b", "passed": 0, "redacted": 6}
    # A's count of what was replaced is at least its own (a run counts every replacement the
    # process made while it went on, B's included: see the note in the report).
    assert first_a["project"] == "a" and first_a["passed"] == 0
    assert int(first_a["redacted"]) >= 6  # type: ignore[call-overload]
    assert last_c == {"project": "c", "passed": 3, "redacted": 0}
    assert CITY.encode() not in stored_bytes(a)
    assert CITY.encode() not in stored_bytes(b)
    assert ANSWER.encode() in stored_bytes(c)


def test_a_word_a_diagnosed_project_declares_is_left_alone_in_the_next(tmp_path: Path) -> None:
    # oloproof.diagnose plans the diagnosed run's project again, its secrets: with it; they
    # are released once the diagnosis is recorded, as evaluate releases them.
    support = copy_example("support_rag", tmp_path)
    config = support / "oloproof.yaml"
    config.write_text(
        config.read_text().replace("policy: policy.yaml", "secrets: [CITY]\npolicy: policy.yaml")
    )
    env = {"CITY": CITY}
    assert oloproof("run", cwd=support, env=env).code in (0, 3)
    b = _project(tmp_path / "b", declares=None)
    script = (
        "ledger = oloproof.open_project_ledger('support_rag', create=False)\n"
        "oloproof.diagnose(ledger, 'latest', intervention='gold-context',\n"
        "                  criterion='answer_correct')\n"
        "ledger.close()\n"
        "evaluate('b')\n"
    )
    assert _python(script, tmp_path, env) == [{"project": "b", "passed": 3, "redacted": 0}]
    assert b"[redacted]" not in stored_bytes(b)
