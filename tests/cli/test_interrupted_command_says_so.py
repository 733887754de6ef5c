"""A command interrupted by Ctrl-C says so, whichever command it is.

The probe: `oloproof calibrate` waiting on a judge that does not answer, sent SIGINT, ended
with exit 130 and not a word on stderr: typer turns a KeyboardInterrupt raised inside a command
into its own silent exit 130, before the CLI's handler that prints `interrupted` could see it
(`run` and `diagnose` catch theirs themselves). Every command now says `interrupted`.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.support import REPO, serving_judge_gate

from oloproof.testing import hang


def test_calibrate_interrupted_while_the_judge_is_silent(tmp_path: Path) -> None:
    with serving_judge_gate(tmp_path / "p") as (root, server):
        server.script(*[hang(60)] * 8)
        proc = subprocess.Popen(
            [sys.executable, "-m", "oloproof", "calibrate", "--evaluator", "groundedness",
             "--labels", "labels.jsonl"],
            cwd=root,
            env={**os.environ, "JUDGE_GATE_KEY": "test-key", "PYTHONPATH": str(REPO / "src")},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )  # fmt: skip
        try:
            deadline = time.monotonic() + 60
            while not server.requests and time.monotonic() < deadline:
                time.sleep(0.05)
            assert server.requests, "calibrate never called the judge"
            proc.send_signal(signal.SIGINT)
            out, err = proc.communicate(timeout=60)
        finally:
            proc.kill()
    assert proc.returncode == 130, (out, err)
    assert err.splitlines()[-1:] == ["interrupted"], err
