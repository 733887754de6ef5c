""" "Did you mean …?": the closest allowed name to a mistyped one, and files of the wrong kind.

Requirements:

1. ``did_you_mean(word, allowed)`` is ``"; did you mean 'x'?"`` for the allowed name most like
   ``word`` (difflib's ratio, at least ``CUTOFF``), else ``""``, so a message reads the same
   with or without a suggestion.
2. ``wrong_kind(data, expected)`` recognises a project file, a release policy and a comparison
   policy from their keys, and when ``data`` is not the ``expected`` kind returns a sentence
   naming what it is and which command reads it: ``oloproof run --policy compare.yaml`` says
   "this is a comparison policy", not that a key is unknown.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from typing import Any, Literal

CUTOFF = 0.6
"""difflib's similarity ratio a name must reach to be suggested (its own default)."""

FileKind = Literal["config", "policy", "compare_policy"]

_READERS: dict[FileKind, str] = {
    "config": "a project file (oloproof.yaml); `oloproof run --config` reads it",
    "policy": "a release policy; `oloproof run --policy` (or `policy:` in oloproof.yaml) reads it",
    "compare_policy": "a comparison policy; `oloproof compare --policy` reads it",
}
_EXPECTED: dict[FileKind, str] = {
    "config": "a project file",
    "policy": "a release policy",
    "compare_policy": "a comparison policy",
}
_COMPARISON_TESTS = frozenset({"non_inferiority", "superiority", "equivalence"})
_RELEASE_KEYS = frozenset({"min", "max", "kind", "max_failures", "judge"})


def closest(word: str, allowed: Iterable[str]) -> str | None:
    """The allowed name most like ``word``, or None when none is close."""
    found = difflib.get_close_matches(word, list(allowed), n=1, cutoff=CUTOFF)
    return found[0] if found else None


def did_you_mean(word: str, allowed: Iterable[str]) -> str:
    """``"; did you mean 'x'?"``, or ``""`` when nothing allowed is close to ``word``."""
    match = closest(word, allowed)
    return f"; did you mean {match!r}?" if match is not None else ""


def kind_of(data: Mapping[str, Any]) -> FileKind | None:
    """Which of the three YAML files ``data`` looks like, from its keys (None: cannot tell)."""
    if "system" in data or "evaluators" in data or "dataset" in data:
        return "config"
    rules = data.get("rules")
    if not isinstance(rules, list):
        return None
    keys: set[str] = set()
    for rule in rules:
        if isinstance(rule, Mapping):
            keys |= set(rule)
            # `kind: non_inferiority` is a comparison rule written as a release rule names
            # its kind: the file is not recognisably a release policy, whatever `kind` is.
            test = kind_naming_a_test("kind", rule.get("kind"))
            if test is not None:
                keys.add(test)
    if keys & _COMPARISON_TESTS:
        # Beside a release rule's bounds (`judge:` both kinds take), it is neither: a release
        # policy with one comparison rule is not to be sent to `compare`, which would refuse
        # its other rules in turn; its first fault, with its line, says more.
        return None if keys & (_RELEASE_KEYS - {"judge"}) else "compare_policy"
    if keys & _RELEASE_KEYS:
        return "policy"
    return None


def kind_naming_a_test(key: object, value: object) -> str | None:
    """The comparison test a rule's ``kind: non_inferiority`` names (a comparison rule
    written as a release rule names its kind), else None."""
    if key == "kind" and isinstance(value, str) and value in _COMPARISON_TESTS:
        return value
    return None


def wrong_kind(data: Mapping[str, Any], expected: FileKind) -> str | None:
    """``"this is a comparison policy; `oloproof compare --policy` reads it (expected …)"``
    when ``data`` is recognisably another kind of file than ``expected``, else None."""
    found = kind_of(data)
    if found is None or found == expected:
        return None
    return f"this is {_READERS[found]} (expected {_EXPECTED[expected]} here)"


def allowed_keys(root: Any, loc: tuple[Any, ...], data: Any) -> list[str]:
    """The keys a pydantic model allows where ``loc`` (the data path of an unknown key) is.

    Walks the model's field types beside the data: lists and dicts by their item type, unions
    by the member whose ``type`` tag the data names (or the one model member). Empty when the
    walk cannot tell.
    """
    target: Any = root
    value: Any = data
    for part in loc[:-1]:
        target = _member(target, value)
        if isinstance(part, int) and isinstance(value, list) and 0 <= part < len(value):
            target, value = _item_type(target), value[part]
        elif isinstance(part, str) and isinstance(value, Mapping):
            target, value = _field_type(target, part), value.get(part)
        else:
            return []
        if target is None:
            return []
    target = _member(target, value)
    fields = getattr(target, "model_fields", None)
    if not isinstance(fields, dict):
        return []
    return [field.alias or name for name, field in fields.items()]


def _models(annotation: Any) -> list[Any]:
    """The model classes an annotation names through any nesting of Annotated and unions."""
    import types
    import typing

    if hasattr(annotation, "model_fields"):
        return [annotation]
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _models(typing.get_args(annotation)[0])
    if origin in (typing.Union, types.UnionType):
        return [m for arg in typing.get_args(annotation) for m in _models(arg)]
    return []


def _member(annotation: Any, value: Any) -> Any:
    """A union (or ``Annotated`` union) narrowed to the model ``value`` selects; a container
    type is returned as it is (its items are narrowed when the walk reaches them)."""
    import types
    import typing

    while typing.get_origin(annotation) is typing.Annotated:
        annotation = typing.get_args(annotation)[0]
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        present = [m for m in typing.get_args(annotation) if m is not type(None)]
        if len(present) == 1:
            return _member(present[0], value)
    members = _models(annotation)
    if not members or hasattr(annotation, "model_fields"):
        return annotation
    if len(members) == 1:
        return members[0]
    tag = value.get("type") if isinstance(value, Mapping) else None
    for member in members:
        field = member.model_fields.get("type")
        if field is not None and tag in typing.get_args(field.annotation):
            return member
    return annotation


def _field_type(model: Any, name: str) -> Any:
    fields = getattr(model, "model_fields", None)
    if not isinstance(fields, dict):
        return None
    for key, field in fields.items():
        if name in (key, field.alias):
            return field.annotation
    return None


def _item_type(annotation: Any) -> Any:
    import typing

    args = typing.get_args(annotation)
    return args[-1] if args else None
