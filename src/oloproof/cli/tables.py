"""Boxed tables: as wide as their cells in a pipe, folded to the terminal's width on one.

Fitting shrinks the widest column one character at a time until the table fits (no column
below ``MIN_COLUMN`` or its header), then folds each cell onto as many lines as it needs,
breaking after a space, ``_``, ``-``, ``/`` or ``·`` where it can and inside a word only where
it must. A folded row's continuation lines leave the cells that did not fold blank.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

MIN_COLUMN = 6
"""Columns never shrink below this many characters (or their header's length)."""

Paint = Callable[[int, str], str]
"""Colours one cell: (column index, the padded plain text) -> the text to print."""

_BREAK_AFTER = " _-/·"


def table(
    header: Sequence[str],
    rows: Sequence[Sequence[str]],
    *,
    width: int | None = None,
    paint: Paint | None = None,
) -> list[str]:
    """The table's lines; ``width`` None gives every column its widest cell."""
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    if width is not None:
        widths = _fit(widths, header, width)

    def lines(cells: Sequence[str], painted: bool) -> list[str]:
        folded = [fold(str(c), w) for c, w in zip(cells, widths, strict=True)]
        height = max(len(f) for f in folded)
        out = []
        for i in range(height):
            parts = []
            for column, (parts_of_cell, w) in enumerate(zip(folded, widths, strict=True)):
                text = parts_of_cell[i] if i < len(parts_of_cell) else ""
                padded = text.ljust(w)
                parts.append(paint(column, padded) if painted and paint and text else padded)
            out.append("│ " + " │ ".join(parts) + " │")
        return out

    def rule(left: str, mid: str, right: str) -> str:
        return left + mid.join("─" * (w + 2) for w in widths) + right

    body = [line for r in rows for line in lines(r, True)]
    return [
        rule("┌", "┬", "┐"),
        *lines(header, False),
        rule("├", "┼", "┤"),
        *body,
        rule("└", "┴", "┘"),
    ]


def _fit(widths: list[int], header: Sequence[str], width: int) -> list[int]:
    frame = 3 * len(widths) + 1  # "│ " + " │ " between columns + " │"
    floors = [min(w, max(MIN_COLUMN, len(h))) for w, h in zip(widths, header, strict=True)]
    fitted = list(widths)
    while sum(fitted) + frame > width:
        candidates = [i for i, w in enumerate(fitted) if w > floors[i]]
        if not candidates:
            break  # as narrow as it goes: the terminal wraps the rest
        widest = max(candidates, key=lambda i: fitted[i])
        fitted[widest] -= 1
    return fitted


def fold(text: str, width: int) -> list[str]:
    """``text`` cut into lines of at most ``width`` characters, at break points if possible."""
    if len(text) <= width:
        return [text]
    out: list[str] = []
    rest = text
    while len(rest) > width:
        cut = max((rest.rfind(c, 0, width) for c in _BREAK_AFTER), default=-1)
        if cut <= 0:
            cut = width  # no break point: cut the word
        else:
            cut += 1  # keep the separator at the end of the line
        out.append(rest[:cut].rstrip())
        rest = rest[cut:].lstrip(" ")
    if rest:
        out.append(rest)
    return out
