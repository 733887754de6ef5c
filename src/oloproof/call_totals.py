"""What a system's own model calls cost a run: the ``model_call/v1`` records of the executions
it made (tokens and cost, as the provider reported them and the prices made them), and how many
calls the executions and generations it took from a cache hold, which the runs that made them
paid for.

A run's end record keeps the totals (``model_calls``), so that ``run``, ``inspect`` and the
viewer say what the system spent without reading a case; a resumed run goes on from them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from typing import Any

from oloproof.display import fmt_cost


@dataclass
class CallTotals:
    """The totals of one run (see the module). ``without_usage``: calls whose reply reported no
    token counts, which the token totals leave out; ``unpriced``: calls made without both
    prices configured, which ``cost`` leaves out (``cost`` is None when no call was priced)."""

    calls: int = 0
    without_usage: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost: float | None = None
    unpriced: int = 0
    reused: int = 0

    def made(self, calls: Iterable[Mapping[str, Any]]) -> None:
        """Count calls this run made."""
        for call in calls:
            self.calls += 1
            given_in, given_out = call.get("input_tokens"), call.get("output_tokens")
            if given_in is None and given_out is None:
                self.without_usage += 1
            self.input_tokens += given_in or 0
            self.output_tokens += given_out or 0
            cost = call.get("cost")
            if cost is None:
                self.unpriced += 1
            else:
                self.cost = (self.cost or 0.0) + cost

    def took(self, calls: Iterable[Mapping[str, Any]]) -> None:
        """Count calls held by what this run took from a cache."""
        self.reused += sum(1 for _ in calls)

    def add(self, other: CallTotals) -> None:
        self.calls += other.calls
        self.without_usage += other.without_usage
        self.input_tokens += other.input_tokens
        self.output_tokens += other.output_tokens
        if other.cost is not None:
            self.cost = (self.cost or 0.0) + other.cost
        self.unpriced += other.unpriced
        self.reused += other.reused

    def any(self) -> bool:
        return bool(self.calls or self.reused)

    def to_body(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_body(cls, body: Mapping[str, Any] | None) -> CallTotals:
        """The totals an end record holds; none (zero) for one recorded without them."""
        return cls(**dict(body)) if body else cls()


def totals_text(totals: CallTotals) -> str:
    """The run report's line of these totals."""
    if totals.calls and totals.cost is None:
        cost = "no prices configured"
    else:
        cost = f"cost {fmt_cost(totals.cost or 0.0)}"
        if totals.unpriced and totals.cost is not None:
            cost += f" of the {totals.calls - totals.unpriced:,} priced"
    unreported = (
        f"; {totals.without_usage:,} reported no token counts, which the tokens leave out"
        if totals.without_usage
        else ""
    )
    reused = f"{totals.reused:,} reused from the cache"
    if totals.reused:
        reused += " (paid for by the runs that made them)"
    return (
        f"Model calls of the system: {totals.calls:,} by this run ({totals.input_tokens:,} input "
        f"tokens, {totals.output_tokens:,} output tokens, {cost}{unreported}); {reused}"
    )
