"""JSON objects whose keys are each given once.

JSON leaves an object that names a key twice undefined, and Python's parser keeps the last
value without a word, so ``{"id": "a", "id": "b"}`` would silently be case ``b``. Every JSON
that Oloproof reads as input (cases, schema and passage files, labels, a judge's reply, a
system's response) goes through ``unique_keys`` and is refused, or counted unreadable, instead.
"""

from __future__ import annotations

from typing import Any


class DuplicateKey(ValueError):
    """An object names ``key`` twice."""

    def __init__(self, key: str) -> None:
        super().__init__(f"the key {key!r} appears twice in one object")
        self.key = key


def unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """An ``object_pairs_hook``: the object, or ``DuplicateKey`` for its first repeated key."""
    found = dict(pairs)
    if len(found) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise DuplicateKey(key)
            seen.add(key)
    return found
