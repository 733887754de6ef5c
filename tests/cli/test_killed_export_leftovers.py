"""What a killed `oloproof ledger export` leaves behind is removed by the next: through the real CLI.

The defect: an export writes its archive into a hidden temporary file beside the target and
renames it into place. Killed before the rename (SIGKILL, the out-of-memory killer), it left
that file (`.run.oloarchive.k3j9x_2a`, a random name, as large as the archive) for good: the
next export to the same path wrote a temporary file of its own and left the old one where it
was, so each killed export piled up another. Now the next export to that path removes the
leftovers of exports that are no longer running, and leaves alone the file of one that is
(it holds a lock on it while it writes).

The export is killed in a real `oloproof ledger export` process, just before its rename (a hook
in that process), so the test does not depend on timing.
"""

from __future__ import annotations

import fcntl
import subprocess
import sys
from pathlib import Path

from tests.support import oloproof, toy_project

# `oloproof ledger export latest --to ARCHIVE`, killed (SIGKILL) as it is about to rename the
# whole temporary file into place.
KILLED_EXPORT = """
import os, signal, sys
import ledger.archive
from oloproof.cli.main import main

class Dying:
    def __getattr__(self, name):
        return getattr(os, name)

    @staticmethod
    def replace(src, dst):
        os.kill(os.getpid(), signal.SIGKILL)

ledger.archive.os = Dying()
sys.argv = ["oloproof", "ledger", "export", "latest", "--to", sys.argv[1]]
main()
"""


def killed_export(root: Path, to: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", KILLED_EXPORT, str(to)], cwd=root, capture_output=True
    )
    assert done.returncode == 137, done.stderr  # 128 + SIGKILL, as the CLI reports it


def killed_once(tmp_path: Path) -> tuple[Path, Path]:
    """A project whose run's export to ``out/run.oloarchive`` (in ``tmp_path``) was killed once:
    the project and that archive's path."""
    root = toy_project(tmp_path / "p", cases=3)
    assert oloproof("run", cwd=root).code == 3
    out = tmp_path / "out"
    out.mkdir()
    target = out / "run.oloarchive"
    killed_export(root, target)
    return root, target


def test_the_next_export_removes_what_a_killed_one_left(tmp_path: Path) -> None:
    root, target = killed_once(tmp_path)
    out = target.parent
    (first,) = out.iterdir()
    assert first.name.startswith(".run.oloarchive.")
    killed_export(root, target)
    (second,) = out.iterdir()  # was: both, side by side
    assert second.name.startswith(".run.oloarchive.") and second != first

    done = oloproof("ledger", "export", "latest", "--to", str(target), cwd=root)
    assert done.code == 0, done.err
    assert [p.name for p in out.iterdir()] == ["run.oloarchive"]  # was: the leftovers kept


def test_an_export_still_writing_keeps_its_file(tmp_path: Path) -> None:
    root, target = killed_once(tmp_path)
    out = target.parent
    (leftover,) = out.iterdir()
    # Another export writing to the same path holds its file's lock: it is left to that export.
    with leftover.open("rb") as held:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        done = oloproof("ledger", "export", "latest", "--to", str(target), cwd=root)
        assert done.code == 0, done.err
        assert sorted(p.name for p in out.iterdir()) == sorted([leftover.name, target.name])
    # Once it is let go, the next export removes it.
    assert oloproof("ledger", "export", "latest", "--to", str(target), cwd=root).code == 0
    assert [p.name for p in out.iterdir()] == [target.name]
    # A file that only looks alike (not one an export names) is never touched.
    other = out / ".run.oloarchive.notes"
    other.write_text("mine")
    assert oloproof("ledger", "export", "latest", "--to", str(target), cwd=root).code == 0
    assert other.read_text() == "mine"
