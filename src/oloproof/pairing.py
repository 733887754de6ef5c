"""Whether two runs' results for one case id are the same case, answered alike: the rule a
comparison pairs by, and that its flips and the viewer's comparison page share.

A case is paired when its input and its expected values are the same in both runs and neither
result errored. A case whose expected values changed was judged against different answers in
the two runs: a fail that becomes a pass because its label moved is no improvement.

A comparison that paired no case, or with a rule that read no pair, has nothing under its gate
(``compared_on_nothing``): the gate blocks whatever ``block_on`` says (``compare``, comparison
schema 5), as a release gate with nothing under it does.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final

from oloproof.events import identity_key, plain

METRIC_NOT_COMPARED: Final = "metric_not_compared"
"""The reason of a comparison rule on a metric only one of the two runs measures."""

NO_PAIRED_CASES: Final = "no_paired_cases"
"""The reason of a comparison rule whose metric has no pair observed in both runs (every pair
missing or excluded, or no case paired at all)."""

EVALUATOR_CHANGED: Final = "evaluator_changed"
"""The reason of a comparison rule whose metric the two runs judged with different evaluators:
its pairs measure the change of evaluator as much as the system's, so none is read."""

NO_PAIR_REASONS: Final = frozenset({METRIC_NOT_COMPARED, NO_PAIRED_CASES})
"""The reasons of a comparison rule that observed no pair: nothing decided it."""


def compared_on_nothing(reasons: Iterable[str], paired: int) -> bool:
    """Whether a comparison's gate has nothing under it: no case was paired (``paired``), or a
    rule read no pair of its metric, or none measured alike in both runs (``reasons``: its
    rules' reasons). Such a gate blocks whatever ``block_on`` says (``compare``), and the line
    under it (``report.comparison_evidence_line``) reads the same test, so the two never
    disagree."""
    unread = NO_PAIR_REASONS | {EVALUATOR_CHANGED}
    return paired == 0 or any(reason in unread for reason in reasons)


def expected_key(body: Mapping[str, Any]) -> str:
    """A key of a case result's expected values (``expected_key`` when a holder kept only it)."""
    kept = body.get("expected_key")
    return str(kept) if kept is not None else identity_key(plain(body.get("expected") or {}))


def unpaired_reason(
    cand: Mapping[str, Any], base: Mapping[str, Any], *, expected: bool = True
) -> str | None:
    """Why ``cand`` and ``base`` are not paired, or ``None`` when they are. ``expected=False``
    is the rule of comparisons recorded before expected values had to match (schema 2)."""
    if cand.get("input_key") != base.get("input_key"):
        return "input_differs"
    if expected and expected_key(cand) != expected_key(base):
        return "expected_differs"
    cand_err, base_err = cand["status"] == "errored", base["status"] == "errored"
    if cand_err and base_err:
        return "errored_in_both"
    if cand_err:
        return "errored_in_candidate"
    if base_err:
        return "errored_in_baseline"
    return None
