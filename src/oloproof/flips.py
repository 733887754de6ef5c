"""The cases whose verdict changed between the two runs of a comparison, with both verdicts.

Requirements (``docs/comparing-runs.md``, "Which cases changed"):

1. A case flips on a metric when it is paired (both runs hold it, neither errored, the same
   input and expected values: ``oloproof.pairing``) and both verdicts are observed and
   differ: fail → pass is *improved*, pass → fail *regressed*; for a graded metric, a higher
   value is improved and a lower one regressed. These are the cases behind a comparison's
   discordant counts (``b`` improved, ``c`` regressed, for a pass/fail metric).
1a. A case of a repeated run some of whose repeats have no verdict is never called improved
   or regressed on its judged repeats alone: it flips only when every way its missing repeats
   could have come out moves it the same way (``oloproof.repeats.bounds``), and its verdict
   says how many of its repeats were judged.
2. Each flip names the command that shows the case in each run, so a reviewer goes straight
   from a count to the cases behind it; the case id is quoted for a POSIX shell where it needs
   it (a space, a quote, a ``$``), so the command runs as printed and an id never runs as one.
3. Derived from the two runs' case results on demand, never stored: a comparison recorded
   before this existed lists its flips too, and ``verify`` has nothing new to re-derive. They
   are read from the case results the comparison read (``RecordedCases``): a run resumed
   since has more, which the comparison never paired.
4. One rule for every reader: the viewer, which looks for the flips of a pass/fail metric
   among the cases its failures indexes file, decides each one by ``case_flips`` as
   ``flipped_cases`` does, so the two cannot list different cases.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from ledger import Ledger
from oloproof.bodies import CaseResultBody, VerdictCopy
from oloproof.metrics import RecordedCases
from oloproof.pairing import unpaired_reason
from oloproof.repeats import bounds, value_of


@dataclass(frozen=True)
class Flip:
    metric: str
    case_id: str
    candidate: str
    baseline: str
    direction: str
    candidate_case: str
    baseline_case: str

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def _verdict_text(summary: VerdictCopy) -> str:
    status = summary["s"]
    if status in ("pass", "fail"):
        return str(status)
    text = f"{float(summary['v']):.3f}"
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
    """The flips of the comparison ``body``: by metric (its order), then by the candidate's
    case order."""
    cand_id, base_id = body["candidate"]["run_id"], body["baseline"]["run_id"]
    metrics = [row["metric"] for row in body["metrics"]]
    found: dict[str, list[Flip]] = {m: [] for m in metrics}
    baseline = RecordedCases(ledger, base_id, body["baseline"]["results"])
    for cand in RecordedCases(ledger, cand_id, body["candidate"]["results"]):
        # The baseline's case through the index (the first result of its id, the one
        # ``case_results`` counts): the baseline run is never held in memory.
        other = baseline.get(cand["case_id"])
        if other is None:
            continue
        for flip in case_flips(body, metrics, cand, other):
            found[flip.metric].append(flip)
    return [flip for metric in metrics for flip in found[metric]]


def case_flips(
    body: Mapping[str, Any], metrics: Sequence[str], cand: CaseResultBody, base: CaseResultBody
) -> list[Flip]:
    """The flips on ``metrics`` of one case of the comparison ``body``, from its result in the
    candidate (``cand``) and in the baseline (``base``): none unless the two are paired."""
    if unpaired_reason(cand, base, expected=body["like_for_like"]) is not None:
        return []
    cand_id, base_id = body["candidate"]["run_id"], body["baseline"]["run_id"]
    flips = (_flip(metric, cand, base, cand_id, base_id) for metric in metrics)
    return [flip for flip in flips if flip is not None]


def _flip(
    metric: str, cand: CaseResultBody, base: CaseResultBody, cand_id: str, base_id: str
) -> Flip | None:
    cv, bv = cand["verdicts"].get(metric), base["verdicts"].get(metric)
    if cv is None or bv is None:
        return None
    x, y = _span(cv), _span(bv)
    if x is None or y is None:
        return None
    if x[0] > y[1]:
        direction = "improved"
    elif x[1] < y[0]:
        direction = "regressed"
    else:
        return None
    case_id = cand["case_id"]
    quoted = shlex.quote(case_id)
    return Flip(
        metric=metric,
        case_id=case_id,
        candidate=_verdict_text(cv),
        baseline=_verdict_text(bv),
        direction=direction,
        candidate_case=f"oloproof inspect {cand_id} --case {quoted}",
        baseline_case=f"oloproof inspect {base_id} --case {quoted}",
    )
