"""`runs --json` gives each run the exit code `inspect --json` gives it, decided or not.

The probe: a run killed before its gate was decided read `exit_code: null` in `runs --json`
and `3` in `inspect --json` (UNDECIDED: a policy and no decision, which blocks, as nothing
shows the release is safe); a run stopped by bad input read `null` and `2` (what `oloproof run`
exited with for it), and a run without a policy `null` and `0`. The same run, two answers, and
a CI script reading `runs --json` for the exit code got none for a run that blocks. Now `runs`
takes its exit code from the same function the run's report does.
"""

from __future__ import annotations

import json
import signal
from pathlib import Path
from typing import Any

from tests.support import (
    HELD_TOY_APP,
    HELD_TOY_CONFIG,
    TOY_CONFIG,
    oloproof,
    start_run,
    toy_project,
    write_project,
)

POLICY = "version: 1\nrules:\n  - {id: floor, metric: echo, min: 0.05}\n"
STOPPING_APP = """
from oloproof import current_case, system

@system(name="toy", version="1", records=("retrieval/v1",))
def run(case):
    if case["q"] == "bad":
        current_case().retrieval({"candidates": [{"score": 1.0}]})
    return {"answer": case["q"]}
"""


def _both(root: Path, run_id: str) -> tuple[dict[str, Any], dict[str, Any]]:
    listed = json.loads(oloproof("runs", "--json", cwd=root).out)
    (row,) = [r for r in listed if r["run_id"] == run_id]
    report = json.loads(oloproof("inspect", run_id, "--json", cwd=root).out)
    return row, report


def _cases(*questions: str) -> list[dict[str, Any]]:
    return [
        {"id": f"c{i}", "input": {"q": q}, "expected": {"answer": q}}
        for i, q in enumerate(questions)
    ]


def test_a_run_killed_before_its_gate_lists_the_exit_code_its_report_gives(
    tmp_path: Path,
) -> None:
    root = write_project(
        tmp_path / "p",
        app=HELD_TOY_APP,
        config=HELD_TOY_CONFIG,
        policy=POLICY,
        cases=_cases(*(f"q{i}" for i in range(4))),
    )
    proc = start_run(root, "holding\n", env={"HOLD": "q2"})
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=60)
    (run_id,) = [r["run_id"] for r in json.loads(oloproof("runs", "--json", cwd=root).out)]
    row, report = _both(root, run_id)
    assert (report["decision_state"], report["exit_code"]) == ("UNDECIDED", 3)
    # Was: None.
    assert (row["decision_state"], row["gate"], row["exit_code"]) == ("UNDECIDED", None, 3)


def test_a_stopped_run_lists_the_exit_code_the_run_ended_with(tmp_path: Path) -> None:
    root = write_project(
        tmp_path / "p",
        app=STOPPING_APP,
        config=HELD_TOY_CONFIG,
        policy=POLICY,
        cases=_cases("a", "bad"),
    )
    stopped = oloproof("run", cwd=root)
    assert stopped.code == 2, stopped.out + stopped.err
    (run_id,) = [r["run_id"] for r in json.loads(oloproof("runs", "--json", cwd=root).out)]
    row, report = _both(root, run_id)
    assert (report["execution_state"], report["exit_code"]) == ("STOPPED", 2)
    # Was: None.
    assert (row["execution_state"], row["gate"], row["exit_code"]) == ("STOPPED", None, 2)


def test_a_run_without_a_policy_lists_exit_code_0(tmp_path: Path) -> None:
    root = toy_project(
        tmp_path / "p", config=TOY_CONFIG.replace("policy: policy.yaml\n", ""), cases=2
    )
    done = oloproof("run", cwd=root)
    assert done.code == 0, done.out + done.err
    (run_id,) = [r["run_id"] for r in json.loads(oloproof("runs", "--json", cwd=root).out)]
    row, report = _both(root, run_id)
    assert (report["decision_state"], report["exit_code"]) == ("NO_POLICY", 0)
    # Was: None.
    assert (row["decision_state"], row["gate"], row["exit_code"]) == ("NO_POLICY", None, 0)


def test_a_decided_run_lists_its_gate_s_exit_code(tmp_path: Path) -> None:
    root = toy_project(tmp_path / "p", policy=POLICY, cases=3)
    assert oloproof("run", cwd=root).code == 0
    (run_id,) = [r["run_id"] for r in json.loads(oloproof("runs", "--json", cwd=root).out)]
    row, report = _both(root, run_id)
    assert (row["gate"], row["exit_code"]) == ("PASS", report["exit_code"]) == ("PASS", 0)
