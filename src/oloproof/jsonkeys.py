"""Names given once: JSON objects whose keys are each given once, and the first repeat of any
sequence of ids.

JSON leaves an object that names a key twice undefined, and Python's parser keeps the last
value without a word, so ``{"id": "a", "id": "b"}`` would silently be case ``b``. Every JSON
that Oloproof reads as input (cases, schema and passage files, labels, a judge's reply, a
system's response) goes through ``unique_keys`` and is refused, or counted unreadable, instead.

Ids that name things (case and label ids, rule ids, criteria, slices) are refused at their first
repeat, and ``first_repeat`` is the one search for it, so each check names the same item.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from typing import Any, TypeVar

T = TypeVar("T")


def first_repeat(
    items: Iterable[T], key: Callable[[T], Hashable] | None = None
) -> tuple[T, T] | None:
    """The first item whose key an earlier item has, after that earlier item (its first
    occurrence); None when every key is given once. The key is the item itself without ``key``.

    ``items`` is read in order and no further than the repeat, so a generator that checks each
    item as it makes it has the file's first mistake reported, whether a repeat or a later one.
    """
    first: dict[Hashable, T] = {}
    for item in items:
        name = item if key is None else key(item)
        if name in first:
            return first[name], item
        first[name] = item
    return None


class DuplicateKey(ValueError):
    """An object names ``key`` twice."""

    def __init__(self, key: str) -> None:
        super().__init__(f"the key {key!r} appears twice in one object")
        self.key = key


def unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """An ``object_pairs_hook``: the object, or ``DuplicateKey`` for its first repeated key."""
    found = dict(pairs)
    if len(found) != len(pairs):
        repeat = first_repeat(key for key, _ in pairs)
        if repeat is not None:
            raise DuplicateKey(repeat[1])
    return found
