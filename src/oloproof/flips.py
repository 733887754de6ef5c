"""The cases whose verdict changed between the two runs of a comparison, with both verdicts.

Requirements (``docs/comparing-runs.md``, "Which cases changed"):

1. A case flips on a metric when it is paired (both runs hold it, neither errored, the same
   input and expected values: ``oloproof.pairing``) and both verdicts are observed and
   differ: fail → pass is *improved*, pass → fail *regressed*; for a graded metric, a higher
   value is improved and a lower one regressed. These are the cases behind a comparison's
   discordant counts (``b`` fail → pass, ``c`` pass → fail, for a pass/fail metric).
1a. A case of a repeated run some of whose repeats have no verdict is never called improved
   or regressed on its judged repeats alone: only when every way its missing repeats could
   have come out moves it the same way (``oloproof.repeats.bounds``); its verdict says how
   many of its repeats were judged. A repeat its output alone excluded (it recorded no
   citations) counts as one without a verdict, as the comparison counts it
   (``repeats.with_excluded_repeats``).
1b. A case is listed as moved, and counted so, only for what the system did. A flip on a
   metric the two runs judged with different evaluators (``same_evaluator`` false, the rule's
   ``evaluator_changed``) measures the change of judge as much as the system's; a repeated case
   that moved on its judged repeats alone, but that its repeats without a verdict could undo,
   is not known to have moved. Both are listed apart, after the counted ones, as
   ``evaluator_changed`` and ``unsettled``, and the head (``changed_cases_line``) counts them
   as neither improved nor regressed, in the same words wherever the flips are shown.
2. Each flip names the command that shows the case in each run, so a reviewer goes straight
   from a count to the cases behind it; the case id is quoted for a POSIX shell where it needs
   it (a space, a quote, a ``$``), so the command runs as printed and an id never runs as one.
3. Derived from the two runs' case results on demand, never stored: a comparison recorded
   before this existed lists its flips too, and ``verify`` has nothing new to re-derive. They
   are read from the case results the comparison read (``RecordedCases``): a run resumed
   since has more, which the comparison never paired.
4. One rule for every reader: the viewer, which looks for the flips of a pass/fail metric
   among the cases its failures indexes file, decides each one by ``case_flips`` as
   ``flipped_cases`` does, and puts them in the same order (``in_listed_order``: by metric,
   then the candidate's line order), so the two cannot list different cases.
"""

from __future__ import annotations

import shlex
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, cast

from ledger import Ledger
from oloproof.bodies import CaseResultBody, VerdictCopy
from oloproof.display import fmt_means_apart
from oloproof.latest import index_disagreement
from oloproof.metrics import RecordedCases
from oloproof.pairing import EVALUATOR_CHANGED, unpaired_reason
from oloproof.repeats import bounds, executions, value_of, with_excluded_repeats

IMPROVED: Final = "improved"
REGRESSED: Final = "regressed"
UNSETTLED: Final = "unsettled"
"""The direction of a repeated case that moved on its judged repeats alone: failing its
repeats without a verdict on one side and passing them on the other would undo the move."""
COUNTED: Final = frozenset({IMPROVED, REGRESSED})
"""The directions a flip is counted by; any other (``UNSETTLED``, ``EVALUATOR_CHANGED``) is
listed apart and counted neither way."""


@dataclass(frozen=True)
class Flip:
    metric: str
    case_id: str
    candidate: str
    baseline: str
    direction: str
    candidate_case: str
    baseline_case: str
    line: int = field(compare=False)
    """The case's line in the candidate's dataset (0 when not recorded): the listing order."""

    def to_json(self) -> dict[str, Any]:
        return {
            "metric": self.metric,
            "case_id": self.case_id,
            "candidate": self.candidate,
            "baseline": self.baseline,
            "direction": self.direction,
            "candidate_case": self.candidate_case,
            "baseline_case": self.baseline_case,
        }

    @property
    def counted(self) -> bool:
        """Whether the flip counts as improved or regressed (else it is listed apart)."""
        return self.direction in COUNTED

    @property
    def direction_text(self) -> str:
        """The direction as every listing prints it (``evaluator changed``)."""
        return self.direction.replace("_", " ")


def _verdict_texts(cand: VerdictCopy, base: VerdictCopy) -> tuple[str, str]:
    """The two observed verdicts of a flip as it prints them: a value gets the decimals that
    keep it apart from the other one (``fmt_means_apart``), or the flip reads as no change."""
    values = fmt_means_apart(value_of(cand) or 0.0, value_of(base) or 0.0)
    return _verdict_text(cand, values[0]), _verdict_text(base, values[1])


def _verdict_text(summary: VerdictCopy, value: str) -> str:
    status = summary["s"]
    if status in ("pass", "fail"):
        return str(status)
    text = value
    if summary.get("m"):
        judged, missing = int(summary["n"]), int(summary["m"])
        text += f" ({judged} of {judged + missing} repeats judged)"
    return text


def _span(summary: VerdictCopy) -> tuple[float, float] | None:
    """The values an observed verdict allows: its own, or for a case with repeats without a
    verdict, from those failing to those passing; None if unobserved."""
    value = value_of(summary)
    if value is None:
        return None
    return bounds(summary) if summary.get("m") else (value, value)


