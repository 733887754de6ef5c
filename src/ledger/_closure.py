"""Which events travel together: the closure of some roots under refs and the program's links.

An archive (or a compacted store) holds its roots, every event their ``refs`` name, every event
filed under an index entry the program's ``Links.follow`` names for one of them, and so on until
nothing new comes in; the refs ``Links.names`` names for an event travel with it when they point
at it. Events are marked by sequence number in a bitmap, one bit per stored event, so memory
stays flat however large the closure is; they are then read out in the source's append order,
so indexes read in the same order wherever the events go.

No LMDB here: everything is read through one ``Snapshot``.
"""

from __future__ import annotations

import hashlib
from array import array
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ledger.address import format_address, parse_address
from ledger.application import Links
from ledger.chain import ChainRecord
from ledger.errors import CorruptEventError, MissingEventError
from ledger.event import Event, event_from_trusted
from ledger.format import _SEQ

if TYPE_CHECKING:
    from ledger._lmdb import Snapshot
    from ledger.application import Upcaster


@dataclass
class Selection:
    """Events marked by sequence number, and the refs that travel with them."""

    marks: bytearray
    refs: dict[str, str] = field(default_factory=dict)
    defaults: dict[str, str] = field(default_factory=dict)  # refs set only where absent

    def __contains__(self, seq: int) -> bool:
        return bool(self.marks[seq >> 3] & (1 << (seq & 7)))

    def mark(self, seq: int) -> bool:
        """Mark ``seq``; False if it was marked already."""
        byte, bit = seq >> 3, 1 << (seq & 7)
        if self.marks[byte] & bit:
            return False
        self.marks[byte] |= bit
        return True

    def count(self) -> int:
        return int.from_bytes(self.marks, "little").bit_count()

    def seqs(self) -> Iterator[int]:
        """The marked sequence numbers, in order."""
        for byte_index, byte in enumerate(self.marks):
            if byte:
                for bit in range(8):
                    if byte & (1 << bit):
                        yield (byte_index << 3) | bit

    def added_by(self, record: ChainRecord) -> int:
        """How many marked events the commit ``record`` added."""
        # No event past the last stored is marked: a count damaged on disk can claim billions.
        end = min(record.first + record.count, len(self.marks) * 8)
        if end <= record.first:
            return 0
        # The marks of bytes first // 8 .. (end - 1) // 8, shifted so that bit 0 is ``first``.
        span = int.from_bytes(self.marks[record.first >> 3 : ((end - 1) >> 3) + 1], "little")
        return (span >> (record.first & 7) & ((1 << (end - record.first)) - 1)).bit_count()


def select_all(snap: Snapshot, links: Links | None, upcast: Upcaster | None) -> Selection:
    """Every stored event, and every ref: as a default where ``links`` says the event it
    points at carries it only as one (a ``latest``), as the closure of that event would."""
    last = snap.last_seq()
    selection = Selection(bytearray(last // 8 + 1))
    for key in snap.seq_keys():
        selection.mark(_SEQ.unpack(key)[0])
    for name, digest in snap.refs():
        address = format_address(digest)
        into = selection.refs
        seq_key = snap.addr_get(digest)
        if seq_key is None:
            # Written, the archive would carry a ref to an event it lacks, which every import
            # refuses: it is refused now, as a commit that no longer hashes to its head is.
            raise MissingEventError(
                address,
                f"ref {name!r} points at it, so an import would refuse the archive; verify the "
                "ledger before exporting it",
            )
        record = snap.record_at(seq_key)
        if links is not None and links.defaults is not None and record is not None:
            event = _event_of(*record)
            read = upcast(address, event) if upcast is not None else event
            if name in links.defaults(address, read):
                into = selection.defaults
        into[name] = address
    return selection


def select_closure(
    snap: Snapshot,
    roots: list[str],
    links: Links | None,
    upcast: Upcaster | None,
) -> Selection:
    """The closure of ``roots`` (full addresses) under refs and ``links`` (see the module).

    ``MissingEventError`` when an event links to one that is not stored: the selection would
    be incomplete; ``CorruptEventError`` for one whose bytes no longer hash to its address.
    """
    selection = Selection(bytearray(snap.last_seq() // 8 + 1))
    stack = array("Q")
    for root in roots:
        stack.append(_seq_of(snap, root, None))
    while stack:
        seq = stack.pop()
        if not selection.mark(seq):
            continue
        record = snap.record_at(_SEQ.pack(seq))
        if record is None:  # pragma: no cover - the addr table pointed at it a moment ago
            continue
        digest, data = record
        address = format_address(digest)
        event = _event_of(digest, data)
        for ref in event.refs:
            stack.append(_seq_of(snap, ref, address))
        if links is not None:
            _follow(snap, selection, stack, address, event, links, upcast)
    return selection


def _follow(
    snap: Snapshot,
    selection: Selection,
    stack: array[int],
    address: str,
    event: Event,
    links: Links,
    upcast: Upcaster | None,
) -> None:
    read = upcast(address, event) if upcast is not None else event
    if links.follow is not None:
        for index, key in links.follow(address, read):
            for entry, _ in snap.index_entries(snap.index_prefix(index, key)):
                stack.append(_SEQ.unpack(entry[-8:])[0])
    digest = parse_address(address)
    for names, into in ((links.names, selection.refs), (links.defaults, selection.defaults)):
        if names is not None:
            for name in names(address, read):
                if snap.ref_get(name) == digest:
                    into[name] = address


def _event_of(digest: bytes, data: bytes) -> Event:
    """The event a record holds, once its bytes are shown to hash to its digest: damaged bytes
    decoded as trusted ones raise anything, or name links that are not the event's."""
    if hashlib.sha256(data).digest() != digest:
        raise CorruptEventError(format_address(digest))
    return event_from_trusted(data)


def _seq_of(snap: Snapshot, address: str, parent: str | None) -> int:
    seq_key = snap.addr_get(parse_address(address))
    if seq_key is None:
        context = f"{parent} links to it, so the archive would be incomplete" if parent else ""
        raise MissingEventError(address, context)
    return int(_SEQ.unpack(seq_key)[0])
