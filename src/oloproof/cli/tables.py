"""Boxed tables: as wide as their cells in a pipe, folded to the terminal's width on one.

Fitting shrinks the widest column one character at a time until the table fits (no column
below its longest word while that can fit, else below ``MIN_COLUMN``), then folds each cell
onto as many lines as it needs, breaking after a space, ``_``, ``-``, ``/`` or ``·`` where it
can and inside a word only where it must. A folded row's continuation lines leave the cells
that did not fold blank.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from oloproof.redaction import redact_text

MIN_COLUMN = 5
"""Columns never shrink below this many characters."""

Paint = Callable[[int, str], str]
"""Colours one cell: (column index, the padded plain text) -> the text to print."""

_BREAK_AFTER = " _-/·"


def table(
    header: Sequence[str],
    rows: Sequence[Sequence[str]],
    *,
    width: int | None = None,
    paint: Paint | None = None,
    whole: Sequence[int] = (),
) -> list[str]:
    """The table's lines; ``width`` None gives every column its widest cell. Columns in
    ``whole`` (an outcome, say) never fold while the table can fit without folding them."""
    # Secrets replaced before cells are measured and folded (``fold``)
    rows = [[redact_text(str(c)) for c in r] for r in rows]
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    if width is not None:
        widths = _fit(widths, header, rows, width, whole)

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


def _fit(
    widths: list[int],
    header: Sequence[str],
    rows: Sequence[Sequence[str]],
    width: int,
    whole: Sequence[int],
) -> list[int]:
    frame = 3 * len(widths) + 1  # "│ " + " │ " between columns + " │"
    # Shrink no column below its longest word, so folding never cuts one, while that fits;
    # past it, down to MIN_COLUMN.
    words = [max(_longest_word(str(r[i])) for r in [header, *rows]) for i in range(len(widths))]
    floors = [min(w, max(MIN_COLUMN, word)) for w, word in zip(widths, words, strict=True)]
    kept = [w if i in whole else f for i, (w, f) in enumerate(zip(widths, floors, strict=True))]
    if sum(kept) + frame <= width:
        floors = kept
    elif sum(floors) + frame > width:
        floors = [min(w, MIN_COLUMN) for w in widths]
    fitted = list(widths)
    while sum(fitted) + frame > width:
        candidates = [i for i, w in enumerate(fitted) if w > floors[i]]
        if not candidates:
            break  # as narrow as it goes: the terminal wraps the rest
        widest = max(candidates, key=lambda i: fitted[i])
        fitted[widest] -= 1
    return fitted


def _longest_word(text: str) -> int:
    longest = current = 0
    for char in text:
        current += 1
        if char in _BREAK_AFTER:
            longest, current = max(longest, current - (char == " ")), 0
    return max(longest, current)


def fit_lines(lines: Sequence[str], width: int | None) -> list[str]:
    """Lines of text folded to ``width`` (continuations indented two spaces more); table
    lines, already fitted, pass unchanged. ``width`` None leaves every line as it is."""
    if width is None:
        return list(lines)
    out: list[str] = []
    for line in lines:
        if len(line) <= width or line[:1] in "│┌├└":
            out.append(line)
            continue
        indent = len(line) - len(line.lstrip(" ")) + 2
        first, *rest = fold(line, width)
        out.append(first)
        for part in rest:
            out += [" " * indent + p for p in fold(part, width - indent)]
    return out


def fold(text: str, width: int) -> list[str]:
    """``text`` cut into lines of at most ``width`` characters, at break points if possible.
    Secrets are replaced first: the printed stream could not recognise one cut in two."""
    text = redact_text(text)
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
