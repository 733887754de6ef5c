"""Write and rewrite a closed ledger's LMDB tables directly, as a bug, a second tool or a person
could: records the ledger's own code would never write. Layout: docs/ledger.md."""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import cbor2
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
    env = lmdb.open(str(project_ledger / "ledger"), max_dbs=128)
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
    """Append ``data`` as the next event record, filed in a run of its own with its address
    entry, its ``type`` index entry (when ``event_type`` is given) and the application's
    ``entries``, and a chain record of its own, so that only what is wrong with the bytes
    themselves remains to be found. Returns its address."""
    digest = hashlib.sha256(data).digest()
    with tables(project_ledger) as (txn, dbs):
        cursor = txn.cursor(db=dbs[b"events"])
        seq = SEQ.unpack(cursor.key())[0] + 1 if cursor.last() else 1
        txn.put(SEQ.pack(seq), digest + data, db=dbs[b"events"])
        prefixes = [index_key(name, key) for name, key in entries]
        if event_type is not None:
            prefixes.insert(0, type_prefix(event_type))
        add_run(txn, dbs, seq, digest, prefixes)
        chain = txn.cursor(db=dbs[b"chain"])
        number, previous = 1, bytes(32)
        if chain.last():
            number = SEQ.unpack(chain.key())[0] + 1
            previous = chain.value()[:32]
        head = hashlib.sha256(previous + digest).digest()
        txn.put(SEQ.pack(number), RECORD.pack(head, seq, 1), db=dbs[b"chain"])
    return "sha256:" + digest.hex()


# -- sorted runs (docs/ledger.md, "On disk"), written as another tool would -------------------

ADDR_TAG, INDEX_TAG, FILTER_KEY = b"\x00", b"\x01", b"\xff"


def run_table_of(ledger: Any, txn: Any, seq: int) -> Any:
    """The table of the run that holds the entries of event ``seq`` of the open ``ledger``,
    as its write transaction ``txn`` sees it."""
    return ledger._run_set(txn).covering(seq).index_db


def directory(txn: Any, dbs: dict[bytes, Any]) -> dict[str, Any]:
    found: dict[str, Any] = cbor2.loads(txn.get(b"runs", db=dbs[b"meta"]))
    return found


def _filter_bits(key: bytes, *, is_digest: bool) -> tuple[int, int]:
    raw = key[:16] if is_digest else hashlib.blake2b(key, digest_size=16).digest()
    h = int.from_bytes(raw, "little")
    mask = 0
    for i in range(6):
        mask |= 1 << ((h >> (64 + 6 * i)) & 63)
    return h & (2**64 - 1), mask


def _set_filter(txn: Any, table: Any, keys: list[tuple[bytes, bool]]) -> None:
    data = bytearray(txn.get(FILTER_KEY, db=table))
    words = len(data) // 8
    for key, is_digest in keys:
        block, mask = _filter_bits(key, is_digest=is_digest)
        at = 8 * (block % words)
        word = int.from_bytes(data[at : at + 8], "little") | mask
        data[at : at + 8] = word.to_bytes(8, "little")
    txn.put(FILTER_KEY, bytes(data), db=table)


def _covering(txn: Any, dbs: dict[bytes, Any], seq: int) -> tuple[dict[str, Any], list[int]]:
    record = directory(txn, dbs)
    for row in record["runs"]:
        if row[2] <= seq < row[3]:
            return record, row
    raise KeyError(seq)


