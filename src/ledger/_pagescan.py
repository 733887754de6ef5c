"""The page-level scan ``verify`` runs in a child process (``_deepscan`` starts it as a script).

It needs only ``lmdb`` and the standard library, and prints one line a finding, which the
parent reads:

    pages SENTENCE       the pages do not account for themselves (below); nothing else read
    moving               writers kept committing; the pages could not be matched to a snapshot
    table NAME           about to walk table NAME through LMDB (so a signal can be placed)
    count HELD RECORDED  the table's entries, walked, against LMDB's record of its count
    lmdb MESSAGE         LMDB reported damage
    ok                   every page accounted for and every table read back

**Accounting for every page.** A tree LMDB reads without an error can still be the wrong one:
one flipped bit in the root page number of the newest header page can point LMDB at the tree an
early commit left behind, complete and self-consistent, and every read then shows that older
history as the whole ledger. What gives such a state away is the pages: in a committed LMDB
file every page up to the last one the header page records is exactly one of the two header
pages, a page of one table's tree (branch, leaf or overflow), or a page the free list holds.
The newer tree's pages are then neither reached nor free. Within a read transaction none of
the snapshot's pages is reused by a writer, so the pages are read with plain ``pread`` calls
(never through LMDB, which trusts them) against the header page of the snapshot's commit.

The layout is LMDB 0.9's (``MDB_page``, ``MDB_node``, ``MDB_db`` in mdb.c) for a 64-bit build
in the machine's byte order; ``_datafile`` reads the header pages the same way.
"""

from __future__ import annotations

import os
import struct
import sys
from array import array
from collections.abc import Callable

import lmdb

_PAGE = struct.Struct("=QHHHH")  # pgno, pad, flags, lower, upper (or the overflow page count)
_NODE = struct.Struct("=HHHH")  # lo, hi, flags, key size; the key and data follow
_DB = struct.Struct("=IHHQQQQQ")  # pad (the page size in a header page), flags, depth, counts, root
_U64 = struct.Struct("=Q")
_U32 = struct.Struct("=I")
_TXNID, _LAST_PAGE = 144, 136  # offsets in a header page
_FREE_DB, _MAIN_DB = 40, 88  # the two MDB_db records in a header page
_P_BRANCH, _P_LEAF, _P_OVERFLOW = 0x01, 0x02, 0x04
_F_BIGDATA, _F_SUBDATA = 0x01, 0x02
_FLAGS_BYTE = 4 if sys.byteorder == "little" else 5  # the byte of a node's flags they are in
_NO_PAGE = (1 << 64) - 1
_TRIES = 5


class Damage(Exception):
    """The pages do not account for themselves; the message says how."""


class _Pages:
    """The snapshot's pages, each claimed once: by a header page, a table's tree, an overflow
    run or the free list."""

    def __init__(self, fd: int, page_size: int, last: int) -> None:
        self.fd, self.size, self.last = fd, page_size, last
        self.holder = array("H", bytes(2 * (last + 1)))  # an index into ``names``; 0 unclaimed
        self.names = ["", "a header page"]
        self.claim(0, 2, "a header page")

    def claim(self, first: int, count: int, name: str) -> None:
        if count < 1 or first + count - 1 > self.last:
            raise Damage(
                f"{name} reaches page {first + max(count, 1) - 1:,}, past the last page "
                f"({self.last:,}) its newest header page records"
            )
        for pgno in range(first, first + count):
            if self.holder[pgno]:
                raise Damage(
                    f"page {pgno:,} is held by {name} and by {self.names[self.holder[pgno]]}"
                )
        if self.names[-1] != name:
            self.names.append(name)
        self.holder[first : first + count] = array("H", [len(self.names) - 1]) * count

    def read(self, pgno: int, count: int = 1) -> bytes:
        data = os.pread(self.fd, count * self.size, pgno * self.size)
        if len(data) < count * self.size:
            raise Damage(f"page {pgno:,} lies past the end of the file")
        return data

    def unclaimed(self) -> list[int]:
        return [pgno for pgno, mark in enumerate(self.holder) if not mark]


