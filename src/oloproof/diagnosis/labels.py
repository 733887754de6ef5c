"""The label logic of a diagnosis: constants and pure functions over small inputs.

Nothing here reads the ledger, plans or runs anything, or imports a heavy library, so the CLI
can load it at start-up to print labels and reasons. Requirements it meets:

1. A parent verdict selects its case when it is a ``fail`` or a graded value of 0
   (``is_failure``); under a child run a verdict reads as passed, failed or not observed
   (``outcome_of``), a graded criterion passing only at its full value.
2. A gold-context case is labelled from the parent's evidence and its outcomes under the
   control and the gold passages (``gold_label``, the table in docs/diagnosis.md); a replay
   case gets a result and a strength (``replay_result``).
3. A case that passes under the control is unstable, not diagnosed; a missing verdict (an
   errored case, or a child run that stopped before reaching it) leaves the case UNRESOLVED.
4. Counts are printed in a fixed order (``label_counts``); the factors the recovered upstream
   failures point at, and the experiments worth trying, come from the recorded drop reasons
   and the top-k cut (``implicated``). They are hypotheses, never causes.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from oloproof.errors import ConfigError

GOLD_CONTEXT = "gold-context"
TOP_K = "top-k"
RERANKER = "reranker"
INTERVENTIONS = (GOLD_CONTEXT, TOP_K, RERANKER)

RETRIEVAL_MISS = "RETRIEVAL_MISS"
RANKED_OUT = "RANKED_OUT"
CONTEXT_ASSEMBLY_LOSS = "CONTEXT_ASSEMBLY_LOSS"
GENERATION_FAILURE = "GENERATION_FAILURE"
UNRESOLVED = "UNRESOLVED"
LABELS = (RETRIEVAL_MISS, RANKED_OUT, CONTEXT_ASSEMBLY_LOSS, GENERATION_FAILURE, UNRESOLVED)

RELEVANT_NOT_RETRIEVED = "relevant_not_retrieved"
RELEVANT_RANKED_OUT = "relevant_ranked_out"
RELEVANT_DROPPED = "relevant_dropped_from_context"
FAILS_WITH_GOLD = "fails_with_gold_context"
INTERVENTION_UNSUPPORTED = "intervention_unsupported"
PASSES_UNDER_CONTROL = "passes_under_control"
CONTROL_NOT_OBSERVED = "control_not_observed"
INTERVENTION_NOT_OBSERVED = "intervention_not_observed"
RECOVERS_ONLY_WITH_GOLD_ALONE = "recovers_only_with_gold_alone"
NO_RELEVANCE_LABELS = "no_relevance_labels"
NO_GOLD_CONTEXT = "no_gold_context"
# The order label lines are printed in, within a label.
REASONS = (
    RELEVANT_NOT_RETRIEVED,
    RELEVANT_RANKED_OUT,
    RELEVANT_DROPPED,
    FAILS_WITH_GOLD,
    INTERVENTION_UNSUPPORTED,
    PASSES_UNDER_CONTROL,
    RECOVERS_ONLY_WITH_GOLD_ALONE,
    NO_RELEVANCE_LABELS,
    CONTROL_NOT_OBSERVED,
    INTERVENTION_NOT_OBSERVED,
)

INTERVENTION_RECOVERY = "intervention_recovery"
INTERVENTION_NON_RECOVERY = "intervention_non_recovery"
CONTROL_RECOVERY = "control_recovery"
NO_STRENGTH = "none"

# What one child run's verdict on the criterion says about one case.
PASSED = "pass"
FAILED = "fail"
NOT_OBSERVED = "missing"

# Replay results per case (besides the UNRESOLVED reasons above).
RECOVERED = "recovered"
STILL_FAILED = "still_failed"

# Where the best relevant passage was, besides a 1-based position.
POSITION_NONE = "none"
POSITION_UNLABELLED = "unlabelled"

# The state of a diagnosis whose child runs did not all finish (a complete one records none).
COMPLETE = "complete"
STOPPED = "stopped"
INTERRUPTED = "interrupted"

TOP_K_CUT = "the top-k cut"
# Drop reason → (the factor implicated, the candidate experiments).
DROP_FACTORS: dict[str, tuple[str, tuple[str, ...]]] = {
    "token_budget": ("context budget", ("a larger token budget", "smaller chunks")),
    "top_k": (TOP_K_CUT, ("a larger top_k", "a reranker")),
}

GOLD_LABEL = "gold context"
CONTROL_LABEL = "control"
REPLAY_CONTROL_LABEL = "replay control"


@dataclass(frozen=True)
class Label:
    """What a gold-context diagnosis says about one case."""

    label: str
    reason: str
    strength: str


@dataclass(frozen=True)
class Evidence:
    """What the parent run recorded about one case's relevant passages.

    ``position`` is the 1-based position of the best relevant candidate, ``none`` when no
    relevant passage was retrieved, ``unlabelled`` when the case has no relevance labels.
    ``in_context`` says whether a relevant passage reached the model; ``drop_reasons`` are the
    reasons relevant passages within top_k were left out of the context.
    """

    position: str
    in_context: bool = False
    drop_reasons: tuple[str, ...] = ()


def outcome_of(verdict: Mapping[str, Any] | None) -> str:
    """``pass``, ``fail`` or ``missing``; a graded criterion passes only at its full value."""
    if verdict is None:
        return NOT_OBSERVED
    status = verdict.get("s")
    if status == "pass":
        return PASSED
    if status == "fail":
        return FAILED
    if status == "value":
        return PASSED if float(verdict["v"]) >= 1.0 else FAILED
    return NOT_OBSERVED


def is_failure(verdict: Mapping[str, Any] | None) -> bool:
    """Whether a parent verdict selects its case: a fail, or a graded value of 0."""
    if verdict is None:
        return False
    status = verdict.get("s")
    return status == "fail" or (status == "value" and float(verdict["v"]) == 0.0)


def gold_label(*, evidence: Evidence, top_k: int, control: str, intervention: str) -> Label:
    """Label one case from the parent's evidence and its outcomes under control and gold."""
    if control == PASSED:
        return Label(UNRESOLVED, PASSES_UNDER_CONTROL, CONTROL_RECOVERY)
    if control != FAILED:
        return Label(UNRESOLVED, CONTROL_NOT_OBSERVED, NO_STRENGTH)
    if intervention == FAILED:
        return Label(GENERATION_FAILURE, FAILS_WITH_GOLD, INTERVENTION_NON_RECOVERY)
    if intervention != PASSED:
        return Label(UNRESOLVED, INTERVENTION_NOT_OBSERVED, NO_STRENGTH)
    position = evidence.position
    if position == POSITION_UNLABELLED:
        return Label(UNRESOLVED, NO_RELEVANCE_LABELS, INTERVENTION_RECOVERY)
    if position == POSITION_NONE:
        return Label(RETRIEVAL_MISS, RELEVANT_NOT_RETRIEVED, INTERVENTION_RECOVERY)
    if int(position) > top_k:
        return Label(RANKED_OUT, RELEVANT_RANKED_OUT, INTERVENTION_RECOVERY)
    if not evidence.in_context:
        return Label(CONTEXT_ASSEMBLY_LOSS, RELEVANT_DROPPED, INTERVENTION_RECOVERY)
    return Label(UNRESOLVED, RECOVERS_ONLY_WITH_GOLD_ALONE, INTERVENTION_RECOVERY)


