"""A sequence whose items are made only when read.

For what would cost far more held than remade: a cases file's cases (parsed again from its
compressed lines), a resumed run's remaining cases, a diagnosis's parent cases (read from the
ledger), a diagnosis's packed case ids.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Iterator, Sequence
from typing import TypeVar, overload

T = TypeVar("T")


class LazySequence(Sequence[T]):
    """Items made only when read: ``_item`` makes the one at a position (counted from 0, within
    ``len``), and indexing, slicing and iterating go through it, so none is held."""

    @abstractmethod
    def _item(self, i: int) -> T: ...

    @overload
    def __getitem__(self, index: int) -> T: ...

    @overload
    def __getitem__(self, index: slice) -> list[T]: ...

    def __getitem__(self, index: int | slice) -> T | list[T]:
        if isinstance(index, slice):
            return [self._item(i) for i in range(len(self))[index]]
        return self._item(range(len(self))[index])

    def __iter__(self) -> Iterator[T]:
        for i in range(len(self)):
            yield self._item(i)
