"""Ledgers written by earlier releases, read and extended by this one.

- The first release (e933631) gave the cases of a diagnosis's child runs no dataset line: each
  of their case results holds ``"line": 0``, where lines are counted from 1. Read as a line,
  those results were one case written four times: ``inspect`` of a child run blamed the
  indexes, and ``verify`` reported every case after the first as a second writer's.
- Releases up to 0152702 fingerprinted code without what its modules run at import. A module
  that set the model at import (``os.environ["MODEL_NAME"] = ...``) and later stopped doing it
  left their key unchanged, and this release, which finds no such statement in the new code,
  made that same key again: its run reused the answers made under the old setting. A key now
  says which walk made it, so what an earlier release cached executes again. A run such a
  release left interrupted can therefore not be resumed (its cases were keyed otherwise): that
  is said as it is, not as a change to the user's system.

The stand-ins below run today's CLI with the one thing that release did otherwise put back, and
each was checked against what that release wrote for the same project (see each).
"""

from __future__ import annotations

import re
import signal
from pathlib import Path

from tests.support import GOLD_DIAGNOSIS, copy_example, oloproof, start_run, write_project

# The first release built a child run's cases without their line (``diagnose._case_of``): the
# case results it wrote for them, run with ``python -m oloproof`` of e933631 on support_rag,
# each hold ``"line": 0``.
_FIRST_RELEASE_DIAGNOSE = """
import dataclasses

from oloproof.diagnosis import run

_item = run._ParentCases._item
run._ParentCases._item = lambda self, i: dataclasses.replace(_item(self, i), line=0)

from oloproof.cli.main import main

main()
"""


def test_a_first_release_diagnosis_s_child_runs_read_case_by_case(tmp_path: Path) -> None:
    root = copy_example("support_rag", tmp_path)
    assert oloproof("run", cwd=root).code == 3
    made = oloproof(
        "diagnose", "latest", *GOLD_DIAGNOSIS, cwd=root, command=("-c", _FIRST_RELEASE_DIAGNOSE)
    )
    assert made.code == 0, made.err
    children = re.findall(r"run_[0-9A-Z]{26}", made.out.split("Child runs: ")[1].splitlines()[0])
    assert len(children) == 2

    # What that release's own `inspect` printed for the two child runs it made.
    evidence = []
    for child in children:
        shown = oloproof("inspect", child, cwd=root)
        assert shown.code == 0, shown.err
        row = next(line for line in shown.lines if line.startswith("│ answer_correct "))
        evidence.append(row.split("│")[4].strip())
    assert evidence == [
        "3 / 4 observed · 0 missing · 0 excluded",
        "0 / 4 observed · 0 missing · 0 excluded",
    ]

    verified = oloproof("verify", cwd=root)
    assert verified.code == 0, verified.out
    assert not any(line.startswith("StaleSummary") for line in verified.lines)


# Releases up to 0152702 had no ``fingerprint._toplevel``: their walk read no statement a module
# runs at import. For the project below, 0152702's `runs` lists the run as ``code cefa67f8``,
# and so does this stand-in's (today's gives f3c0537b).
_WALK_1_RUN = """
from oloproof import fingerprint
from oloproof.fingerprint._walk import Walk

Walk._top_levels = lambda self: False
fingerprint.WALK = 1

from oloproof.cli.main import main

main()
"""

_ENV_APP = """
import os

import settings
from oloproof import system


@system(name="s", version="1")
def answer(case):
    return {"answer": os.environ.get("MODEL_NAME", "none")}
"""


def test_answers_an_earlier_release_cached_are_not_reused(tmp_path: Path) -> None:
    root = write_project(
        tmp_path / "p",
        app=_ENV_APP,
        config=(
            'system: {name: s, version: "1", callable: app:answer}\ndataset: cases.jsonl\n'
            "evaluators:\n  - {type: contains, criterion: answered, field: answer, "
            "expected_field: answer}\n"
        ),
        policy="version: 1\nrules:\n  - {id: a, metric: answered, min: 0.5}\n",
        cases=[
            {"id": f"c{i}", "input": {"q": f"q{i}"}, "expected": {"answer": "gpt-a"}}
            for i in range(3)
        ],
    )
    (root / "settings.py").write_text('import os\n\nos.environ["MODEL_NAME"] = "gpt-a"\n')
    before = oloproof("run", cwd=root, command=("-c", _WALK_1_RUN))
    assert "│ answered │ 100.0%" in before.out, before.out + before.err

    (root / "settings.py").write_text("import os\n\nVALUE = 1\n")  # no longer sets the model
    planned = oloproof("run", "--dry-run", cwd=root)
    assert (
        "an earlier release of oloproof fingerprinted it, reading the code otherwise" in planned.out
    ), planned.out
    after = oloproof("run", cwd=root)
    assert "Cache: execution 0 hit/3 miss; judgment 0 hit/3 miss" in after.lines, after.out
    assert "│ answered │ 0.0%" in after.out


_HOLDING_APP = """
import sys
import time

from oloproof import system


@system(name="s", version="1")
def answer(case):
    if case["q"] == "q2":
        print("holding", file=sys.stderr, flush=True)
        time.sleep(600)
    return {"answer": case["q"]}
"""


def test_a_run_an_earlier_release_left_interrupted_is_refused_for_what_it_is(
    tmp_path: Path,
) -> None:
    root = write_project(
        tmp_path / "p",
        app=_HOLDING_APP,
        config=(
            'system: {name: s, version: "1", callable: app:answer}\ndataset: cases.jsonl\n'
            "concurrency: 1\nevaluators:\n  - {type: contains, criterion: answered, "
            "field: answer, expected_field: answer}\n"
        ),
        policy="version: 1\nrules:\n  - {id: a, metric: answered, min: 0.5}\n",
        cases=[
            {"id": f"c{i}", "input": {"q": f"q{i}"}, "expected": {"answer": f"q{i}"}}
            for i in range(4)
        ],
    )
    proc = start_run(root, "holding\n", command=("-c", _WALK_1_RUN))
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=60)
    run_id = oloproof("runs", cwd=root).lines[0].split()[0]

    resumed = oloproof("run", "--resume", run_id, cwd=root)
    assert (resumed.code, resumed.out) == (2, "")
    assert resumed.err == (
        f"error: {run_id} was started by an earlier release of oloproof, which read the system's "
        "code otherwise to identify it, so whether the code changed since cannot be told; start "
        "a new run instead: oloproof run\n"
    )