def add_run(
    txn: Any, dbs: dict[bytes, Any], seq: int, digest: bytes, prefixes: list[bytes]
) -> None:
    """File event ``seq`` (of ``digest``, under the index ``prefixes``) as a new run of its
    own, in the first run table no run uses."""
    record = directory(txn, dbs)
    used = {row[1] for row in record["runs"]}
    table = next(t for t in range(64) if t not in used)
    db = dbs[b"run%02d" % table]
    # One entry of each key: each index record holds that one entry alone.
    items = [(ADDR_TAG + digest, SEQ.pack(seq))]
    items += sorted((INDEX_TAG + p + SEQ.pack(seq), entry_value(digest)) for p in prefixes)
    for key, value in items:
        txn.put(key, value, db=db)
    words = max(1, (len(items) * 10 + 63) // 64)
    txn.put(FILTER_KEY, bytes(8 * words), db=db)
    _set_filter(txn, db, [(digest, True), *((p, False) for p in prefixes)])
    record["runs"].append([record["next"], table, seq, seq + 1, len(items)])
    record["next"] += 1
    txn.put(b"runs", cbor2.dumps(record, canonical=True), db=dbs[b"meta"])


def _postings_at(
    txn: Any, db: Any, prefix: bytes, seq: int
) -> tuple[bytes | None, list[tuple[int, bytes]]]:
    """The key and the ``(sequence number, head)`` entries of the index record of ``prefix``
    that holds (or would hold) event ``seq``: the last one that begins at or before it."""
    cursor = txn.cursor(db=db)
    start = INDEX_TAG + prefix + SEQ.pack(seq)
    exact = cursor.set_range(start) and cursor.key() == start
    if not exact and not (cursor.prev() if cursor.key() else cursor.last()):
        return None, []
    key, value = cursor.item()
    if key[1:-8] != prefix:
        return None, []
    entries = [(SEQ.unpack(key[-8:])[0], value[:4])]
    entries += [
        (SEQ.unpack(value[at : at + 8])[0], value[at + 8 : at + 12])
        for at in range(4, len(value), 12)
    ]
    return bytes(key), entries


def _put_postings(txn: Any, db: Any, prefix: bytes, entries: list[tuple[int, bytes]]) -> None:
    if entries:
        first, head = entries[0]
        rest = b"".join(SEQ.pack(seq) + h for seq, h in entries[1:])
        txn.put(INDEX_TAG + prefix + SEQ.pack(first), head + rest, db=db)


def file_entries(
    txn: Any, dbs: dict[bytes, Any], seq: int, digest: bytes, prefixes: list[bytes]
) -> None:
    """Add event ``seq``'s address entry and index entries to the run that covers it, as a
    careful tool would: each index entry into the record of its key that holds its place,
    its filter and its count in the directory following."""
    record, row = _covering(txn, dbs, seq)
    db = dbs[b"run%02d" % row[1]]
    row[4] += txn.put(ADDR_TAG + digest, SEQ.pack(seq), db=db, overwrite=False)
    for prefix in prefixes:
        key, entries = _postings_at(txn, db, prefix, seq)
        if key is not None:
            txn.delete(key, db=db)
        _put_postings(txn, db, prefix, sorted({*entries, (seq, entry_value(digest))}))
        row[4] += 1
    _set_filter(txn, db, [(digest, True), *((p, False) for p in prefixes)])
    txn.put(b"runs", cbor2.dumps(record, canonical=True), db=dbs[b"meta"])


def unfile_entries(
    txn: Any, dbs: dict[bytes, Any], seq: int, digest: bytes, prefixes: list[bytes]
) -> None:
    """Remove event ``seq``'s address entry and index entries from the run that covers it,
    and its count in the directory with them."""
    record, row = _covering(txn, dbs, seq)
    db = dbs[b"run%02d" % row[1]]
    row[4] -= txn.delete(ADDR_TAG + digest, db=db)
    for prefix in prefixes:
        key, entries = _postings_at(txn, db, prefix, seq)
        kept = [(s, head) for s, head in entries if s != seq]
        if key is not None and len(kept) < len(entries):
            txn.delete(key, db=db)
            _put_postings(txn, db, prefix, kept)
            row[4] -= 1
    txn.put(b"runs", cbor2.dumps(record, canonical=True), db=dbs[b"meta"])


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


def _page(data: bytes, pgno: int, size: int) -> tuple[int, list[tuple[int, bytes, int, int]]]:
    """A page's flags and its nodes as ``(node flags or child page, key, data offset in the
    file, data length)``."""
    base = pgno * size
    _, _, flags, lower, _ = _PAGE_HEADER.unpack_from(data, base)
    nodes = []
    for i in range((lower - _PAGE_HEADER.size) // 2):
        (offset,) = struct.unpack_from("=H", data, base + _PAGE_HEADER.size + 2 * i)
        lo, hi, nflags, ksize = _NODE.unpack_from(data, base + offset)
        start = base + offset + _NODE.size
        key = data[start : start + ksize]
        if flags & _P_BRANCH:
            nodes.append((lo | hi << 16 | nflags << 32, key, 0, 0))
        else:
            nodes.append((nflags, key, start + ksize, lo | hi << 16))
    return flags, nodes


def _leaves(data: bytes, root: int, size: int) -> list[int]:
    flags, nodes = _page(data, root, size)
    if flags & _P_LEAF:
        return [root]
    return [leaf for child, _, _, _ in nodes for leaf in _leaves(data, child, size)]


def _page_size(data: bytes) -> int:
    return _DB.unpack_from(data, 16 + 24)[0]  # the free DB's pad holds the page size


def table_record(data_file: Path, table: bytes) -> int:
    """Where in the file the newest commit keeps one named table's own record (LMDB's
    ``MDB_db``: ``_DB``'s fields, its entry count at 32 bytes in), read by hand."""
    data = data_file.read_bytes()
    size = _page_size(data)
    metas = [
        (struct.unpack_from("=Q", data, base + 16 + 24 + 96 + 8)[0], base) for base in (0, size)
    ]
    _, newest = max(metas)
    main_root = _DB.unpack_from(data, newest + 16 + 24 + _DB.size)[7]
    for leaf in _leaves(data, main_root, size):
        for nflags, key, at, _ in _page(data, leaf, size)[1]:
            if key == table and nflags & _F_SUBDATA:
                return at
    raise KeyError(table)


def leaf_pages(data_file: Path, table: bytes) -> list[int]:
    """The page numbers of the leaf pages of one named table, in key order, read from the
    file by hand (for damaging exactly one of them)."""
    data = data_file.read_bytes()
    return _leaves(data, _DB.unpack_from(data, table_record(data_file, table))[7], _page_size(data))
