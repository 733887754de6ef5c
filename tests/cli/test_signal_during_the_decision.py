"""A Ctrl-C or SIGTERM that arrives while a run writes its end and decision stops the command.

The probe: a system whose module sends its own process SIGINT (or SIGTERM) as the run begins
its end record and decision, after every case is stored. The run went on to print its report
and exit with the gate's code, 0 for a pass: the signal was left to the event loop, which never
ran again (the decision is written without a wait), and the loop's handlers were then taken
away with the signal unseen. A CI job cancelled at that moment read a green step. Now the
command ends as an interrupted one does (``interrupted``, exit 130, 143 for SIGTERM), and what
it stored holds: the run is complete and decided, as ``oloproof runs`` says.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from tests.support import TOY_APP, oloproof, toy_project

# Sends the signal named in SIGNAL as the run's end starts being written (the module function
# the runner calls for it, wrapped), then writes it as ever. Interrupting a run's own code at a
# chosen moment needs a hand inside the process; what is tested is the real signal's handling.
APP = (
    TOY_APP
    + """
import os
import signal

import oloproof.runner as runner

_finish = runner._finish


def _signalled(*args, **kwargs):
    os.kill(os.getpid(), getattr(signal, os.environ["SIGNAL"]))
    return _finish(*args, **kwargs)


runner._finish = _signalled
"""
)
PASSING = "version: 1\nrules:\n  - {id: floor, metric: echo, min: 0.2}\n"


@pytest.mark.parametrize(("name", "code"), [("SIGINT", 130), ("SIGTERM", 143)])
def test_a_signal_during_the_decision_is_not_a_pass(tmp_path: Path, name: str, code: int) -> None:
    root = toy_project(tmp_path / "p", policy=PASSING, cases=3)
    (root / "app.py").write_text(APP)
    done = oloproof("run", cwd=root, env={"SIGNAL": name})
    assert done.code == code, (done.out, done.err)
    [run] = json.loads(oloproof("runs", "--json", cwd=root).out)
    # What was stored before the signal was honoured is whole: the run ended and was decided.
    assert (run["execution_state"], run["exit_code"]) == ("COMPLETE", 0), run
    assert done.err.splitlines()[-1] == (
        f"interrupted: run {run['run_id']} is complete and decided (oloproof inspect "
        f"{run['run_id']} shows it)"
    )
    assert done.out == ""


def test_evaluate_signalled_during_the_decision_raises(tmp_path: Path) -> None:
    """``oloproof.evaluate`` returned the passing report as if no Ctrl-C had come; it now
    raises ``KeyboardInterrupt``, noting that the run is complete."""
    root = toy_project(tmp_path / "p", policy=PASSING, cases=3)
    (root / "app.py").write_text(APP)
    done = subprocess.run(
        [sys.executable, "-c", "import oloproof; print(oloproof.evaluate().exit_code)"],
        cwd=root,
        env={**os.environ, "SIGNAL": "SIGINT"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    [run] = json.loads(oloproof("runs", "--json", cwd=root).out)
    assert done.stdout == ""
    assert done.stderr.splitlines()[-2:] == [
        "KeyboardInterrupt",
        f"{run['run_id']} is complete; its report is stored",
    ]
