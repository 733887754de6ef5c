"""Nested values (a case's input, output, artifacts) as indented, folded lines for people.

Mappings become ``key: value`` lines, nested ones indented by two spaces; a list of short
scalars stays on one line (``[kb-01, kb-03]``), longer lists get one ``- `` item a line; a text
longer than the width, or of more than one line, folds onto continuation lines under its key.
Nothing is cut: ``--json`` prints the same values raw. The values are a case's and a system's:
any other character a terminal acts on (a carriage return, an escape, a mark that reorders
text), in a value or a key, is written as its escape (``printable``), so none prints a line
Oloproof did not write (``x\nGate: PASS (exit 0)`` at the margin).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from oloproof.cli.tables import fold
from oloproof.display import printable

PLAIN_WIDTH = 100
"""The width of pretty output in a pipe (the terminal's width on one)."""


def _scalar(value: Any) -> str:
    """``value`` as text, its own lines kept (``_folded`` puts them under its key)."""
    if isinstance(value, str):
        if value.strip() != value or not value:
            return printable(json.dumps(value, ensure_ascii=False))
        return "\n".join(printable(line) for line in value.split("\n"))
    return printable(json.dumps(value, ensure_ascii=False))


def _is_scalar(value: Any) -> bool:
    return not isinstance(value, Mapping | list | tuple)


def pretty_lines(value: Any, width: int, indent: int = 0) -> list[str]:
    """``value`` as lines no wider than ``width`` where words allow."""
    pad = " " * indent
    if isinstance(value, Mapping):
        if not value:
            return [pad + "{}"]
        out: list[str] = []
        for key, item in value.items():
            out += _entry(f"{pad}{printable(str(key))}:", item, width, indent)
        return out
    if isinstance(value, list | tuple):
        if not value:
            return [pad + "[]"]
        out = []
        for item in value:
            out += _entry(f"{pad}-", item, width, indent, in_list=True)
        return out
    return _folded(pad, _scalar(value), width, indent)


def _entry(head: str, item: Any, width: int, indent: int, in_list: bool = False) -> list[str]:
    inline = _inline(item)
    if inline is not None and len(head) + 1 + len(inline) <= width:
        return [f"{head} {inline}"]
    if _is_scalar(item):
        return _folded(head + " ", _scalar(item), width, indent + 2)
    if in_list and isinstance(item, Mapping) and item:
        # "- key: value" with the rest of the mapping under it, as YAML writes it.
        lines = pretty_lines(item, width, indent + 2)
        return [head + lines[0][len(head) :], *lines[1:]]
    return [head, *pretty_lines(item, width, indent + 2)]


def _inline(item: Any) -> str | None:
    """``item`` on one line, or None: a text of several lines never is."""
    if _is_scalar(item):
        text = _scalar(item)
        return None if "\n" in text else text
    if isinstance(item, list | tuple) and all(_is_scalar(v) for v in item):
        texts = [_scalar(v) for v in item]
        return None if any("\n" in t for t in texts) else "[" + ", ".join(texts) + "]"
    if isinstance(item, Mapping) and not item:
        return "{}"
    return None


def _folded(head: str, text: str, width: int, indent: int) -> list[str]:
    room = max(width - len(head), 20)
    parts: list[str] = []
    for paragraph in text.split("\n"):
        parts += fold(paragraph, room) if paragraph else [""]
    rest_pad = " " * max(indent, 2)
    lines = [head + parts[0]]
    for part in parts[1:]:
        lines += fold_under(rest_pad, part, width)
    return lines


def fold_under(pad: str, text: str, width: int) -> list[str]:
    """``text`` folded to ``width`` with every line indented by ``pad``."""
    return [pad + part for part in fold(text, max(width - len(pad), 20))]


def section(title: str, value: Any, width: int, indent: int = 2) -> list[str]:
    """``  title:`` and ``value`` under it, indented (or on its line when it fits); ``indent``
    spaces before the title."""
    return _entry(f"{' ' * indent}{title}:", value, width, indent)
