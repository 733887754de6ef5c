"""Damage a closed ledger on disk the way a bad disk or a person would: one byte at a time."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tests.ledger.raw import INDEX_TAG

from ledger import open_ledger
from ledger.format import index_prefix


def data_file(project_ledger: Path) -> Path:
    """The LMDB data file of the ledger kept in ``project_ledger`` (a ``.oloproof/`` dir)."""
    return project_ledger / "ledger" / "data.mdb"


def flip_byte_of(project_ledger: Path, stored: bytes, offset: int | None = None) -> None:
    """Flip one byte inside the only copy of ``stored`` in the ledger's data file.

    ``stored`` is an event's canonical bytes; the byte flipped is ``offset`` into them (by
    default one in the middle). The ledger must be closed.
    """
    path = data_file(project_ledger)
    data = bytearray(path.read_bytes())
    where = data.find(stored)
    assert where >= 0, "the event's bytes are not in the data file"
    assert data.find(stored, where + 1) < 0, "the event's bytes are in the data file twice"
    at = where + (len(stored) // 2 if offset is None else offset)
    data[at] ^= 0x01
    path.write_bytes(bytes(data))


def hide_index_entry(
    project_ledger: Path, index: str, key: str, hidden: Callable[[], bool], which: int = 0
) -> None:
    """Flip one byte of the ledger's first entry (or the ``which``-th, from 0) under
    ``(index, key)`` so that what it files is no longer found: ``hidden()`` says when it is
    not.

    The byte is the last of the digest head the entry holds: the first entry's record (tag,
    prefix, sequence number) is followed in the page by the head, and each later one is
    stored in that record as its sequence number then its head, or heads a record of its own
    (the first of a later commit's run). The data file may also hold
    stale copies of the record (pages LMDB has since rewritten); the copy that counts is the
    one whose flip hides the event, so each copy is tried in turn. The ledger must be closed.
    """
    with open_ledger(project_ledger) as ledger, ledger.snapshot() as snapshot:
        entries = list(snapshot.index_entries(index_prefix(index, key)))
    entry, digest = entries[which]
    # An entry heads a record of its own (the first under the prefix in its run), or is
    # stored inside the first entry's record as its sequence number then its head (its 12
    # bytes, looked for there alone, not in another table's page holding the same bytes).
    own = INDEX_TAG + entry + digest
    first = INDEX_TAG + entries[0][0] + entries[0][1]
    places = [(own, own, 0)]
    if which:
        places.append((first, entry[-8:] + digest, 12 * len(entries)))
    path = data_file(project_ledger)
    data = bytearray(path.read_bytes())
    for record, needle, within in places:
        at = data.find(record)
        while at >= 0:
            found = data.find(needle, at, at + len(record) + within)
            if found >= 0:
                spot = found + len(needle) - 1
                data[spot] ^= 0x01
                path.write_bytes(bytes(data))
                if hidden():
                    return
                data[spot] ^= 0x01  # a stale copy: put it back and try the next
                path.write_bytes(bytes(data))
            at = data.find(record, at + 1)
    raise AssertionError("no live copy of the index entry was found")
