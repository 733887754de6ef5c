"""Plain value types shared by the library: judgments, intervals, metric results, decisions."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

Status = Literal["pass", "fail", "value", "excluded", "missing"]
MetricKind = Literal["pass_fail", "mean"]
DecisionOutcome = Literal["PASS", "FAIL", "INSUFFICIENT_EVIDENCE", "MANUAL_REVIEW"]

MISSING_DECIDES = "missing_cases_decide"
"""The reason of a rule whose outcome its missing cases changed: counted against it, it is
decided otherwise than on the observed cases alone (its detail's ``observed_only`` says how)."""

NO_OBSERVED_CASES = "no_observed_cases"
"""The reason of a rule whose metric has no observed case: nothing decided it, and it is
INSUFFICIENT_EVIDENCE, never PASS; the gate blocks on it whatever ``block_on`` says
(``stands_on_nothing``), and the report says why under the gate (``report.evidence_line``)."""

SUBSET_OF_CASES = "subset_of_cases"
"""The reason of an ``observed_count`` rule that its failures do not FAIL, on a run of part of
the suite (``--sample`` or ``--limit``): a count over the cases that ran says nothing of the
cases left out (its detail's ``subset`` says how many of how many were planned)."""


def stands_on_nothing(reasons: Iterable[str], answered: int) -> bool:
    """Whether a run's gate has nothing under it: no case was answered (``answered``: the run's
    cases that did not error; a run none of whose cases ran has none), or a rule was decided on
    no observed case (``reasons``: its rules' reasons). Such a gate blocks whatever
    ``block_on`` says (``policy.gate``), and the report's line under the gate
    (``report.evidence_line``) reads the same test, so the two never disagree."""
    return answered == 0 or any(reason == NO_OBSERVED_CASES for reason in reasons)


@dataclass(frozen=True)
class Verdict:
    """One evaluator's judgment of one case.

    ``pass``/``fail`` for checks, ``value`` with a number in [0, 1] for graded metrics,
    ``excluded`` when the case cannot be judged by design (``reason`` says why, e.g.
    ``no_relevance_labels``), ``missing`` when it should have been judged but could not be
    (the case errored, a judge call failed). Missing is never a pass or a fail.
    """

    status: Status
    value: float | None = None
    reason: str | None = None
    detail: dict[str, Any] = field(default_factory=dict)

    @staticmethod
    def passed(**detail: Any) -> Verdict:
        return Verdict("pass", 1.0, None, detail)

    @staticmethod
    def failed(reason: str | None = None, **detail: Any) -> Verdict:
        return Verdict("fail", 0.0, reason, detail)

    @staticmethod
    def scored(value: float, **detail: Any) -> Verdict:
        if not 0.0 <= value <= 1.0:
            raise ValueError(f"a scored judgment must lie in [0, 1], got {value!r}")
        return Verdict("value", value, None, detail)

    @staticmethod
    def excluded(reason: str, **detail: Any) -> Verdict:
        return Verdict("excluded", None, reason, detail)

    @staticmethod
    def missing(reason: str, **detail: Any) -> Verdict:
        return Verdict("missing", None, reason, detail)

    @property
    def observed(self) -> bool:
        return self.status in ("pass", "fail", "value")


@dataclass(frozen=True)
class Interval:
    """A two-sided confidence interval at ``level``, made by ``method``."""

    lower: float
    upper: float
    level: float
    method: str


def with_observed_only(
    detail: dict[str, Any], observed: Interval, seen: tuple[str, str], decided: tuple[str, str]
) -> str:
    """Record in ``detail`` what the observed cases alone give (``observed``, decided ``seen``:
    outcome and reason), and return the reason of the ``decided`` outcome: MISSING_DECIDES when
    the missing cases changed it."""
    detail["observed_only"] = {
        "lower": observed.lower,
        "upper": observed.upper,
        "outcome": seen[0],
        "reason": seen[1],
    }
    return MISSING_DECIDES if seen[0] != decided[0] else decided[1]
