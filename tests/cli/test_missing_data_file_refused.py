"""A ledger folder that held a ledger (LMDB's lock.mdb is still there) but lost its data.mdb is
refused by the commands that write as by those that read: one sentence saying what is missing
and how to start afresh on purpose, exit 2, nothing written. A new empty ledger in its place
would report a clean history with no sign of the runs it lost.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.support import copy_example, oloproof


def _files(root: Path) -> set[Path]:
    return {path.relative_to(root) for path in (root / ".oloproof").rglob("*")}


def test_a_lost_data_file_is_refused_by_writers_and_readers(tmp_path: Path) -> None:
    root = copy_example("support_rag", tmp_path)
    assert oloproof("run", cwd=root).code == 3  # the example's gate blocks
    store = root / ".oloproof" / "ledger"
    (store / "data.mdb").unlink()
    before = _files(root)
    sentence = (
        f"error: the ledger at {root / '.oloproof'} has lost its data file: {store} still holds "
        "LMDB's lock.mdb but no data.mdb, so the history it held is not there; restore data.mdb "
        f"from a backup, or remove {store} to start a new, empty ledger\n"
    )
    for command in (("run",), ("runs",), ("verify",), ("ledger", "rebuild-indexes")):
        done = oloproof(*command, cwd=root)
        assert (done.code, done.err) == (2, sentence), (command, done.code, done.out, done.err)
        assert _files(root) == before, command
    shutil.rmtree(store)  # starting afresh, on purpose
    assert oloproof("run", cwd=root).code == 3
    assert len(oloproof("runs", cwd=root).lines) == 1
