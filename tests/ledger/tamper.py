"""Damage a closed ledger on disk the way a bad disk or a person would: one byte at a time."""

from __future__ import annotations

from pathlib import Path


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
