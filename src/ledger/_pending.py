"""What a batch holds until it commits: new events and ref changes, in the order they were made.

No LMDB here. The write path (``ledger._writes``) fills a ``_Pending`` and commits it in one
transaction; the reads (``ledger._reads``) look in the open batch's ``_Pending`` too, so a batch
sees its own events before they are committed.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Final, Literal


class _Whatever(enum.Enum):
    ANY = "ANY"


ANY: Final = _Whatever.ANY
"""``set_ref``'s default ``expected``: set the ref whatever it holds now."""


@dataclass(slots=True)
class _RefOp:
    name: bytes
    digest: bytes
    expected: bytes | Literal[_Whatever.ANY] | None


class _Pending:
    """Events and ref changes waiting for a commit, in the order they were made.

    Events are kept as bytes and tuples of bytes in two dicts rather than one object each, so
    a batch of many thousands of events gives the garbage collector nothing new to traverse.
    """

    def __init__(self) -> None:
        self.data: dict[bytes, bytes] = {}  # digest -> canonical bytes
        self.prefixes: dict[bytes, tuple[bytes, ...]] = {}  # digest -> index entry prefixes
        self.size = 0  # bytes of events held
        self.refs: list[_RefOp] = []

    def add(self, digest: bytes, data: bytes, prefixes: tuple[bytes, ...]) -> None:
        if digest not in self.data:
            self.data[digest] = data
            self.prefixes[digest] = prefixes
            self.size += len(data)

    def truncate(self, n_events: int, n_refs: int) -> None:
        """Drop everything added after the first ``n_events`` events and ``n_refs`` refs."""
        for digest in list(self.data)[n_events:]:
            self.size -= len(self.data.pop(digest))
            del self.prefixes[digest]
        del self.refs[n_refs:]

    def __bool__(self) -> bool:
        return bool(self.data or self.refs)
