"""LMDB's data file read from outside: its two meta pages, checked before the file is mapped.

LMDB maps ``data.mdb`` into memory and trusts it: a page past the end of a truncated file is a
SIGBUS when touched, whatever the command. So before a ledger is opened its two meta pages are
read with plain file reads and checked, and a file that cannot hold what its newest meta page
says was committed is refused with one sentence.

The layout read here is LMDB 0.9's (``MDB_page`` and ``MDB_meta`` in mdb.c), for a 64-bit
build in the machine's byte order, which is the only file LMDB itself would open:

    page header  (16 bytes)  pgno u64, pad u16, flags u16 (P_META = 0x08), lower u16, upper u16
    MDB_meta                 magic u32 (0xBEEFC0DE), version u32 (1), address u64, mapsize u64,
                             two MDB_db (48 bytes each: pad u32, flags u16, depth u16,
                             branch_pages u64, leaf_pages u64, overflow_pages u64,
                             entries u64, root u64), last_pg u64, txnid u64

The page size is the first MDB_db's ``pad`` (LMDB's ``mm_psize``); meta page 1 starts one page
size into the file. Of the two, the one with the larger txnid is the newest commit, and the
file must be at least ``(last_pg + 1) * page size`` bytes long (and that is within the map
size the page records, as LMDB allocates no page past its map). LMDB writes commit t into meta
page t mod 2, so the two txnids must be consecutive and each on the page of its parity: a
flipped bit that made the older page look newest would otherwise open the previous commit.

No LMDB here: this module exists to look before LMDB does.
"""

from __future__ import annotations

import os
import struct
from dataclasses import dataclass
from pathlib import Path

from ledger.errors import DamagedStoreError, StoreError

_HEADER = struct.Struct("=QHHHH")
_META = struct.Struct("=IIQQ")
_DB = struct.Struct("=IHHQQQQQ")
_TAIL = struct.Struct("=QQ")
_MAGIC = 0xBEEFC0DE
_VERSION = 1
_P_META = 0x08
_META_SIZE = _HEADER.size + _META.size + 2 * _DB.size + _TAIL.size
_MIN_PAGE, _MAX_PAGE = 512, 1 << 16
_TRIES = 3  # a meta page being rewritten by a commit may read torn: look again


@dataclass(frozen=True)
class MetaPage:
    """What the newest meta page of ``data.mdb`` says."""

    page_size: int
    last_page: int
    txnid: int
    map_size: int

    @property
    def needed(self) -> int:
        """How many bytes the file must hold for the committed pages."""
        return (self.last_page + 1) * self.page_size


def _meta_at(data: bytes, offset: int, number: int) -> tuple[int, int, int, int] | None:
    """(page size, last page, txnid, map size) of the meta page at ``offset``, or None."""
    if len(data) < offset + _META_SIZE:
        return None
    pgno, _, flags, _, _ = _HEADER.unpack_from(data, offset)
    magic, version, _, map_size = _META.unpack_from(data, offset + _HEADER.size)
    page_size = _DB.unpack_from(data, offset + _HEADER.size + _META.size)[0]
    last_page, txnid = _TAIL.unpack_from(data, offset + _META_SIZE - _TAIL.size)
    if pgno != number or not flags & _P_META or magic != _MAGIC or version != _VERSION:
        return None
    if not _MIN_PAGE <= page_size <= _MAX_PAGE or page_size & (page_size - 1):
        return None
    return page_size, last_page, txnid, map_size


def _read_once(path: Path) -> tuple[MetaPage | str, int]:
    """The newest meta page, or the sentence saying what is wrong; and the file's size."""
    with open(path, "rb") as f:
        head = f.read(_MAX_PAGE + _META_SIZE)
        size = os.fstat(f.fileno()).st_size  # after the read: the file only grows
    first = _meta_at(head, 0, 0)
    if first is None:
        if len(head) < _META_SIZE:
            return f"it is {size:,} bytes long, too short to hold LMDB's header pages", size
        return "its first header page is not an LMDB meta page", size
    second = _meta_at(head, first[0], 1)
    if second is None:
        if size < first[0] + _META_SIZE:
            return (
                f"it is {size:,} bytes long, too short to hold LMDB's second header page",
                size,
            )
        return "its second header page is not an LMDB meta page", size
    if not _side_by_side(first[2], second[2]):
        return (
            f"its two header pages record commits {first[2]:,} and {second[2]:,}, which LMDB "
            "never leaves side by side (a header page was overwritten)",
            size,
        )
    newest = first if first[2] >= second[2] else second
    return MetaPage(newest[0], newest[1], newest[2], newest[3]), size


def _side_by_side(first: int, second: int) -> bool:
    """Whether the txnids of meta pages 0 and 1 are ones LMDB writes: commit t goes to page
    t mod 2, so the two are consecutive, each on the page of its parity (both 0 before the
    first commit). Anything else is a damaged page, and LMDB, which opens the page with the
    larger txnid, could be reading an older commit as the newest without a sign."""
    if first == second == 0:
        return True
    return first % 2 == 0 and second % 2 == 1 and abs(first - second) == 1


def check_data_file(path: Path) -> MetaPage:
    """Check ``data.mdb`` against its own meta pages; raise ``DamagedStoreError`` if it is
    damaged (one sentence naming the file, its size and the size it should have)."""
    problem: MetaPage | str = ""
    size = 0
    for _ in range(_TRIES):
        try:
            problem, size = _read_once(path)
        except OSError as exc:
            raise StoreError(f"cannot read the ledger file {path}: {exc.strerror}") from exc
        if isinstance(problem, MetaPage) and size >= problem.needed:
            return problem
    if isinstance(problem, MetaPage) and problem.needed > problem.map_size:
        # LMDB never writes a page past its map: the header page is wrong, not the file short.
        raise DamagedStoreError(
            f"the ledger file {path} is damaged: its newest header page says its last commit "
            f"needs {problem.needed:,} bytes, more than the {problem.map_size:,}-byte map it "
            "records (a header page was overwritten)"
        )
    if isinstance(problem, MetaPage):
        raise DamagedStoreError(
            f"the ledger file {path} is damaged: it is {size:,} bytes long, but its last "
            f"commit needs {problem.needed:,} bytes (it was truncated)"
        )
    raise DamagedStoreError(f"the ledger file {path} is damaged: {problem}")
