"""An interrupted run's ``--resume`` hint names that run, whatever else runs beside it.

The probe: two ``oloproof run`` processes in one project, A started first, B second; A is
interrupted (Ctrl-C) while B still executes. A printed ``finish with: oloproof run --resume``
and B's id, taken as the newest run event of the ledger: the command as printed resumed
nothing of A (B was still being written, then complete), and A's own id was printed nowhere.
"""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path

from tests.support import HOLDING_APP, SERIAL_TOY_CONFIG, oloproof, start_run, write_project

APP = (
    HOLDING_APP
    + """
import os

@system(name="toy", version="1")
def run(case):
    if case["q"] == "q1":
        hold(os.environ["MARK"])
    return {"answer": case["q"]}
"""
)


def test_the_resume_hint_names_the_interrupted_run(tmp_path: Path) -> None:
    root = write_project(
        tmp_path / "p",
        app=APP,
        config=SERIAL_TOY_CONFIG,
        policy="version: 1\nrules: []\n",
        cases=[
            {"id": f"c{i}", "input": {"q": f"q{i}"}, "expected": {"answer": f"q{i}"}}
            for i in range(3)
        ],
    )
    first = start_run(root, "A\n", {"MARK": "A"})
    second = start_run(root, "B\n", {"MARK": "B"})  # its run event is written after A's
    try:
        first.send_signal(signal.SIGINT)
        time.sleep(1)  # the signal is taken before the case it interrupted ends
        (root / "release").touch()
        _, err = first.communicate(timeout=60)
        second.communicate(timeout=60)
    finally:
        first.kill()
        second.kill()
    assert first.returncode == 130, err
    runs = {
        r["execution_state"]: r["run_id"]
        for r in json.loads(oloproof("runs", "--json", cwd=root).out)
    }
    interrupted = runs["INTERRUPTED"]
    hint = f"interrupted: finished cases are kept; finish with: oloproof run --resume {interrupted}"
    assert err.splitlines()[-1] == hint

    # The command as printed finishes that run (its held case c1 errors: "release" is there).
    resumed = oloproof("run", "--resume", interrupted, cwd=root, env={"MARK": "A"})
    assert resumed.code == 0, resumed.err
    assert resumed.lines[0] == f"Run {interrupted} [NO_POLICY/PARTIAL]"
