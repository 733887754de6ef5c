"""``latest`` never names an older run than the newest top-level run that finished, even after a
process died at the worst moment: a run killed (SIGKILL, a power cut) right after the commit that
stores its end record moves ``latest`` in that same commit, so the ref on disk names it. The kill
comes from a wrapper script that runs the real CLI with the ledger's commit wrapped to SIGKILL
the process as soon as the commit holding the run's end returns: the one deterministic way to
stop a process exactly there.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from tests.support import copy_example, oloproof

from ledger import open_ledger
from oloproof import events as ev

KILL_AFTER_END = """
import os, signal, sys
from ledger._writes import _Writer

commit = _Writer._commit

def commit_then_die(self, pending):
    added = commit(self, pending)
    if any(b"oloproof.run_end" in data for data in pending.data.values()):
        os.kill(os.getpid(), signal.SIGKILL)
    return added

_Writer._commit = commit_then_die
sys.argv = ["oloproof", "run"]
from oloproof.cli.main import command
sys.exit(command())
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = copy_example("support_rag", tmp_path)
    done = oloproof("run", cwd=root)
    assert done.code == 3, done.err  # the example's gate blocks
    return root


def _runs(root: Path) -> list[tuple[str, str]]:
    """(run id, address) of each run event, in the order they were recorded."""
    with open_ledger(root / ".oloproof") as ledger:
        return [(e.body["run_id"], a) for a, e in ledger.events(ev.RUN)]


def _latest_ref(root: Path) -> str | None:
    with open_ledger(root / ".oloproof") as ledger:
        return ledger.get_ref("latest")


def test_a_run_killed_after_its_end_is_committed_is_latest(project: Path, tmp_path: Path) -> None:
    script = tmp_path / "kill_after_end.py"
    script.write_text(KILL_AFTER_END)
    killed = subprocess.run(
        [sys.executable, str(script)], cwd=project, capture_output=True, text=True, timeout=120
    )
    assert killed.returncode == -9, killed.stderr
    _, (second_id, second) = _runs(project)
    assert _latest_ref(project) == second
    shown = oloproof("inspect", "latest", cwd=project)
    assert shown.code == 0, shown.err
    assert shown.lines[0] == f"Run {second_id} [DECIDED/COMPLETE]"
