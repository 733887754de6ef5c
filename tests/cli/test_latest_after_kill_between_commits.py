"""``latest`` never names an older run than the newest top-level run that finished, even after a
process died at the worst moment.

Two ways in:

- A run killed (SIGKILL, a power cut) right after the commit that stores its end record: the
  run moves ``latest`` in that same commit, so the ref on disk names it. The kill comes from a
  wrapper script that runs the real CLI with the ledger's commit wrapped to SIGKILL the process
  as soon as the commit holding the run's end returns: the one deterministic way to stop a
  process exactly there.
- A ledger such a kill left under an earlier release, which moved ``latest`` in a commit of its
  own: the newer run's end is stored, the ref still names the older run. That state is built
  through the library (the ref set back by hand, exactly what the lost commit leaves), and the
  commands that read ``latest`` must take the newer run anyway.
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


def test_latest_left_on_an_older_run_by_an_earlier_release_reads_the_newer(
    project: Path,
) -> None:
    again = oloproof("run", cwd=project)
    assert again.code == 3, again.err
    (first_id, first), (second_id, _) = _runs(project)
    with open_ledger(project / ".oloproof") as ledger:
        ledger.set_ref("latest", first)  # the move the killed process never committed
    shown = oloproof("inspect", "latest", cwd=project)
    assert (shown.code, shown.err) == (0, "")
    assert shown.lines[0] == f"Run {second_id} [DECIDED/COMPLETE]"
    verify = oloproof("verify", cwd=project)
    assert verify.code == 1, verify.out + verify.err
    assert verify.lines[0] == (
        f"MisnamedRef latest {first}: names run {first_id}, but run {second_id}, which started "
        "later, finished (the commands that read `latest` take it; the next run to finish "
        "moves the ref)"
    )
    compared = oloproof("compare", "latest", first_id, cwd=project)
    assert compared.code in (0, 1, 3), compared.err
    assert f" of {second_id} against {first_id} · " in compared.lines[0], compared.out
    archive = project / "latest.oloarchive"
    exported = oloproof("ledger", "export", "latest", "--to", str(archive), cwd=project)
    assert exported.code == 0, exported.err
    elsewhere = project.parent / "elsewhere"
    elsewhere.mkdir()
    assert oloproof("ledger", "import", str(archive), cwd=elsewhere).code == 0
    assert [run_id for run_id, _ in _runs(elsewhere)] == [second_id]
    kept = oloproof("ledger", "compact", "--keep", "latest", cwd=project)
    assert kept.code == 0, kept.err
    assert [run_id for run_id, _ in _runs(project)] == [second_id]
