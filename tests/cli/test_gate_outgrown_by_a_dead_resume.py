"""A gate that passed a rule it could not decide is not shown once a resume wrote the cases
that could decide it, through the real CLI.

The probe: 40 cases under ``min: 0.5`` with ``block_on: [FAIL]``. The run is interrupted
(Ctrl-C) after 5 cases, all right: with the 35 not run counted as missing the rule is
INSUFFICIENT_EVIDENCE, which that ``block_on`` lets through, so the gate recorded reads PASS.
Then ``run --resume`` answers the next 30 cases wrong and its process ends at C level
(``libc._exit(0)`` in the system: exit 0, nothing printed, no end record and no new decision).
On the 35 cases the run now holds the rule FAILs whatever the 5 others would say (10 of 40 at
best), yet ``runs`` listed ``INTERRUPTED  PASS (exit 0)``, and ``inspect`` and the viewer showed
``Gate: PASS (exit 0)`` under a line saying that counting the 30 as missing "cannot make it more
lenient". Counting a case as missing keeps a rule's PASS and FAIL, but it is what made this
rule INSUFFICIENT_EVIDENCE, and ``block_on`` let that through. Now such a gate is not shown:
the run is UNDECIDED (exit 3), and says why. A gate that blocked, or whose every rule it let
through is one the cases since cannot change, is still shown
(tests/cli/test_runs_after_a_killed_resume.py).
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.support import (
    HELD_TOY_CONFIG,
    interrupted_while_held,
    oloproof,
    runs_fields,
    write_project,
)
from tests.view.support import fetch, serving

# HOLD: the case held (saying "holding" on stderr) until a file `release` appears; EXIT: the
# case on which the process ends at C level, as a C library calling _exit would end it, once
# what finished before is written (a run waiting on its system writes it within seconds);
# WRONG: every answer wrong.
APP = """
import ctypes
import os
import sys
import time
from pathlib import Path

from oloproof import system

HERE = Path(__file__).parent


@system(name="toy", version="1")
def run(case):
    if case["q"] == os.environ.get("HOLD"):
        sys.stderr.write("holding\\n")
        sys.stderr.flush()
        while not (HERE / "release").exists():
            time.sleep(0.05)
    if os.environ.get("EXIT"):
        time.sleep(0.05)  # a run that waits on its system writes what finished as it goes
    if case["q"] == os.environ.get("EXIT"):
        time.sleep(10)
        ctypes.CDLL(None)._exit(0)
    return {"answer": "wrong" if os.environ.get("WRONG") else case["q"]}
"""
POLICY = "version: 1\nblock_on: [FAIL]\nrules:\n  - {id: floor, metric: echo, min: 0.5}\n"
NO_GATE = (
    "No gate: the gate decided on {decided_on} of the 35 cases finished let INSUFFICIENT_EVIDENCE "
    "through (block_on does not list it), and a --resume finished {since} more and ended before "
    "deciding again: they could make a rule FAIL; resuming decides on every case"
)


def _finished(root: Path, run_id: str) -> str:
    """``inspect``'s line saying how many cases the run holds."""
    return oloproof("inspect", run_id, cwd=root).lines[1]


def test_a_passing_gate_a_dead_resume_outgrew_is_not_shown(tmp_path: Path) -> None:
    cases = (
        {"id": f"c{i}", "input": {"q": f"q{i}"}, "expected": {"answer": f"q{i}"}} for i in range(40)
    )
    root = write_project(
        tmp_path / "p", app=APP, config=HELD_TOY_CONFIG, policy=POLICY, cases=cases
    )
    run_id = interrupted_while_held(root, "holding\n", {"HOLD": "q5"})
    # Decided on what it had, the cases not run counted as missing (as designed). The held
    # case may be recorded as errored by the interruption, or not at all.
    let_through = "block_on let through rule floor: INSUFFICIENT_EVIDENCE"
    assert runs_fields(root, run_id)[3:5] == ["INTERRUPTED", f"PASS (exit 0; {let_through})"]

    resumed = oloproof("run", "--resume", run_id, cwd=root, env={"EXIT": "q35", "WRONG": "1"})
    # What a C-level exit gives: nothing said, exit 0. Every later command must not pass it.
    assert (resumed.code, resumed.out) == (0, ""), resumed.err
    assert _finished(root, run_id).startswith("35 of 40 cases finished; ")

    fields = runs_fields(root, run_id)
    # Was: PASS (exit 0).
    assert fields[3:5] == ["INTERRUPTED", "no gate (not decided)"]
    report = json.loads(oloproof("inspect", run_id, "--json", cwd=root).out)
    assert (report["decision_state"], report["gate_label"], report["exit_code"]) == (
        "UNDECIDED",
        None,
        3,
    )
    decided_on = report["decided_on"]
    assert decided_on in (5, 6) and report["rules"] == []
    no_gate = NO_GATE.format(decided_on=decided_on, since=35 - decided_on)
    shown = oloproof("inspect", run_id, cwd=root)
    assert shown.lines[2] == no_gate, shown.out
    assert "Gate: PASS" not in shown.out
    (row,) = [r for r in json.loads(oloproof("runs", "--json", cwd=root).out)]
    assert (row["decision_state"], row["gate"]) == ("UNDECIDED", None)
    with serving(root) as url:
        page = fetch(f"{url}/runs/{run_id}")[1]
    assert no_gate in page and "PASS (exit 0)" not in page

    # Resumed to its end, the run is decided on every case: the rule FAILs.
    finished = oloproof("run", "--resume", run_id, cwd=root, env={"WRONG": "1"})
    assert finished.code == 1, finished.out + finished.err
    assert runs_fields(root, run_id)[3:5] == ["COMPLETE", "BLOCK (exit 1)"]
    assert oloproof("verify", cwd=root).code == 0
