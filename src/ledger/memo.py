"""A bounded memo of answers lately given, for checks that stream through a whole ledger."""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class Recent(Generic[K, V]):
    """Answers for the keys lately asked for, in two generations of at most ``size`` each:
    when the newer is full it becomes the older, and the older is dropped. Memory is bounded
    whatever the number of keys a pass meets, and a key asked for again before ``size`` others
    were first asked for is still answered from memory: a dict emptied when full would forget
    the keys every event asks for (its run, its corpus) along with the keys it met once."""

    __slots__ = ("_newer", "_older", "_size")

    def __init__(self, size: int) -> None:
        self._size = size
        self._newer: dict[K, V] = {}
        self._older: dict[K, V] = {}

    def get(self, key: K, compute: Callable[[K], V]) -> V:
        """The answer for ``key``: remembered, or ``compute(key)`` remembered."""
        newer = self._newer
        if key in newer:
            return newer[key]
        older = self._older
        value = older[key] if key in older else compute(key)
        if len(newer) >= self._size:
            self._older = newer
            newer = self._newer = {}
        newer[key] = value
        return value
