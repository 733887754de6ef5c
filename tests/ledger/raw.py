"""Write and rewrite a closed ledger's LMDB tables directly, as a bug, a second tool or a person
could: records the ledger's own code would never write. Layout: docs/ledger.md."""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import lmdb

SEQ = struct.Struct(">Q")
RECORD = struct.Struct(">32sQQ")


def type_prefix(event_type: str) -> bytes:
    """The ``index`` key prefix of the ``type`` index entry for ``event_type``."""
    return index_key("type", event_type)


@contextmanager
def tables(project_ledger: Path) -> Iterator[tuple[Any, dict[bytes, Any]]]:
    """A write transaction on the ledger kept in ``project_ledger`` (a ``.oloproof/`` dir),
    and its named databases."""
    env = lmdb.open(str(project_ledger / "ledger"), max_dbs=16)
    try:
        with env.begin(write=True) as txn:
            names = [key for key, _ in txn.cursor()]
            yield txn, {name: env.open_db(name, txn=txn) for name in names}
    finally:
        env.close()


def index_key(name: str, key: str) -> bytes:
    """The ``index`` key prefix of one (index name, key) pair (for short text names and keys,
    neither an address nor 64 hex digits)."""
    n, k = b"\x00" + name.encode(), b"\x00" + key.encode()
    return bytes((len(n),)) + n + bytes((len(k),)) + k


def entry_value(digest: bytes) -> bytes:
    """The value of an ``index`` entry filing the event of ``digest``: its digest's head."""
    return digest[:4]


def append_raw(
    project_ledger: Path,
    data: bytes,
    event_type: str | None = None,
    entries: tuple[tuple[str, str], ...] = (),
) -> str:
    """Append ``data`` as the next event record, with its ``addr`` entry, its ``type`` index
    entry (when ``event_type`` is given) and the application's ``entries``, and a chain record
    of its own, so that only what is wrong with the bytes themselves remains to be found.
    Returns its address."""
    digest = hashlib.sha256(data).digest()
    with tables(project_ledger) as (txn, dbs):
        cursor = txn.cursor(db=dbs[b"events"])
        seq = SEQ.unpack(cursor.key())[0] + 1 if cursor.last() else 1
        txn.put(SEQ.pack(seq), digest + data, db=dbs[b"events"])
        txn.put(digest, SEQ.pack(seq), db=dbs[b"addr"])
        if event_type is not None:
            txn.put(type_prefix(event_type) + SEQ.pack(seq), entry_value(digest), db=dbs[b"index"])
        for name, key in entries:
            txn.put(index_key(name, key) + SEQ.pack(seq), entry_value(digest), db=dbs[b"index"])
        chain = txn.cursor(db=dbs[b"chain"])
        number, previous = 1, bytes(32)
        if chain.last():
            number = SEQ.unpack(chain.key())[0] + 1
            previous = chain.value()[:32]
        head = hashlib.sha256(previous + digest).digest()
        txn.put(SEQ.pack(number), RECORD.pack(head, seq, 1), db=dbs[b"chain"])
    return "sha256:" + digest.hex()


def event_records(project_ledger: Path) -> list[tuple[int, bytes, bytes]]:
    """Every ``(sequence number, digest, bytes)`` of the events table, in order."""
    with tables(project_ledger) as (txn, dbs):
        return [
            (SEQ.unpack(key)[0], value[:32], value[32:])
            for key, value in txn.cursor(db=dbs[b"events"])
        ]


def chain_records(project_ledger: Path) -> list[tuple[int, bytes, int, int]]:
    """Every ``(commit, head, first, count)`` of the chain table, in order."""
    with tables(project_ledger) as (txn, dbs):
        return [
            (SEQ.unpack(key)[0], *RECORD.unpack(value))
            for key, value in txn.cursor(db=dbs[b"chain"])
        ]


# -- LMDB's pages, walked by hand (LMDB 0.9's MDB_page / MDB_node / MDB_db; 64-bit build) ----

_PAGE_HEADER = struct.Struct("=QHHHH")  # pgno, pad, flags, lower, upper
_NODE = struct.Struct("=HHHH")  # lo, hi, flags, ksize
_DB = struct.Struct("=IHHQQQQQ")  # pad, flags, depth, branch, leaf, overflow, entries, root
_P_BRANCH, _P_LEAF, _F_SUBDATA = 0x01, 0x02, 0x02


def _page(data: bytes, pgno: int, size: int) -> tuple[int, list[tuple[int, bytes, bytes]]]:
    """A page's flags and its nodes as ``(node flags or child page, key, data)``."""
    base = pgno * size
    _, _, flags, lower, _ = _PAGE_HEADER.unpack_from(data, base)
    nodes = []
    for i in range((lower - _PAGE_HEADER.size) // 2):
        (offset,) = struct.unpack_from("=H", data, base + _PAGE_HEADER.size + 2 * i)
        lo, hi, nflags, ksize = _NODE.unpack_from(data, base + offset)
        start = base + offset + _NODE.size
        key = data[start : start + ksize]
        if flags & _P_BRANCH:
            nodes.append((lo | hi << 16 | nflags << 32, key, b""))
        else:
            nodes.append((nflags, key, data[start + ksize : start + ksize + (lo | hi << 16)]))
    return flags, nodes


def leaf_pages(data_file: Path, table: bytes) -> list[int]:
    """The page numbers of the leaf pages of one named table, in key order, read from the
    file by hand (for damaging exactly one of them)."""
    data = data_file.read_bytes()
    size = _DB.unpack_from(data, 16 + 24)[0]  # the free DB's pad holds the page size
    metas = [
        (struct.unpack_from("=Q", data, base + 16 + 24 + 96 + 8)[0], base) for base in (0, size)
    ]
    _, newest = max(metas)
    main_root = _DB.unpack_from(data, newest + 16 + 24 + _DB.size)[7]

    def leaves(root: int) -> list[int]:
        flags, nodes = _page(data, root, size)
        if flags & _P_LEAF:
            return [root]
        return [leaf for child, _, _ in nodes for leaf in leaves(child)]

    for leaf in leaves(main_root):
        for nflags, key, value in _page(data, leaf, size)[1]:
            if key == table and nflags & _F_SUBDATA:
                return leaves(_DB.unpack(value)[7])
    raise KeyError(table)
