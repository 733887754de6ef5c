"""``Application``: what a program built on the ledger tells it about itself.

The ledger knows nothing of what its events mean. A program that keeps its history in one passes
an ``Application`` to ``open_ledger`` (and the archive functions) saying:

- ``name``: how messages name the program (``this <name> reads ledger formats up to 2``);
- ``archive_magic``: the bytes its archives start with, so an archive of one program is not
  taken for another's;
- ``indexer``: the secondary indexes it files events under (see ``ledger.Indexer``);
- ``indexes``: a name for the indexer's current rules, changed whenever they change. A ledger
  whose indexes were filed under another name has them rebuilt from its events when next
  opened for writing, and is refused when opened read-only (its lookups would miss entries);
- ``upcast``: how it reads an event written by an older schema of its type, applied to every
  event a read returns. It may raise a ``LedgerError`` (an ``UnsupportedFormatError`` for a
  schema newer than the program) to refuse an event it cannot read; ``verify`` lists those.
- ``expand``: how it reads an event that keeps part of its content in other events it refers
  to (a value shared by many events, stored once). Given the event as stored and a ``Fetch``
  of other events (as stored and upcast, not expanded), it returns the event as the program
  reads it. Applied to every event a read returns, before ``upcast``; not applied to what
  the indexer, ``verify``'s hashing or an archive's closure see, which is the stored event.

``Links`` is the other half, given to ``export_archive``: which events travel with an event
besides those its ``refs`` name.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Final

from ledger.event import Event

__all__ = [
    "DEFAULT_ARCHIVE_MAGIC",
    "Application",
    "Expander",
    "Fetch",
    "Indexer",
    "Links",
    "Upcaster",
]

Indexer = Callable[[str, Event], Iterable[tuple[str, str]]]
"""Given a new event's address and the event, yield ``(index_name, key)`` pairs."""

Upcaster = Callable[[str, Event], Event]
"""Given a stored event's address and the event as stored, return it as the program reads it."""

Fetch = Callable[[Sequence[str]], list[Event]]
"""The events at some addresses, in order, as stored and upcast (``UnknownAddressError`` for one
that is not stored)."""

Expander = Callable[[str, Event, Fetch], Event]
"""Given a stored event's address, the event as stored and a ``Fetch``, return it as the program
reads it."""

DEFAULT_ARCHIVE_MAGIC: Final = b"\x89ledger-archive\r\n\x1a\n"


@dataclass(frozen=True)
class Application:
    """A program's name, archive magic, indexes, upcasting and expansion (see the module)."""

    name: str = "ledger"
    archive_magic: bytes = DEFAULT_ARCHIVE_MAGIC
    indexer: Indexer | None = None
    upcast: Upcaster | None = None
    indexes: str = ""
    expand: Expander | None = None

    def __post_init__(self) -> None:
        magic = self.archive_magic
        if not isinstance(magic, bytes) or not 8 <= len(magic) <= 64:
            raise ValueError("an archive magic must be 8 to 64 bytes")


@dataclass(frozen=True)
class Links:
    """What an archive of an event carries besides the events its ``refs`` name.

    ``follow(address, event)`` yields ``(index_name, key)`` pairs: every event filed under one
    travels too (a run's case results, filed under its id, say). ``names(address, event)``
    yields names of refs that travel with the event when they point at it (the run's id): an
    import refuses to move one that points elsewhere. ``defaults(address, event)`` yields
    names that travel the same way but are only defaults (``latest``): an import sets one
    where no ref has that name yet and leaves an existing one alone. All three are applied
    again to every event they bring in, so the archive is closed under them.
    """

    follow: Callable[[str, Event], Iterable[tuple[str, str]]] | None = None
    names: Callable[[str, Event], Iterable[str]] | None = None
    defaults: Callable[[str, Event], Iterable[str]] | None = None
