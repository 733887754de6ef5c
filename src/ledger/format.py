"""The ledger's on-disk format: the format record, the tables, and how their keys are made.

Layout: one LMDB environment in ``<dir>/ledger/`` with six named databases and 64 run tables.

    events  8-byte big-endian sequence number -> 32-byte sha256 digest + canonical event bytes,
            or a zstd frame of them (``ledger._records``; the digest is of the canonical bytes)
            (keys only ever append, so writes touch the last page and a scan is append order)
    run00 … run63
            the derived entries, in sorted runs (``ledger._runs``; rebuilt from ``events``):
            each run's table holds, for the events of one range of sequence numbers,
            0x00 + 32-byte digest -> sequence number (the address entries), 0x01 + index
            name, key, sequence number -> the first 4 bytes of the event's digest (the index
            entries; ``index_prefix`` says how keys are spelled, and the digest's head tells
            an entry whose record is another event's), and 0xff -> the run's filter
    addr, index
            the same entries without the tag byte, in a ledger without ``sorted-runs`` (and
            without ``compact-index``: ``legacy_index_prefix`` keys -> whole digests); empty
            in one with it
    refs    ref name -> digest (movable names; not derived)
    chain   8-byte big-endian commit number -> 32-byte head + 8-byte first sequence number +
            8-byte count of the events the commit added (see ``ledger.chain``)
    meta    b"format" -> canonical CBOR {"format": 2, "extensions": ["binary-refs"]} (a ledger
            last written by an older version has none; opening it for writing adds it)
            b"migrated" -> canonical CBOR {"from": 1, "events": n} once a format-1 ledger has
            been given its chain (its first commit then hashes the n events it held)
            b"indexes" -> the name of the application's indexing rules the ``index`` table
            was last rebuilt by (``Application.indexes``; absent when it names none)
            b"dictionary" -> the zstd dictionary the compressed ``events`` records were made
            with (``ledger._records``; absent until a commit brings enough events to train
            one, and the format record then declares ``zstd-records``)
            b"runs" -> canonical CBOR {"next": n, "runs": [[ident, table, first, end,
            entries], ...]}, the directory of the runs (``ledger._runs``)

Format 1 is format 2 without the ``chain`` table. A format-1 ledger opened for writing is
migrated in one transaction; opened read-only it is read as it is. A ledger of a newer format,
or one using an extension this version does not know, is refused (``check_format``) rather than
misread. This module only describes the bytes and touches no LMDB; the store's modules (listed
in ``ledger.store``) read and write them.
"""

from __future__ import annotations

import struct
from typing import Final

from blake3 import blake3

from ledger.codec import decode, encode
from ledger.errors import DamagedStoreError, FormatError, LedgerError, UnsupportedFormatError

__all__ = [
    "FORMAT",
    "KNOWN_EXTENSIONS",
    "TYPE_INDEX",
    "check_format",
    "index_name_of",
    "index_prefix",
]

FORMAT: Final = 2
INDEXES_KEY: Final = b"indexes"
CHAINLESS_FORMAT: Final = 1  # read, and migrated when opened for writing
# An event's refs are written as 32-byte digests rather than as address text (``ledger.event``).
# A ledger or archive that may hold such events says so, so that a version reading refs only
# as text refuses it instead of misreading it.
BINARY_REFS: Final = "binary-refs"
# The ``index`` table's entries have the compact layout (``index_prefix``, each entry's value
# the first ``ENTRY_HEAD`` bytes of its event's digest). A ledger without it has the first
# layout (every key spelled as text, the whole digest in each entry): it is read as it is
# when opened read-only and refiled when opened for writing.
COMPACT_INDEX: Final = "compact-index"
ENTRY_HEAD: Final = 4
# Some ``events`` records hold a zstd frame made with the dictionary in ``meta`` (see
# ``ledger._records``): a version that cannot unpack them refuses the ledger.
ZSTD_RECORDS: Final = "zstd-records"
# The address entries and index entries are kept in sorted runs, in the run tables, listed by
# the directory in ``meta`` (``ledger._runs``); the ``addr`` and ``index`` tables are empty. A
# ledger without it keeps them in those two tables: read as they are when opened read-only,
# refiled in runs when opened for writing.
SORTED_RUNS: Final = "sorted-runs"
KNOWN_EXTENSIONS: Final[frozenset[str]] = frozenset(
    {BINARY_REFS, COMPACT_INDEX, SORTED_RUNS, ZSTD_RECORDS}
)
TYPE_INDEX: Final = "type"

_DB_NAMES = (b"events", b"addr", b"index", b"refs", b"chain", b"meta")
RUN_TABLES: Final = 64
RUN_TABLE_NAMES: Final = tuple(b"run%02d" % i for i in range(RUN_TABLES))
_V1_DB_NAMES = (b"events", b"addr", b"index", b"refs", b"meta")
_SEQ = struct.Struct(">Q")


def event_seq(key: bytes, where: object) -> int:
    """The sequence number an ``events`` table key spells. No write makes a key of another
    length: one flipped bit in a page's key size gives a key of 72 bytes, which would
    otherwise end a read that meets it with a ``struct.error``. It is damage to the file of
    the ledger at ``where``: ``DamagedStoreError``."""
    if len(key) != _SEQ.size:
        raise DamagedStoreError(
            f"the ledger at {where} is damaged below its events: its events table holds a key "
            f"of {len(key)} bytes, where each is an 8-byte sequence number"
        )
    return int(_SEQ.unpack(key)[0])


