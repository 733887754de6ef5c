"""``oloproof.evaluate`` interrupted says which run it leaves and how to finish it, as
``oloproof run`` does: the newest run in the ledger may be another process's."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.support import (
    HELD_TOY_APP,
    HELD_TOY_CONFIG,
    TOY_POLICY,
    oloproof,
    runs_fields,
    write_project,
)


def test_an_interrupted_evaluate_names_its_run_and_the_resume(tmp_path: Path) -> None:
    cases = [
        {"id": f"c{i}", "input": {"q": f"q{i}"}, "expected": {"answer": f"q{i}"}} for i in range(3)
    ]
    root = write_project(
        tmp_path / "p", app=HELD_TOY_APP, config=HELD_TOY_CONFIG, policy=TOY_POLICY, cases=cases
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", "import oloproof; oloproof.evaluate()"],
        cwd=root,
        env={**os.environ, "HOLD": "q1"},
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stderr is not None
        assert proc.stderr.readline() == "holding\n"
        proc.send_signal(signal.SIGINT)
        time.sleep(1)  # the signal is taken before the held case ends
        (root / "release").touch()
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    lines = err.splitlines()
    assert lines[-2] == "KeyboardInterrupt", err
    run_id = lines[-1].split()[0]
    assert lines[-1] == (
        f"{run_id} was interrupted; its finished cases are kept. Finish it with: "
        f"oloproof run --resume {run_id} (in {root})"
    )
    assert runs_fields(root, run_id)[3] == "INTERRUPTED"
    (root / "release").unlink()
    finished = oloproof("run", "--resume", run_id, cwd=root)
    assert finished.code == 3, finished.err  # the gate: three cases cannot prove the floor
    fields = runs_fields(root, run_id)
    assert fields[3] == "COMPLETE" and fields[5].startswith("3 of 3 answered"), fields
