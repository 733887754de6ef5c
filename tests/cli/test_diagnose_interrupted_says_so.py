"""`oloproof diagnose` stopped by Ctrl-C (or SIGTERM) says what it left recorded, through the
real CLI.

The probe: SIGINT while a child run's generate was running ended `oloproof diagnose` with exit
130 and not a word on stderr (typer turns a KeyboardInterrupt into its own silent exit 130),
SIGTERM likewise with 130, not 143, where `oloproof run` says what happened and how to finish.
The diagnosis was recorded as interrupted all along; nothing said so, or where. Now diagnose
names it in one sentence and exits 130 (143 on SIGTERM), as run does.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from tests.support import copy_example, oloproof

# The example's generate, held on the environment's HOLD (saying "holding" on stderr): a
# diagnosis's child run to interrupt. Read at call time, so the code is the run's own.
HELD = """

import os as _os
import sys as _sys
import time as _time

_generate = SupportRag.generate


def _held(self, input, context):
    if _os.environ.get("HOLD"):
        _sys.stderr.write("holding\\n")
        _sys.stderr.flush()
        _time.sleep(3600)
    return _generate(self, input, context)


SupportRag.generate = _held
"""


GOLD = ("--intervention", "gold-context", "--criterion", "answer_correct")


@pytest.mark.parametrize(("stop", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_an_interrupted_diagnosis_names_what_it_recorded(
    tmp_path: Path, stop: signal.Signals, code: int
) -> None:
    root = copy_example("support_rag", tmp_path)
    with (root / "app.py").open("a") as app:
        app.write(HELD)
    assert oloproof("run", cwd=root).code == 3  # the example's gate blocks
    proc = subprocess.Popen(
        [sys.executable, "-m", "oloproof", "diagnose", "latest", *GOLD],
        cwd=root,
        env={**os.environ, "HOLD": "1"},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stderr is not None
        assert proc.stderr.readline() == "holding\n"
        proc.send_signal(stop)
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == code, out + err  # was 130 either way
    (said,) = [line for line in err.splitlines() if line != "holding"]  # was none
    found = re.fullmatch(
        r"interrupted: the diagnosis is recorded as interrupted: (sha256:[0-9a-f]{64}); "
        r"diagnose the run again for a complete one",
        said,
    )
    assert found, said
    shown = oloproof("inspect", found[1], cwd=root)
    assert shown.code == 0, shown.err
    assert shown.lines[0].startswith("Interrupted: the gold context run run_"), shown.out