def replay_result(*, control: str, intervention: str) -> tuple[str, str]:
    """(result, strength) of one case under a replay beside its replay control."""
    if control == PASSED:
        return PASSES_UNDER_CONTROL, CONTROL_RECOVERY
    if control != FAILED:
        return CONTROL_NOT_OBSERVED, NO_STRENGTH
    if intervention == PASSED:
        return RECOVERED, INTERVENTION_RECOVERY
    if intervention == FAILED:
        return STILL_FAILED, INTERVENTION_NON_RECOVERY
    return INTERVENTION_NOT_OBSERVED, NO_STRENGTH


def relevant_ids(expected: Mapping[str, Any]) -> set[str]:
    """The documents a case labels relevant (a grade above 0; no grade counts as 1).

    The same reading as the staged ``relevant_position`` slice (``oloproof.systems.rag``).
    """
    return {r["doc_id"] for r in expected.get("relevant", []) if r.get("grade", 1) > 0}


def evidence_of(
    retrieval: Mapping[str, Any] | None,
    context: Mapping[str, Any] | None,
    expected: Mapping[str, Any],
    top_k: int | None,
) -> Evidence:
    """Read one case's relevant passages out of its recorded retrieval and context."""
    relevant = relevant_ids(expected)
    if not relevant:
        return Evidence(POSITION_UNLABELLED)
    candidates = (retrieval or {}).get("candidates", [])
    position = next(
        (str(i) for i, c in enumerate(candidates, start=1) if c["doc_id"] in relevant),
        POSITION_NONE,
    )
    items = (context or {}).get("items", [])
    in_context = any(item["doc_id"] in relevant for item in items)
    reasons: list[str] = []
    for dropped in (context or {}).get("dropped", []):
        within = top_k is None or (dropped.get("position") or 0) <= top_k
        if dropped["doc_id"] in relevant and within and dropped["reason"] not in reasons:
            reasons.append(dropped["reason"])
    return Evidence(position, in_context, tuple(reasons))


