"""A case executed K times (``oloproof run --repeats K``): one case-level verdict per criterion.

Requirements (``docs/statistics.md``, "Repeated executions"):

1. The case stays the unit. Its K verdicts on a criterion become one value: the mean over its
   observed repeats (a pass is 1, a fail 0, a graded value itself), so a case that passed 2 of
   3 times counts 0.667 once, never 3 times. Metrics and intervals are then those of a mean of
   values in [0, 1] over cases (the betting interval), whose cases are independent draws even
   when a case's repeats are not.
2. A repeat without a verdict (its execution errored, its judge gave none) still counts against
   the case: ``m`` records how many of the K are missing, and the metric's bounded interval
   counts them as failing (lower bound) and passing (upper bound), as it counts missing cases.
   A case with no observed repeat is missing; one excluded (no relevance labels) is excluded.
3. With K = 1 nothing is combined: a case result has the shape it always had.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any, cast

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


def combine(summaries: Sequence[Summary]) -> VerdictCopy:
    """One criterion's verdict summaries over a case's repeats, as one case-level summary."""
    excluded = [s for s in summaries if s["s"] == "excluded"]
    if excluded:
        return cast(VerdictCopy, dict(excluded[0]))
    observed = [v for v in (value_of(s) for s in summaries) if v is not None]
    missing = [s for s in summaries if value_of(s) is None]
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


def combine_verdicts(per_repeat: Sequence[Mapping[str, Summary]]) -> dict[str, VerdictCopy]:
    """Every criterion's case-level summary from the verdict maps of a case's repeats."""
    criteria = list(dict.fromkeys(c for verdicts in per_repeat for c in verdicts))
    missing: Summary = {"s": "missing", "r": "no_verdict"}
    return {c: combine([v.get(c, missing) for v in per_repeat]) for c in criteria}


def bounds(summary: Summary) -> tuple[float, float]:
    """A combined summary's value with its missing repeats failing, and with them passing."""
    value, observed, missing = float(summary["v"]), int(summary["n"]), int(summary.get("m", 0))
    total = observed + missing
    return value * observed / total, (value * observed + missing) / total