def flipped_cases(ledger: Ledger, body: Mapping[str, Any]) -> list[Flip]:
    """The flips of the comparison ``body``, in the order every listing shows them
    (``in_listed_order``)."""
    cand_id, base_id = body["candidate"]["run_id"], body["baseline"]["run_id"]
    metrics = [row["metric"] for row in body["metrics"]]
    found: list[Flip] = []
    baseline = RecordedCases(ledger, base_id, body["baseline"]["results"])
    read = held = 0
    for cand in RecordedCases(ledger, cand_id, body["candidate"]["results"]):
        read += 1
        # The baseline's case through the index (the first result of its id, the one
        # ``case_results`` counts): the baseline run is never held in memory.
        other = baseline.get(cand["case_id"])
        if other is not None:
            held += 1
            found += case_flips(body, metrics, cand, other)
    # Every candidate case the comparison did not find only in the candidate, the baseline
    # holds: one the index by case id no longer finds (a damaged page) would drop its flips
    # from the list while the comparison's counts still hold them.
    alone = sum(u["count"] for u in body["unpaired"] if u["reason"] == "only_in_candidate")
    if held < read - alone:
        raise index_disagreement(
            base_id,
            f"its index by case id misses {read - alone - held} of the cases run {cand_id} "
            "holds too",
        )
    return in_listed_order(found, metrics)


def in_listed_order(flips: Iterable[Flip], metrics: Sequence[str]) -> list[Flip]:
    """``flips`` as every listing shows them: the counted ones, then those listed apart; each
    by metric (``metrics``' order), then by the candidate's line (then id, for case results
    recorded without a line)."""
    place = {metric: i for i, metric in enumerate(metrics)}
    return sorted(flips, key=lambda f: (not f.counted, place[f.metric], f.line, f.case_id))


def changed_cases_line(flips: Sequence[Flip]) -> str:
    """The head of a list of flips, as the terminal, the Markdown summary and the viewer say
    it: how many improved and regressed, then how many are counted neither way, and why."""
    ways = Counter(f.direction for f in flips)
    head = f"Changed cases: {ways[IMPROVED]} improved, {ways[REGRESSED]} regressed"
    apart = []
    if ways[UNSETTLED]:
        n = ways[UNSETTLED]
        its = "its" if n == 1 else "their"
        apart.append(
            f"{n} moved on {its} judged repeats alone, which {its} repeats without a verdict "
            "could undo"
        )
    if ways[EVALUATOR_CHANGED]:
        judged = dict.fromkeys(f.metric for f in flips if f.direction == EVALUATOR_CHANGED)
        apart.append(
            f"{ways[EVALUATOR_CHANGED]} changed on {', '.join(judged)}, which the two runs "
            f"judged with different evaluators"
        )
    return f"{head} (counted neither way: {'; '.join(apart)})" if apart else head


def case_flips(
    body: Mapping[str, Any], metrics: Sequence[str], cand: CaseResultBody, base: CaseResultBody
) -> list[Flip]:
    """The flips on ``metrics`` of one case of the comparison ``body``, from its result in the
    candidate (``cand``) and in the baseline (``base``): none unless the two are paired."""
    if unpaired_reason(cand, base, expected=body["like_for_like"]) is not None:
        return []
    cand_id, base_id = body["candidate"]["run_id"], body["baseline"]["run_id"]
    changed = {row["metric"] for row in body["metrics"] if not row["same_evaluator"]}
    flips = (_flip(metric, cand, base, cand_id, base_id, metric in changed) for metric in metrics)
    return [flip for flip in flips if flip is not None]


def _flip(
    metric: str,
    cand: CaseResultBody,
    base: CaseResultBody,
    cand_id: str,
    base_id: str,
    evaluator_changed: bool,
) -> Flip | None:
    cv, bv = cand["verdicts"].get(metric), base["verdicts"].get(metric)
    if cv is None or bv is None:
        return None
    cv = cast(VerdictCopy, with_excluded_repeats(cv, executions(cand)))
    bv = cast(VerdictCopy, with_excluded_repeats(bv, executions(base)))
    x, y = _span(cv), _span(bv)
    if x is None or y is None:
        return None
    if x[0] > y[1]:
        direction = IMPROVED
    elif x[1] < y[0]:
        direction = REGRESSED
    elif value_of(cv) != value_of(bv):
        direction = UNSETTLED  # only a case with repeats without a verdict spans a range
    else:
        return None
    if evaluator_changed:
        # Whatever way it moved, the judge moved too: the change is not the system's alone.
        direction = EVALUATOR_CHANGED
    case_id = cand["case_id"]
    line = cand.get("line")
    quoted = shlex.quote(case_id)
    candidate, baseline = _verdict_texts(cv, bv)
    return Flip(
        metric=metric,
        case_id=case_id,
        candidate=candidate,
        baseline=baseline,
        direction=direction,
        candidate_case=f"oloproof inspect {cand_id} --case {quoted}",
        baseline_case=f"oloproof inspect {base_id} --case {quoted}",
        line=line if isinstance(line, int) and line >= 1 else 0,
    )
