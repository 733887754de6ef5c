"""A Ctrl-C sent to a ledger-reading command's own process stops it.

``inspect``, ``runs``, ``export``, ``compare``, ``verify`` and the ``ledger`` commands run in a
child process (``oloproof.cli.guard``); the process started ignored SIGINT, leaving it to the
child, which a terminal's Ctrl-C reaches through the process group. A SIGINT sent to the
process alone (``kill -INT PID``, a supervisor stopping the command it started) reached no one.
The probe: ``inspect RUN --failures`` printing 3,000 cases into a pipe, sent SIGINT once it had
printed its first line; it printed every case and exited 0, as if never asked to stop. Now the
SIGINT is passed on to the child, which stops as on a Ctrl-C (``interrupted``, exit 130); a
terminal's Ctrl-C, which reaches both, still stops it once.
"""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from tests.support import oloproof, write_project

APP = """
from oloproof import system

@system(name="toy", version="1")
def run(case):
    return {"answer": "wrong"}
"""
CONFIG = """\
system: {name: toy, version: "1", callable: "app:run"}
concurrency: 8
evaluators:
  - {type: contains, criterion: echo, field: answer, expected_field: answer}
"""


@pytest.mark.parametrize("group", [False, True], ids=["process", "terminal"])
def test_sigint_stops_a_read_command(tmp_path: Path, group: bool) -> None:
    """Sent to the process alone, or to its process group as a terminal's Ctrl-C is."""
    # More printed than a pipe holds: the command cannot finish before the test reads it all.
    cases = [
        {"id": f"c{i}", "input": {"q": f"x{i}"}, "expected": {"answer": f"x{i}"}}
        for i in range(3000)
    ]
    root = write_project(tmp_path / "p", app=APP, config=CONFIG, policy="", cases=cases)
    assert oloproof("run", cwd=root).code == 0
    proc = subprocess.Popen(
        [sys.executable, "-m", "oloproof", "inspect", "latest", "--failures"],
        cwd=root,
        env=dict(os.environ),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=group,
    )
    try:
        assert proc.stdout is not None and proc.stderr is not None
        first = proc.stdout.readline()  # printing: the child runs the command
        assert first.startswith(b"3000 of 3000 cases failed"), first
        if group:
            os.killpg(proc.pid, signal.SIGINT)
        else:
            proc.send_signal(signal.SIGINT)
        # Nothing more is read from stdout until the command has said it stopped: it cannot
        # finish (and so miss the signal) while the pipe is full. A minute bounds the wait of
        # a command that never stops, which would otherwise wait for its reader for ever.
        said, _, _ = select.select([proc.stderr], [], [], 60)
        assert said, "the command neither stopped nor said so"
        assert proc.stderr.readline() == b"interrupted\n"
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 130, err
    assert err == b"", err
    assert out.count(b"\nc") < len(cases), "every case was printed"
