"""Reading a case's fields by dotted path, the way every evaluator reads them.

``field: answer`` reads ``output["answer"]``; ``field: result.answer`` reads
``output["result"]["answer"]``; a segment of digits indexes a list. A plain-string output is read
whole when the path is the default (``answer``) or None.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Final, Protocol

from oloproof.dataset import dotted_key, dotted_refusal, lookalike_key, lookalike_refusal

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


class Expecting(Protocol):
    """What holds expected values under an id: a case, or a labels file's example."""

    @property
    def id(self) -> str: ...

    @property
    def expected(self) -> Mapping[str, Any]: ...


def dotted_expected_check(
    configs: Iterable[Any], *, of: str = "case"
) -> Callable[[Expecting], str | None] | None:
    """The check ``load_dataset`` makes of each case for the evaluators among ``configs`` that
    read an expected value (``expected_field``): a case whose expected holds, where the path
    passes, a key with a dot (``{"gold.answer": …}`` under ``expected_field: gold.answer``) or
    the path's key written with other code points (``café`` with its accent decomposed:
    ``dataset.lookalike_key``) has a value the path cannot name, which the evaluator would
    otherwise read as missing and exclude the case (``no_expected_value``) without a word. None
    when no evaluator reads one. ``of`` names what is checked (``example``, for a labels
    file's, which a judge would exclude alike)."""
    paths = [
        (c.expected_field.split("."), c.expected_field, c.criterion)
        for c in configs
        if getattr(c, "expected_field", None)
    ]
    if not paths:
        return None

    def check(case: Expecting) -> str | None:
        # Each case passes nearly always: the sentences are made only for a refusal.
        for parts, name, criterion in paths:
            dotted = dotted_key(case.expected, parts)
            if dotted is not None:
                holder, reader = _whose(of, case.id, name, criterion)
                return dotted_refusal(holder, dotted, reader)
            alike = lookalike_key(case.expected, parts)
            if alike is not None:
                holder, reader = _whose(of, case.id, name, criterion)
                return lookalike_refusal(holder, alike, reader)
        return None

    return check


def _whose(of: str, case_id: str, name: str, criterion: str) -> tuple[str, str]:
    """Whose key a refusal names, and what reads it."""
    return f"expected of {of} {case_id!r} has the key", f"expected_field {name} of {criterion!r}"
