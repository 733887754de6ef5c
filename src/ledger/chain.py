"""The commit chain: every commit's head hashes the head before it and what the commit added.

A commit that adds events appends one record to the ``chain`` table:

    key    8-byte big-endian commit number (1, 2, 3, ...)
    value  32-byte head + 8-byte big-endian first sequence number + 8-byte big-endian count

where the commit added the events with sequence numbers ``first .. first + count - 1`` and

    head = SHA-256(previous head || digest of each event it added, in sequence order)

with 32 zero bytes as the head before the first commit. Heads are written like addresses,
``sha256:`` and 64 hex digits. A commit that only moves refs adds no record.

Because each head covers the one before it, the last head covers the whole history: deleting,
reordering or rewriting any committed event changes the head of its commit, and every head
after it. ``verify`` re-derives every head from the events and compares; a head published
earlier (in a release note) stays checkable against the ledger for as long as its history is
kept. What the chain cannot catch alone is a tail rewritten consistently, events and chain
together: a published head catches that.

No LMDB here; the write path and ``verify`` use these pieces.
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

__all__ = ["GENESIS", "ChainRecord", "head_of", "pack_record", "unpack_record"]

GENESIS: Final = bytes(32)
"""The head before the first commit."""

_RECORD = struct.Struct(">32sQQ")
_SEQ = struct.Struct(">Q")


@dataclass(frozen=True, slots=True)
class ChainRecord:
    """One commit: its number, its head, and the sequence numbers of the events it added."""

    commit: int
    head: bytes
    first: int
    count: int


def head_of(previous: bytes, digests: Iterable[bytes]) -> bytes:
    """The head of a commit that added ``digests`` (in order) after head ``previous``."""
    h = hashlib.sha256(previous)
    for digest in digests:
        h.update(digest)
    return h.digest()


def pack_record(head: bytes, first: int, count: int) -> bytes:
    """A ``chain`` table value."""
    return _RECORD.pack(head, first, count)


def unpack_record(key: bytes, value: bytes) -> ChainRecord:
    """A ``chain`` table entry; ``ValueError`` if it is not in the shape above."""
    if len(key) != 8 or len(value) != _RECORD.size:
        raise ValueError("a chain record is an 8-byte key and a 48-byte value")
    head, first, count = _RECORD.unpack(value)
    return ChainRecord(_SEQ.unpack(key)[0], head, first, count)