_MAX_COMPONENT = 200  # longer index names or keys are stored by their blake3 digest


def _component(text: str) -> bytes:
    """One part of an entry key: a tag byte, then the text, or the 32 bytes that an address
    or a 64-digit hex digest spell (most keys are one: half the bytes), or the blake3 digest
    of a text too long to keep whole."""
    if len(text) == 71 and text.startswith("sha256:"):
        raw = _hex_bytes(text[7:])
        if raw is not None:
            return b"\x02" + raw
    elif len(text) == 64:
        raw = _hex_bytes(text)
        if raw is not None:
            return b"\x03" + raw
    encoded = text.encode("utf-8")
    if len(encoded) > _MAX_COMPONENT:
        return b"\x01" + blake3(encoded).digest()
    return b"\x00" + encoded


def _hex_bytes(text: str) -> bytes | None:
    """The bytes that 64 lowercase hex digits spell (only those: "AB" and "ab" must not file
    under one key), else ``None``."""
    try:
        raw = bytes.fromhex(text)
    except ValueError:
        return None
    return raw if len(raw) == 32 and raw.hex() == text else None


def index_prefix(name: str, key: str) -> bytes:
    """The ``index`` database key prefix of one (index name, key) pair.

    Each part is length-prefixed (one byte: a part is at most 201) so no pair's prefix is a
    prefix of another's; the sequence number of the event follows, so entries under one
    prefix sort in append order.
    """
    n = _names.get(name)
    if n is None:
        n = _component(name)
        n = bytes((len(n),)) + n
        if len(_names) < 1024:  # an application has a handful of index names
            _names[name] = n
    k = _component(key)
    return n + bytes((len(k),)) + k


_names: dict[str, bytes] = {}  # an index name's part of its prefixes, length first


_type_prefixes: dict[str, tuple[bytes]] = {}


def _type_prefix(event_type: str) -> tuple[bytes]:
    """``(index_prefix(TYPE_INDEX, event_type),)``, remembered: there are few event types, and
    sharing one tuple per type spares the garbage collector a container per event."""
    prefix = _type_prefixes.get(event_type)
    if prefix is None:
        if len(_type_prefixes) > 1024:
            _type_prefixes.clear()
        prefix = _type_prefixes[event_type] = (index_prefix(TYPE_INDEX, event_type),)
    return prefix


def index_name_of(entry_key: bytes, *, legacy: bool = False) -> str:
    """The index name part of an ``index`` database key (a digest for very long names);
    ``legacy``: a key of the first layout."""
    if legacy:
        if len(entry_key) < 3:
            return "#malformed"
        comp = entry_key[2 : 2 + int.from_bytes(entry_key[:2], "big")]
    else:
        if len(entry_key) < 2:
            return "#malformed"  # no index the ledger writes has such a key: verify reports it
        comp = entry_key[1 : 1 + entry_key[0]]
    if comp[:1] == b"\x00":
        return comp[1:].decode("utf-8", "replace")
    return "#" + comp[1:].hex()


def legacy_index_prefix(name: str, key: str) -> bytes:
    """``index_prefix`` as the first layout spelled it: each part as text (or the blake3
    digest of a long one), after a two-byte length."""
    parts = []
    for text in (name, key):
        raw = text.encode("utf-8")
        comp = b"\x01" + blake3(raw).digest() if len(raw) > _MAX_COMPONENT else b"\x00" + raw
        parts.append(len(comp).to_bytes(2, "big") + comp)
    return parts[0] + parts[1]


def _format_record() -> bytes:
    return encode({"format": FORMAT, "extensions": [BINARY_REFS, COMPACT_INDEX, SORTED_RUNS]})


def extensions_of(raw: bytes) -> frozenset[str]:
    """The extensions a format record (already checked) declares."""
    record = decode(raw) if raw else {}
    return frozenset(record.get("extensions", ()))


def check_format(raw: bytes | None, where: str, name: str = "ledger") -> int:
    """The format of a record this version can read (1 or 2); refuse any other.

    ``name`` is the program's, as messages call it.
    """
    if raw is None:
        raise FormatError(f"{where} is not a ledger: it has no format record")
    try:
        record = decode(raw)
    except LedgerError:
        record = None
    if (
        not isinstance(record, dict)
        or isinstance(record.get("format"), bool)
        or not isinstance(record.get("format"), int)
        or not isinstance(record.get("extensions"), list)
    ):
        raise FormatError(f"{where} has an unreadable format record")
    version: int = record["format"]
    if version > FORMAT:
        raise UnsupportedFormatError(
            f"ledger format {version} at {where}; this {name} reads ≤{FORMAT} — upgrade"
        )
    if version < 1:
        raise FormatError(f"{where} declares ledger format {version}, which never existed")
    unknown = sorted(str(e) for e in record["extensions"] if e not in KNOWN_EXTENSIONS)
    if unknown:
        raise UnsupportedFormatError(
            f"ledger at {where} uses extension {', '.join(unknown)}, "
            f"which this {name} does not know — upgrade"
        )
    return version
