"""The ledger's on-disk format: the format record, the tables, and how their keys are made.

Layout: one LMDB environment in ``<dir>/ledger/`` with six named databases.

    events  8-byte big-endian sequence number -> 32-byte sha256 digest + canonical event bytes
            (keys only ever append, so writes touch the last page and a scan is append order)
    addr    32-byte digest -> sequence number (derived: rebuilt from ``events``)
    index   index name, key, sequence number -> digest (derived: rebuilt from ``events``)
    refs    ref name -> digest (movable names; not derived)
    chain   8-byte big-endian commit number -> 32-byte head + 8-byte first sequence number +
            8-byte count of the events the commit added (see ``ledger.chain``)
    meta    b"format" -> canonical CBOR {"format": 2, "extensions": ["binary-refs"]} (a ledger
            last written by an older version has none; opening it for writing adds it)
            b"migrated" -> canonical CBOR {"from": 1, "events": n} once a format-1 ledger has
            been given its chain (its first commit then hashes the n events it held)
            b"indexes" -> the name of the application's indexing rules the ``index`` table
            was last rebuilt by (``Application.indexes``; absent when it names none)

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
from ledger.errors import FormatError, LedgerError, UnsupportedFormatError

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
KNOWN_EXTENSIONS: Final[frozenset[str]] = frozenset({BINARY_REFS})
TYPE_INDEX: Final = "type"

_DB_NAMES = (b"events", b"addr", b"index", b"refs", b"chain", b"meta")
_V1_DB_NAMES = (b"events", b"addr", b"index", b"refs", b"meta")
_SEQ = struct.Struct(">Q")
_LEN = struct.Struct(">H")
_MAX_COMPONENT = 200  # longer index names or keys are stored by their blake3 digest


def _component(text: str) -> bytes:
    raw = text.encode("utf-8")
    if len(raw) > _MAX_COMPONENT:
        return b"\x01" + blake3(raw).digest()
    return b"\x00" + raw


def index_prefix(name: str, key: str) -> bytes:
    """The ``index`` database key prefix of one (index name, key) pair.

    Each part is length-prefixed so no pair's prefix is a prefix of another's; the sequence
    number of the event follows, so entries under one prefix sort in append order.
    """
    n = _component(name)
    k = _component(key)
    return _LEN.pack(len(n)) + n + _LEN.pack(len(k)) + k


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


def index_name_of(entry_key: bytes) -> str:
    """The index name part of an ``index`` database key (a digest for very long names)."""
    if len(entry_key) < 3:
        return "#malformed"  # no index the ledger writes has such a key: verify reports it
    (length,) = _LEN.unpack_from(entry_key)
    comp = entry_key[2 : 2 + length]
    if comp[:1] == b"\x01":
        return "#" + comp[1:].hex()
    return comp[1:].decode("utf-8", "replace")


def _format_record() -> bytes:
    return encode({"format": FORMAT, "extensions": [BINARY_REFS]})


def has_binary_refs(raw: bytes) -> bool:
    """Whether a format record (already checked) declares ``binary-refs``."""
    record = decode(raw) if raw else {}
    return BINARY_REFS in record.get("extensions", ())


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