# A leaf node: its page, flags, where its key starts, the key's size, the data's size.
Leaf = Callable[[bytes, int, int, int, int], None]


def _tree(pages: _Pages, root: int, name: str, leaf: Leaf, *, every: bool = False) -> None:
    """Claim every page of the tree at ``root``, calling ``leaf`` with each leaf node that
    holds a table or a value in overflow pages (with every leaf node, if ``every``): a large
    ledger's leaves hold tens of small entries each, and reading each whole was most of the
    scan's time."""
    if root == _NO_PAGE:  # an empty table
        return
    todo = [root]
    while todo:
        pgno = todo.pop()
        pages.claim(pgno, 1, name)
        page = pages.read(pgno)
        found, _, flags, lower, upper = _PAGE.unpack_from(page)
        if found != pgno:
            raise Damage(f"page {pgno:,} of {name} is damaged: its header names page {found:,}")
        if not flags & (_P_BRANCH | _P_LEAF) or not _PAGE.size <= lower <= upper <= len(page):
            raise Damage(f"page {pgno:,} of {name} is not a sound branch or leaf page")
        for (at,) in struct.iter_unpack("=H", page[_PAGE.size : lower]):
            if not upper <= at <= len(page) - _NODE.size:
                raise Damage(f"page {pgno:,} of {name} points outside itself")
            if flags & _P_BRANCH:
                lo, hi, high, _ = _NODE.unpack_from(page, at)
                todo.append(lo | hi << 16 | high << 32)
            elif every or page[at + _FLAGS_BYTE] & (_F_BIGDATA | _F_SUBDATA):
                lo, hi, nflags, ksize = _NODE.unpack_from(page, at)
                leaf(page, nflags, at + _NODE.size, ksize, lo | hi << 16)


def _overflow(pages: _Pages, pgno: int, name: str) -> bytes:
    """Claim the overflow run that starts at page ``pgno``; return its bytes."""
    if pgno > pages.last:
        raise Damage(f"{name} reaches page {pgno:,}, past the last page ({pages.last:,})")
    head = pages.read(pgno)
    found, _, flags, _, _ = _PAGE.unpack_from(head)
    (count,) = _U32.unpack_from(head, 12)
    if found != pgno or not flags & _P_OVERFLOW:
        raise Damage(f"page {pgno:,} of {name} is not the overflow page it should be")
    pages.claim(pgno, count, name)
    return head + pages.read(pgno + 1, count - 1) if count > 1 else head


def _free_list(pages: _Pages) -> Leaf:
    """A free-list entry: a commit number, and the pages that commit freed (a count, then
    page numbers), inline or in an overflow run."""

    def entry(page: bytes, flags: int, key: int, ksize: int, size: int) -> None:
        at = key + ksize
        data = page[at : at + size]
        if flags & _F_BIGDATA:
            run = _overflow(pages, _U64.unpack_from(page, at)[0], "the free list")
            data = run[_PAGE.size : _PAGE.size + size]
        count = _U64.unpack_from(data)[0] if len(data) >= _U64.size else -1
        if not 0 <= count < len(data) // _U64.size:
            raise Damage("the free list holds a damaged entry")
        for (free,) in struct.iter_unpack("=Q", data[_U64.size : (count + 1) * _U64.size]):
            pages.claim(free, 1, "the free list")

    return entry


def _table(pages: _Pages, name: str) -> Leaf:
    """A named table's entry: its value inline, or in an overflow run to claim."""

    def entry(page: bytes, flags: int, key: int, ksize: int, size: int) -> None:
        if flags & _F_SUBDATA:
            raise Damage(f"{name} holds a table inside it")
        if flags & _F_BIGDATA:
            _overflow(pages, _U64.unpack_from(page, key + ksize)[0], name)

    return entry


