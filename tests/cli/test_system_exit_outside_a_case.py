"""A ``sys.exit`` the system's code makes run outside any case does not end a run green.

The probe: an async system whose first case sets a SIGTERM handler that ends quietly
(``sys.exit(0)``, as servers do), sent SIGTERM while a later case waits. The handler ran in the
event loop's own wait, its ``SystemExit`` unwound the run, which was recorded as interrupted
(its gate BLOCK), and the command exited 0 without a word. A ``SystemExit`` that leaves the run's
work can only be the code it runs ending it outside a case (a case's own only errors that
case), so it now stops the run in one sentence, exit 2, the run left interrupted.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from tests.support import oloproof, write_project

APP = """
import asyncio
import signal
import sys

from oloproof import system


def holding():
    sys.stderr.write("holding\\n")
    sys.stderr.flush()


@system(name="toy", version="1")
async def run(case):
    if case["q"] == "q1":
        signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(0))
    if case["q"] == "q2":
        # Said once the case waits (the loop's next turn): the signal lands in the loop's own
        # code, not in the case's, where its SystemExit would only error the case.
        asyncio.get_running_loop().call_soon(holding)
        await asyncio.Event().wait()
    return {"answer": case["q"]}
"""
CONFIG = """\
system: {name: toy, version: "1", callable: "app:run"}
concurrency: 1
evaluators:
  - {type: contains, criterion: echo, field: answer, expected_field: answer}
policy: policy.yaml
"""
POLICY = "version: 1\nrules:\n  - {id: floor, metric: echo, min: 0.5}\n"


def test_a_handler_s_sys_exit_stops_the_run_in_one_sentence(tmp_path: Path) -> None:
    cases = [
        {"id": f"c{i}", "input": {"q": f"q{i}"}, "expected": {"answer": "other"}} for i in range(4)
    ]
    root = write_project(tmp_path / "p", app=APP, config=CONFIG, policy=POLICY, cases=cases)
    proc = subprocess.Popen(
        [sys.executable, "-m", "oloproof", "run"],
        cwd=root,
        env=dict(os.environ),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stderr is not None
        assert proc.stderr.readline() == "holding\n"
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert (proc.returncode, out) == (2, ""), out + err
    assert err == (
        "error: the code the work runs ended it outside any case: it called sys.exit(0) (in a "
        "signal handler it set, or a callback it scheduled); what had finished is recorded (a "
        "run is left interrupted: oloproof run --resume RUN_ID finishes it)\n"
    )
    (listed,) = oloproof("runs", cwd=root).lines
    assert "INTERRUPTED" in listed, listed
