"""A header page damaged so that LMDB reads another tree than its last commit wrote.

The probe: a ledger after two runs, its newest header page's main-table root set back to the
root an earlier commit wrote (a few flipped bits of a page number; the earlier tree's pages were
still intact). LMDB read that older tree without an error: `verify` said `checked 406 event(s)
… ok` (exit 0) of a ledger that held 408, `runs` listed the second run INTERRUPTED, and the
next `run` died in LMDB's own assertion (SIGABRT). Lowering the last page number the header
page records by one read without an error too, and `verify` said ok of a file whose next commit
would overwrite a page in use. `verify` now accounts for every page of the file (a header page,
a table's page, or free), and each is a damaged store (exit 1).
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import lmdb
import pytest
from tests.support import oloproof, toy_project

PAGE = 4096
FREE_ROOT, MAIN_ROOT, LAST_PAGE, TXNID = 80, 128, 136, 144  # offsets in a header page
DAMAGED = "damaged store: the store is damaged below its events: "


def _newest(data: Path) -> int:
    head = data.read_bytes()[: 2 * PAGE]
    return max((0, PAGE), key=lambda base: struct.unpack_from("=Q", head, base + TXNID)[0])


def _read(data: Path, offset: int) -> int:
    return int(struct.unpack_from("=Q", data.read_bytes(), _newest(data) + offset)[0])


def _write(data: Path, offset: int, value: int) -> None:
    newest = _newest(data)
    with data.open("r+b") as f:
        f.seek(newest + offset)
        f.write(struct.pack("=Q", value))


@contextmanager
def _reading(folder: Path) -> Iterator[None]:
    """A reader holding the current snapshot: LMDB reuses none of its pages meanwhile."""
    env = lmdb.open(str(folder), readonly=True, max_dbs=256)
    try:
        with env.begin():
            yield
    finally:
        env.close()


def _events(folder: Path) -> int:
    """How many events LMDB reads in the ledger, without an error (no lock: a damaged file)."""
    env = lmdb.open(str(folder), readonly=True, lock=False, max_dbs=256)
    try:
        with env.begin() as txn:
            return int(txn.stat(env.open_db(b"events", txn=txn, create=False))["entries"])
    finally:
        env.close()


@pytest.mark.parametrize(
    ("set_back", "said"),
    [
        ((MAIN_ROOT,), "is held by the main table and by the free list"),
        ((MAIN_ROOT, FREE_ROOT), "are in no table and not free: LMDB reads another tree than"),
    ],
    ids=["main root", "both roots"],
)
def test_a_root_set_back_to_an_earlier_commits(
    tmp_path: Path, set_back: tuple[int, ...], said: str
) -> None:
    root = toy_project(tmp_path / "p", cases=40)
    assert oloproof("run", cwd=root).code == 0
    folder = root / ".oloproof" / "ledger"
    data = folder / "data.mdb"
    earlier = {offset: _read(data, offset) for offset in set_back}
    earlier_events = _events(folder)
    with _reading(folder):
        assert oloproof("run", cwd=root).code == 0
    held = _events(folder)
    for offset, value in earlier.items():
        _write(data, offset, value)
    assert _events(folder) == earlier_events < held  # LMDB reads the older tree, no error

    verify = oloproof("verify", cwd=root)
    assert verify.code == 1, verify.out + verify.err
    assert verify.out.startswith(DAMAGED) and said in verify.out.splitlines()[0], verify.out
    assert "\nchecked 0 event(s)" in verify.out


def test_a_last_page_lowered_under_a_page_in_use(tmp_path: Path) -> None:
    root = toy_project(tmp_path / "p", cases=40)
    assert oloproof("run", cwd=root).code == 0
    data = root / ".oloproof" / "ledger" / "data.mdb"
    last = _read(data, LAST_PAGE)
    _write(data, LAST_PAGE, last - 1)
    assert oloproof("runs", cwd=root).code == 0  # LMDB reads it without an error

    verify = oloproof("verify", cwd=root)
    assert verify.code == 1, verify.out + verify.err
    assert verify.out.startswith(f"{DAMAGED}"), verify.out
    assert f"page {last:,}, past the last page ({last - 1:,}) its newest header page records" in (
        verify.out
    )