def _main_table(pages: _Pages) -> Leaf:
    """The main table's entry: a named table's record (its tree walked in turn)."""

    def entry(page: bytes, flags: int, key: int, ksize: int, size: int) -> None:
        if not flags & _F_SUBDATA:
            _table(pages, "the main table")(page, flags, key, ksize, size)
            return
        name = f"the {page[key : key + ksize].decode('utf-8', 'replace')} table"
        if size != _DB.size:
            raise Damage(f"the main table holds a damaged record of {name}")
        _tree(pages, _DB.unpack_from(page, key + ksize)[7], name, _table(pages, name))

    return entry


def account(path: str, meta: bytes) -> None:
    """Raise ``Damage`` unless every page of the commit whose header page is ``meta`` is held
    exactly once: by a header page, a table's tree, an overflow run or the free list."""
    page_size = _DB.unpack_from(meta, _FREE_DB)[0]
    (last,) = _U64.unpack_from(meta, _LAST_PAGE)
    fd = os.open(path, os.O_RDONLY)
    try:
        if (last + 1) * page_size > os.fstat(fd).st_size:  # before a claim list that large
            raise Damage(f"its last page ({last:,}) lies past the end of the file")
        pages = _Pages(fd, page_size, last)
        free = _DB.unpack_from(meta, _FREE_DB)[7]
        _tree(pages, free, "the free list", _free_list(pages), every=True)
        _tree(pages, _DB.unpack_from(meta, _MAIN_DB)[7], "the main table", _main_table(pages))
        lost = pages.unclaimed()
    finally:
        os.close(fd)
    if lost:
        raise Damage(
            f"{len(lost):,} of its {last + 1:,} pages (the first, page {lost[0]:,}) are in no "
            "table and not free: LMDB reads another tree than its last commit wrote (a header "
            "or branch page was overwritten)"
        )


def _header_page(path: str, txnid: int) -> bytes | None:
    """The header page of commit ``txnid``, or None if a writer has since overwritten it (it
    writes commit t into page t mod 2)."""
    with open(path, "rb") as f:
        head = f.read(_TXNID + _U64.size)
        page_size = _DB.unpack_from(head, _FREE_DB)[0] if len(head) > _LAST_PAGE else 0
        f.seek(0)
        both = f.read(2 * page_size)
    for base in (0, page_size):
        page = both[base : base + page_size]
        if len(page) > _TXNID and _U64.unpack_from(page, _TXNID)[0] == txnid:
            return page
    return None


def _say(*words: object) -> None:
    """One finding line to the parent (flushed: the next step may be the one LMDB stops in)."""
    sys.stdout.write(" ".join(map(str, words)) + "\n")
    sys.stdout.flush()


def _walked(txn: lmdb.Transaction, db: lmdb._Database) -> bool:
    """Read every entry of ``db`` through LMDB; say whether they are as many as it records."""
    held = 0
    for _, value in txn.cursor(db=db):
        len(value)
        held += 1
    said = txn.stat(db)["entries"]
    if held != said:
        _say("count", held, said)
    return bool(held == said)


def _scanned(env: lmdb.Environment, txn: lmdb.Transaction) -> bool:
    _say("table main")
    if not _walked(txn, env.open_db(None, txn=txn, create=False)):
        return False
    for name in [bytes(key) for key, _ in txn.cursor()]:
        _say("table", name.decode("utf-8", "replace"))
        if not _walked(txn, env.open_db(name, txn=txn, create=False)):
            return False
    return True


def main(directory: str, lock: bool) -> None:
    path = os.path.join(directory, "data.mdb")
    env = lmdb.open(directory, readonly=True, lock=lock, max_dbs=256, subdir=True)
    try:
        for _ in range(_TRIES):
            try:
                txn = env.begin(buffers=True)
            except lmdb.MapResizedError:  # a writer grew the map since it was opened
                env.set_mapsize(0)
                continue
            with txn:
                meta = _header_page(path, txn.id())
                if meta is None:  # two commits since the snapshot began: take another one
                    continue
                try:
                    account(path, meta)
                except Damage as exc:
                    _say("pages", exc)
                    return
                if _scanned(env, txn):
                    _say("ok")
                return
        _say("moving")
    except lmdb.Error as exc:
        _say("lmdb", str(exc).split(": ", 1)[-1])


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2] == "lock")
