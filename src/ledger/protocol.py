"""``ReadStore``: what the ledger and an archive reader both offer for reading."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Protocol, runtime_checkable

from ledger.event import Event

__all__ = ["ReadStore"]


@runtime_checkable
class ReadStore(Protocol):
    """Read access to stored events and refs, whatever holds them."""

    def get(self, address: str) -> Event: ...

    def get_bytes(self, address: str) -> bytes: ...

    def has(self, address: str) -> bool: ...

    def events(self, type: str | None = None) -> Iterator[tuple[str, Event]]: ...

    def resolve(self, text: str) -> str: ...

    def get_ref(self, name: str) -> str | None: ...

    def refs(self, prefix: str = "") -> list[tuple[str, str]]: ...

    def __len__(self) -> int: ...
