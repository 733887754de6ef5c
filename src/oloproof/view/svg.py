"""Pictures drawn on the server as inline SVG: interval bars, the forest plot, a ranking.

Each function returns markup whose every piece of text passes through ``_text`` (a case's
document ids are user data). Every picture carries a ``<title>`` that says in words what it
shows, and the page beside it prints the same numbers, so nothing is known from the picture
alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from markupsafe import Markup, escape

from oloproof.display import unreordered

_W = 320  # drawing width of a bar, in px
_PAD = 10


def _text(text: str) -> Markup:
    """``text`` escaped, each mark that reorders text written as its escape (``\\u202e``), as
    every page writes text from the ledger."""
    return escape(unreordered(text))


def _x(value: float, lo: float, hi: float, width: int = _W) -> float:
    span = hi - lo or 1.0
    return round(_PAD + (min(max(value, lo), hi) - lo) / span * (width - 2 * _PAD), 2)


def interval_bar(
    *,
    estimate: float | None,
    lower: float | None,
    upper: float | None,
    thresholds: Sequence[float] = (),
    title: str,
    lo: float = 0.0,
    hi: float = 1.0,
) -> Markup:
    """One interval on a scale from ``lo`` to ``hi`` with a line at each of ``thresholds``."""
    h = 30
    parts = [
        f'<svg class="bar" role="img" width="{_W}" height="{h}" viewBox="0 0 {_W} {h}">',
        f"<title>{_text(title)}</title>",
        f'<line class="axis" x1="{_PAD}" x2="{_W - _PAD}" y1="20" y2="20"/>',
    ]
    for tick in (lo, (lo + hi) / 2, hi):
        x = _x(tick, lo, hi)
        parts.append(f'<line class="tick" x1="{x}" x2="{x}" y1="17" y2="23"/>')
    if lower is not None and upper is not None:
        x1, x2 = _x(lower, lo, hi), _x(upper, lo, hi)
        parts.append(f'<rect class="interval" x="{x1}" y="8" width="{x2 - x1}" height="8"/>')
    if estimate is not None:
        parts.append(f'<circle class="estimate" cx="{_x(estimate, lo, hi)}" cy="12" r="4"/>')
    for threshold in thresholds:
        x = _x(threshold, lo, hi)
        parts.append(f'<line class="threshold" x1="{x}" x2="{x}" y1="2" y2="28"/>')
    parts.append("</svg>")
    return Markup("".join(parts))


@dataclass(frozen=True)
class ForestRow:
    label: str
    estimate: float
    lower: float
    upper: float
    # The rules' margins in the same units, signed as the rules compare the interval with them
    # (``report.rule_margins``): -m for non-inferiority, +m for superiority, both for equivalence.
    margins: tuple[float, ...] = ()


def forest_plot(rows: Sequence[ForestRow], *, title: str) -> Markup:
    """Paired differences (points) with their intervals, one row each, against zero and margins."""
    label_w, width, row_h = 150, 520, 26
    values = [v for r in rows for v in (r.lower, r.upper, *r.margins)]
    lo, hi = min([*values, -5.0]), max([*values, 5.0])
    pad = (hi - lo) * 0.05
    lo, hi = max(lo - pad, -100.0), min(hi + pad, 100.0)
    plot_w = width - label_w
    height = row_h * len(rows) + 30

    def x(v: float) -> float:
        return round(label_w + (v - lo) / (hi - lo) * (plot_w - _PAD), 2)

    parts = [
        f'<svg class="forest" role="img" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}">',
        f"<title>{_text(title)}</title>",
        f'<line class="zero" x1="{x(0)}" x2="{x(0)}" y1="0" y2="{height - 20}"/>',
        f'<text class="scale" x="{x(0)}" y="{height - 6}" text-anchor="middle">0</text>',
        f'<text class="scale" x="{x(lo) + 2}" y="{height - 6}">{lo:+.0f}</text>',
        f'<text class="scale" x="{x(hi)}" y="{height - 6}" text-anchor="end">{hi:+.0f}</text>',
    ]
    for i, row in enumerate(rows):
        y = i * row_h + row_h / 2 + 2
        parts.append(f'<text class="label" x="4" y="{y + 4}">{_text(row.label)}</text>')
        for m in row.margins:
            top, bottom = y - row_h / 2 + 2, y + row_h / 2 - 2
            parts.append(f'<line class="margin" x1="{x(m)}" x2="{x(m)}" y1="{top}" y2="{bottom}"/>')
        parts.append(
            f'<line class="diff" x1="{x(row.lower)}" x2="{x(row.upper)}" y1="{y}" y2="{y}"/>'
        )
        parts.append(f'<circle class="estimate" cx="{x(row.estimate)}" cy="{y}" r="4"/>')
    parts.append("</svg>")
    return Markup("".join(parts))


@dataclass(frozen=True)
class Ranked:
    position: int
    doc_id: str
    chunk_id: str | None
    score: float | None
    relevant: bool | None  # None: the retrieval metrics read relevance in different units
    counted_at: int | None  # a relevant unit retrieved again: the position the metrics count
    in_context: bool
    dropped: str | None  # why it was left out of the context, when it was
    tokens: int | None

    @property
    def name(self) -> str:
        """``kb-01``, or ``kb-01 chunk c2`` for a passage recorded with its chunk."""
        return self.doc_id if self.chunk_id is None else f"{self.doc_id} chunk {self.chunk_id}"

    @property
    def relevance(self) -> str:
        """``yes``, ``no``, ``yes, counted at 1`` for a repeat, ``—`` for no one answer."""
        if self.relevant is None:
            return "—"
        if not self.relevant:
            return "no"
        return "yes" if self.counted_at is None else f"yes, counted at {self.counted_at}"


def ranking(
    items: Sequence[Ranked], *, top_k: int | None, budget: int | None, title: str
) -> Markup:
    """A retrieval's candidates in rank order: score bars, relevant ones marked, the top-k cut
    as a line under position ``top_k``, and the running token count against the budget."""
    row_h, width, bar_x, bar_w = 24, 560, 190, 200
    head = 20  # a line for the legend above the rows
    height = head + row_h * max(len(items), 1) + 8
    scores = [i.score for i in items if i.score is not None]
    top = max([abs(s) for s in scores] + [1e-9])
    parts = [
        f'<svg class="ranking" role="img" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}">',
        f"<title>{_text(title)}</title>",
        f'<text class="scale" x="{bar_x}" y="13">score</text>',
    ]
    running = 0
    for n, item in enumerate(items):
        y = head + n * row_h + 4
        cls = "relevant" if item.relevant else "other"
        mark = "★ " if item.relevant else ""
        parts.append(
            f'<text class="label {cls}" x="4" y="{y + 15}">{item.position}. {mark}'
            f"{_text(item.name)}</text>"
        )
        w = 0.0 if item.score is None else round(abs(item.score) / top * bar_w, 2)
        state = "context" if item.in_context else "dropped"
        parts.append(
            f'<rect class="score {cls} {state}" x="{bar_x}" y="{y + 4}" width="{w}" height="14"/>'
        )
        note = "in context" if item.in_context else (item.dropped or "not in context")
        if item.in_context and item.tokens is not None:
            running += item.tokens
            note += f" · {running} tokens"
        parts.append(
            f'<text class="note" x="{bar_x + bar_w + 8}" y="{y + 15}">{_text(note)}</text>'
        )
        if top_k is not None and item.position == top_k:
            parts.append(
                f'<line class="cut" x1="0" x2="{width}" y1="{y + row_h - 1}" y2="{y + row_h - 1}"/>'
                f'<text class="cutlabel" x="{width - 4}" y="{y + row_h - 3}" '
                f'text-anchor="end">top-k {top_k}</text>'
            )
    if budget is not None:
        parts.append(
            f'<text class="budget" x="{width - 4}" y="13" text-anchor="end">'
            f"token budget {budget}</text>"
        )
    parts.append("</svg>")
    return Markup("".join(parts))
