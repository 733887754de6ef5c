"""Reading a case's fields by dotted path, the way every evaluator reads them.

``field: answer`` reads ``output["answer"]``; ``field: result.answer`` reads
``output["result"]["answer"]``; a segment of digits indexes a list. A plain-string output is read
whole when the path is the default (``answer``) or None.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

DEFAULT_FIELD: Final = "answer"


class _Missing:
    """The marker ``read_path`` returns when a path names nothing."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Final = _Missing()


def parse_path(path: str | None) -> tuple[str, ...] | None:
    """Split a dotted field path once, at build time; None means "the whole value"."""
    return None if path is None else tuple(path.split("."))


def read_path(value: Any, path: tuple[str, ...] | None) -> Any:
    """Follow ``path`` through nested mappings (and lists, by index); ``MISSING`` when absent."""
    if path is None:
        return value
    for key in path:
        if isinstance(value, (dict, Mapping)):  # dict first: the common, fast case
            if key not in value:
                return MISSING
            value = value[key]
        elif isinstance(value, Sequence) and not isinstance(value, str) and key.isdigit():
            index = int(key)
            if index >= len(value):
                return MISSING
            value = value[index]
        else:
            return MISSING
    return value


def read_output(output: Any, path: tuple[str, ...] | None) -> Any:
    """The output field an evaluator judges; a plain-string output is read whole by default."""
    if isinstance(output, str) and path == (DEFAULT_FIELD,):
        return output
    return read_path(output, path)
