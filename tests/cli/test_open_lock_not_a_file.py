"""Every command holds `.oloproof/ledger/open.lock` shared while it has the ledger open, so that
a compaction, which takes it alone, never swaps the store under one. With a folder, or a link to
nothing, in the file's place, `run` and `ledger import` went ahead and wrote without the lock
(the opening fell back to the way of read-only media), where `ledger compact` refused: once the
file was put right, a compaction could start beside a run it could not see. Now every command
refuses such a ledger in one sentence naming the file and saying what to do, exit 2, before
anything is written; removing it lets them run again.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from tests.support import oloproof, toy_project


@pytest.fixture(scope="module")
def sound(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A project after one run, and an archive of another project's run."""
    base = tmp_path_factory.mktemp("sound")
    root = toy_project(base / "p", cases=30)
    other = toy_project(base / "other", cases=30)
    for project in (root, other):
        assert oloproof("run", cwd=project).code == 0
    archive = base / "other.oloarchive"
    exported = oloproof("ledger", "export", "latest", "--to", str(archive), cwd=other)
    assert exported.code == 0, exported.err
    return root, archive


@pytest.mark.parametrize("stand_in", ["folder", "dangling link"])
def test_a_lock_file_that_is_no_file_is_refused(
    sound: tuple[Path, Path], tmp_path: Path, stand_in: str
) -> None:
    root = tmp_path / "p"
    shutil.copytree(sound[0], root, ignore=shutil.ignore_patterns("lock.mdb"))
    lock = root / ".oloproof" / "ledger" / "open.lock"
    lock.unlink()
    if stand_in == "folder":
        lock.mkdir()
        what = "a folder"
    else:
        lock.symlink_to(tmp_path / "gone" / "open.lock")
        what = f"a link to {tmp_path / 'gone' / 'open.lock'}, which does not exist"
    data = root / ".oloproof" / "ledger" / "data.mdb"
    before = data.read_bytes()
    sentence = (
        f"error: cannot open the ledger at {root / '.oloproof'}: its lock file {lock} is "
        f"{what}; remove it (the ledger makes the file again)\n"
    )

    for args in (("run",), ("ledger", "import", str(sound[1])), ("runs",), ("verify",)):
        done = oloproof(*args, cwd=root)
        assert (done.code, done.out, done.err) == (2, "", sentence), args
    assert data.read_bytes() == before  # nothing was written
    assert not (tmp_path / "gone").exists()

    lock.rmdir() if stand_in == "folder" else lock.unlink()
    assert oloproof("ledger", "import", str(sound[1]), cwd=root).code == 0
    assert os.path.isfile(lock)
