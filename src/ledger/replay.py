"""Replay: derived state is a pure fold over events, with no I/O of its own."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TypeVar

__all__ = ["fold"]

S = TypeVar("S")
E = TypeVar("E")


def fold(events: Iterable[E], reducer: Callable[[S, E], S], init: S) -> S:
    """Apply ``reducer(state, event)`` to each event in order, starting from ``init``.

    ``events`` is typically ``ledger.events(...)`` (pairs of address and event) or a list;
    the reducer should return a new state rather than change the one it was given.
    """
    state = init
    for event in events:
        state = reducer(state, event)
    return state
