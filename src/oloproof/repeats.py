"""A case executed K times (``oloproof run --repeats K``): one case-level verdict per criterion.

Requirements (``docs/statistics.md``, "Repeated executions"):

1. The case stays the unit. Its K verdicts on a criterion become one value: the mean over its
   observed repeats (a pass is 1, a fail 0, a graded value itself), so a case that passed 2 of
   3 times counts 0.667 once, never 3 times. Metrics and intervals are then those of a mean of
   values in [0, 1] over cases (the betting interval), whose cases are independent draws even
   when a case's repeats are not.
2. A repeat without a verdict (its execution errored, its judge gave none) still counts against
   the case: ``m`` records how many of the K are missing, and the metric's bounded interval
   counts them as failing (lower bound) and passing (upper bound), as it counts missing cases;
   so does a comparison's paired interval, and a flip holds only if it holds both ways
   (``bounds``). ``value_of`` is the judged repeats' mean alone: never what a decision reads
   when ``m`` is set. A case with no observed repeat is missing.
2a. An exclusion the case itself decides (its labels or expected values, the same in every
   repeat: ``CASE_EXCLUSIONS``) excludes the case. Any other exclusion was decided by one
   repeat's output (it recorded no citations, say) and is that repeat's alone: as an excluded
   case is to a run, it is neither a pass, a fail nor a missing verdict of its case, which
   combines its other repeats as if it had not run. A case only excluded so in every repeat is
   excluded, as that output excludes a case of a run without repeats. So a repeat's exclusion
   never hides its siblings' failures.
3. With K = 1 nothing is combined: a case result has the shape it always had.
4. A repeat that errored, or that a judge gave no verdict, is never hidden behind its case's
   combined verdicts: ``repeat_counts`` and ``errored_repeats`` read them from a case result,
   once for every listing (the run's tally, hence ``runs`` and the report; ``inspect --case``
   and ``--failures``, JUnit, the exports).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, cast

from oloproof.bodies import VerdictCopy

Summary = Mapping[str, Any]


def value_of(summary: Summary) -> float | None:
    """An observed verdict as a number (pass 1, fail 0, a value itself); None if unobserved."""
    status = summary["s"]
    if status == "pass":
        return 1.0
    if status == "fail":
        return 0.0
    if status == "value":
        return float(summary["v"])
    return None


CASE_EXCLUSIONS: Final = frozenset(
    {"no_expected_value", "empty_expected_value", "no_relevance_labels", "all_labels_non_relevant"}
)
"""The exclusion reasons a case's labels or expected values decide, whatever its output. Any
other reason (``no_citations_recorded``, ``no_context_recorded``, a custom evaluator's) is
read as one output's: the side on which it cannot hide a failure."""


def combine(summaries: Sequence[Summary]) -> VerdictCopy:
    """One criterion's verdict summaries over a case's repeats, as one case-level summary."""
    excluded = [s for s in summaries if s["s"] == "excluded"]
    by_case = [s for s in excluded if s.get("r") in CASE_EXCLUSIONS]
    if by_case:
        return cast(VerdictCopy, dict(by_case[0]))
    judged = [s for s in summaries if s["s"] != "excluded"]
    if not judged:
        return cast(VerdictCopy, dict(excluded[0]))
    observed = [v for v in (value_of(s) for s in judged) if v is not None]
    missing = [s for s in judged if value_of(s) is None]
    if not observed:
        reasons = Counter(str(s.get("r", "missing")) for s in missing)
        return {"s": "missing", "r": reasons.most_common(1)[0][0]}
    combined: VerdictCopy = {
        "s": "value",
        "v": sum(observed) / len(observed),
        "n": len(observed),
    }
    if missing:
        combined["m"] = len(missing)
    return combined


def combine_verdicts(
    per_repeat: Sequence[Mapping[str, Summary]], *, as_recorded_before: bool = False
) -> dict[str, VerdictCopy]:
    """Every criterion's case-level summary from the verdict maps of a case's repeats.

    ``as_recorded_before``: as releases before repeats' own exclusions combined them (a repeat
    excluded for any reason excluded its case), for ``verify`` to recognise what they
    recorded."""
    criteria = list(dict.fromkeys(c for verdicts in per_repeat for c in verdicts))
    missing: Summary = {"s": "missing", "r": "no_verdict"}
    rule = _combine_before if as_recorded_before else combine
    return {c: rule([v.get(c, missing) for v in per_repeat]) for c in criteria}


def _combine_before(summaries: Sequence[Summary]) -> VerdictCopy:
    excluded = [s for s in summaries if s["s"] == "excluded"]
    return cast(VerdictCopy, dict(excluded[0])) if excluded else combine(summaries)


def executions(body: Mapping[str, Any]) -> int:
    """How many times a case result's case was executed: its repeats, or 1 without."""
    return len(body.get("repeats") or ()) or 1


def with_excluded_repeats(summary: Summary, executed: int) -> Summary:
    """An observed case-level summary of a case executed ``executed`` times, with the repeats
    one output alone excluded (``combine`` leaves them out: neither observed nor missing)
    counted as repeats without a verdict (``m``).

    How a comparison reads a case the other run observed (``compare`` 3c, ``flips`` 1a): a
    repeat that recorded nothing for the metric (no citations, say) may be exactly one that
    would have failed, as a case of a run without repeats may, whose pair is then missing.
    """
    if "n" not in summary:
        return summary  # executed once, or not observed: nothing was combined
    missing = int(summary.get("m", 0))
    excluded = executed - int(summary["n"]) - missing
    return {**summary, "m": missing + excluded} if excluded > 0 else summary


def bounds(summary: Summary) -> tuple[float, float]:
    """A combined summary's value with its missing repeats failing, and with them passing."""
    value, observed, missing = float(summary["v"]), int(summary["n"]), int(summary.get("m", 0))
    total = observed + missing
    return value * observed / total, (value * observed + missing) / total


@dataclass(frozen=True)
class RepeatCounts:
    """How a case's repeats went: how many were executed, how many of them errored, and how
    many ran but have no verdict on some criterion (a judge gave none)."""

    executed: int
    errored: int
    without_verdict: int

    @property
    def incomplete(self) -> int:
        """Repeats that count against their case: errored, or without some verdict."""
        return self.errored + self.without_verdict


def repeat_counts(repeats: Sequence[Mapping[str, Any]] | None) -> RepeatCounts | None:
    """The counts of a case result's ``repeats`` (its ``body.get("repeats")``); None for a
    case executed once, which has none (and costs nothing more to ask about)."""
    if not repeats:
        return None
    errored = without = 0
    for repeat in repeats:
        if repeat["status"] == "errored":
            errored += 1
        elif any(v["s"] == "missing" for v in repeat["verdicts"].values()):
            without += 1
    return RepeatCounts(len(repeats), errored, without)


def errored_repeats(repeats: Sequence[Mapping[str, Any]] | None) -> list[tuple[int, str]]:
    """The repeats that errored, as (repeat number from 1, execution address)."""
    return [
        (number, str(repeat["execution"]))
        for number, repeat in enumerate(repeats or (), start=1)
        if repeat["status"] == "errored"
    ]
