"""A project whose `.oloproof/ledger/data.mdb` is a link to a file kept elsewhere (a larger
disk) lost it when that disk was not mounted: the link then points at nothing, in a folder that
is there. Copied or cleaned without LMDB's lock.mdb, `run` created a new, empty ledger where the
link points and reported a clean history, the runs it lost gone without a word. Now every
command refuses such a store as one that lost its data file, naming the link and what it points
at, exit 2, nothing written; mounted again, the ledger reads as before.
"""

from __future__ import annotations

from pathlib import Path

from tests.support import oloproof, toy_project


def _files(root: Path) -> set[Path]:
    return {path.relative_to(root) for path in root.rglob("*")}


def test_a_data_file_linked_to_nothing_is_a_lost_one(tmp_path: Path) -> None:
    root = toy_project(tmp_path / "p", cases=30)
    assert oloproof("run", cwd=root).code == 0
    listed = oloproof("runs", cwd=root).out
    store = root / ".oloproof" / "ledger"
    disk = tmp_path / "disk"
    disk.mkdir()
    (store / "data.mdb").rename(disk / "data.mdb")
    (store / "data.mdb").symlink_to(disk / "data.mdb")
    (store / "lock.mdb").unlink()  # a copy, or a clean-up, without LMDB's lock file
    (disk / "data.mdb").rename(tmp_path / "unmounted.mdb")  # the disk is not mounted
    before = _files(tmp_path)
    sentence = (
        f"error: the ledger at {root / '.oloproof'} has lost its data file: {store / 'data.mdb'} "
        f"is a link to {disk / 'data.mdb'}, which does not exist, so the history it held is not "
        f"there; mount or restore what it links to, or remove {store} to start a new, empty "
        "ledger\n"
    )

    for command in (("run",), ("runs",), ("verify",), ("ledger", "rebuild-indexes")):
        done = oloproof(*command, cwd=root)
        assert (done.code, done.out, done.err) == (2, "", sentence), command
        assert _files(tmp_path) == before, command

    (tmp_path / "unmounted.mdb").rename(disk / "data.mdb")  # mounted again
    assert oloproof("runs", cwd=root).out == listed
