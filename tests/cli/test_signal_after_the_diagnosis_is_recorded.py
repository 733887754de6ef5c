"""A Ctrl-C that stops ``oloproof diagnose`` after its diagnosis is recorded says so.

The probe: the support_rag example's diagnosis, sent SIGINT by its own process once every
child run had finished and the diagnosis was recorded, complete (the wrapped function below
records it and returns). The command said ``interrupted: no diagnosis was recorded; diagnose
the run again for a complete one``, less than the ledger held: ``runs --all`` lists the
diagnosis with its child runs. Now it names the complete diagnosis and advises nothing more.
"""

from __future__ import annotations

import re
from pathlib import Path

from tests.support import copy_example, oloproof

# With SIGNAL set, records the diagnosis as ever, lets the loop run (it counts as woken: the signal is left to
# it), then sends the process SIGINT before the command ends. A hand inside the process picks
# the moment; what is tested is the real signal's handling.
SIGNALLED = """

import asyncio as _asyncio
import os as _os
import signal as _signal

import oloproof.diagnosis.run as _diagnosis

_run_children = _diagnosis._run_children


async def _signalled(*args, **kwargs):
    recorded = await _run_children(*args, **kwargs)
    if _os.environ.get("SIGNAL"):
        await _asyncio.sleep(0)
        _os.kill(_os.getpid(), _signal.SIGINT)
    return recorded


_diagnosis._run_children = _signalled
"""


def test_an_interrupt_after_the_diagnosis_names_it_complete(tmp_path: Path) -> None:
    root = copy_example("support_rag", tmp_path)
    with (root / "app.py").open("a") as app:
        app.write(SIGNALLED)
    assert oloproof("run", cwd=root).code == 3  # the example's gate blocks
    done = oloproof(
        "diagnose", "latest", "--intervention", "gold-context", "--criterion", "answer_correct",
        cwd=root, env={"SIGNAL": "1"},
    )  # fmt: skip
    assert done.code == 130, done.out + done.err
    found = re.fullmatch(
        r"interrupted: the diagnosis is recorded as complete: (sha256:[0-9a-f]{64})\n", done.err
    )
    assert found, done.err
    shown = oloproof("inspect", found[1], cwd=root)
    assert shown.code == 0, shown.err
    assert "Interrupted" not in shown.out and "Stopped" not in shown.out, shown.out