def label_counts(cases: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """How many cases carry each (label, reason), in print order."""
    counts = Counter((c["label"], c["reason"]) for c in cases)

    def order(key: tuple[str, str]) -> tuple[int, int, str]:
        label, reason = key
        rank = REASONS.index(reason) if reason in REASONS else len(REASONS)
        return LABELS.index(label), rank, reason

    return [
        {"label": label, "reason": reason, "count": counts[(label, reason)]}
        for label, reason in sorted(counts, key=order)
    ]


def implicated(cases: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The factors the recovered RANKED_OUT and CONTEXT_ASSEMBLY_LOSS cases point at."""
    counts: Counter[str] = Counter()
    experiments: dict[str, tuple[str, ...]] = {}
    for case in cases:
        if case.get("strength") != INTERVENTION_RECOVERY:
            continue
        factors: list[str] = []
        if case["label"] == RANKED_OUT:
            factors.append(TOP_K_CUT)
            experiments[TOP_K_CUT] = DROP_FACTORS["top_k"][1]
        elif case["label"] == CONTEXT_ASSEMBLY_LOSS:
            for reason in case.get("drop_reasons", []):
                factor, tried = DROP_FACTORS.get(reason, (f"context assembly ({reason})", ()))
                factors.append(factor)
                experiments[factor] = tried
        counts.update(dict.fromkeys(factors, 1))
    known = [factor for factor, _ in DROP_FACTORS.values()]
    ordered = sorted(counts, key=lambda f: (known.index(f) if f in known else len(known), f))
    ordered.sort(key=lambda f: f != TOP_K_CUT)
    return [{"factor": f, "count": counts[f], "experiments": list(experiments[f])} for f in ordered]


def intervention_body(
    kind: str, *, top_k: int | None = None, reranker: str | None = None
) -> dict[str, Any]:
    """The recorded form of an intervention; raise ``ConfigError`` on a bad combination."""
    if kind not in INTERVENTIONS:
        raise ConfigError(f"unknown intervention {kind!r} (use {', '.join(INTERVENTIONS)})")
    if top_k is not None and kind != TOP_K:
        raise ConfigError("--top-k applies only to --intervention top-k")
    if reranker is not None and kind != RERANKER:
        raise ConfigError("--reranker applies only to --intervention reranker")
    if kind == TOP_K:
        if top_k is None:
            raise ConfigError("--intervention top-k needs --top-k N (the wider cut to try)")
        if top_k < 1:
            raise ConfigError(f"--top-k must be 1 or more, not {top_k}")
        return {"kind": TOP_K, "top_k": top_k}
    if kind == RERANKER:
        if not reranker:
            raise ConfigError("--intervention reranker needs --reranker module:function")
        return {"kind": RERANKER, "reranker": reranker}
    return {"kind": GOLD_CONTEXT}


def intervention_label(intervention: Mapping[str, Any]) -> str:
    """How the output names an intervention: ``gold context``, ``top-k 4``, ``reranker m:f``."""
    kind = intervention["kind"]
    if kind == TOP_K:
        return f"top-k {intervention['top_k']}"
    if kind == RERANKER:
        return f"reranker {intervention['reranker']}"
    return GOLD_LABEL


def child_labels(intervention: Mapping[str, Any]) -> tuple[str, str]:
    """The labels of the two child runs of an intervention: (intervention, control)."""
    if intervention["kind"] == GOLD_CONTEXT:
        return GOLD_LABEL, CONTROL_LABEL
    return intervention_label(intervention), REPLAY_CONTROL_LABEL
