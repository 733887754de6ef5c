"""A run finished by two writers (two copies of a project each resumed it, and one's archive was
imported into the other): its reports count each case's first result, and the gate they show is
the decision made on those results, not the other writer's made on its own."""

from __future__ import annotations

import shutil
import signal
from pathlib import Path

from tests.support import answered_project, interrupt_run, oloproof, runs_fields

# q3 holds the first go until it is interrupted; with WRONG set, q3 to q5 answer wrongly.
APP = """
import os, sys, time

def answer(case):
    if os.environ.get("HOLD") and case["q"] == "q3":
        sys.stderr.write("waiting\\n")
        sys.stderr.flush()
        time.sleep(60)
    if os.environ.get("WRONG") and case["q"] in ("q3", "q4", "q5"):
        return {"answer": "no"}
    return {"answer": case["q"]}
"""


def test_the_gate_shown_is_the_one_decided_on_the_results_counted(tmp_path: Path) -> None:
    mine = answered_project(tmp_path / "mine", APP, cases=6)
    code, out, err = interrupt_run(mine, "waiting\n", signal.SIGINT, {"HOLD": "1"}, settle=0.3)
    assert code == 130, out + err
    run_id = err.split("--resume ")[1].split()[0]
    theirs = tmp_path / "theirs"
    shutil.copytree(mine, theirs)

    assert oloproof("run", "--resume", run_id, cwd=mine).code == 0  # 6 of 6: PASS
    other = oloproof("run", "--resume", run_id, cwd=theirs, env={"WRONG": "1"})
    assert other.code == 3, other.err  # q3 wrong at least: the floor is not shown
    archive = tmp_path / "theirs.oloarchive"
    assert oloproof("ledger", "export", run_id, "--to", str(archive), cwd=theirs).code == 0
    assert oloproof("ledger", "import", str(archive), cwd=mine).code == 0

    fields = runs_fields(mine, run_id)
    assert fields[3:5] == ["COMPLETE", "PASS (exit 0)"], fields
    shown = oloproof("inspect", run_id, cwd=mine)
    assert shown.code == 0, shown.err
    assert shown.lines[1] == "Gate: PASS (exit 0)"
    assert "6 / 6 observed · 0 missing · 0 excluded" in shown.out
    checked = oloproof("verify", cwd=mine)
    assert checked.code == 1  # the other writer's results and decision are named
    assert "already holds a result for case 'q3'" in checked.out
    assert "decision: gate.blocked: stored True, re-derived False" in checked.out
