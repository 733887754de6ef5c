"""The label logic of a diagnosis: constants and pure functions over small inputs.

Nothing here reads the ledger, plans or runs anything, or imports a heavy library, so the CLI
can load it at start-up to print labels and reasons. Requirements it meets:

1. A parent verdict selects its case when it is a ``fail`` or a graded value of 0
   (``is_failure``); under a child run a verdict reads as passed, failed or not observed
   (``outcome_of``), a graded criterion passing only at its full value.
2. A gold-context case is labelled from the parent's evidence and its outcomes under the
   control and the gold passages (``gold_label``, the table in docs/diagnosis.md); a replay
   case gets a result and a strength (``replay_result``). The evidence reads relevance in the
   unit it is given, by ``oloproof.relevance`` as the retrieval metrics read it.
   A gold-context control that retrieved other passages than the parent run did
   (``retrieved_alike``), or assembled another context from them (``assembled_alike``: a
   tokenizer reading a file no fingerprint covers), leaves the parent's evidence describing
   another system, so a recovered
   case is not given the stage that evidence would name; nor is one whose retrieval holds other
   text than its gold passage under the gold passage's doc_id and chunk_id
   (``gold_text_differs``: the corpus is not the one the case was labelled against). A replay
   whose intervention gave the model the very context its control did tested nothing on that
   case, and neither did gold passages that are the very passages the control was handed
   (``given_gold``): a pass with them is not a recovery.
3. A case that passes under the control is unstable, not diagnosed; a missing verdict (an
   errored case, or a child run that stopped before reaching it) leaves the case UNRESOLVED.
4. Counts are printed in a fixed order (``label_counts``); the factors the recovered upstream
   failures point at, and the experiments worth trying, come from the recorded drop reasons
   and the top-k cut (``implicated``). They are hypotheses, never causes.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from oloproof.callargs import OPTIONS, Spelling
from oloproof.errors import ConfigError
from oloproof.relevance import (
    CHUNK,
    RANKING_EVALUATORS,
    first_relevant,
    relevant_units,
    unit_of,
)

if TYPE_CHECKING:  # bodies imports the ledger, which this module must not load
    from oloproof.bodies import VerdictCopy

GOLD_CONTEXT = "gold-context"
TOP_K = "top-k"
RERANKER = "reranker"
TOKEN_BUDGET = "token-budget"
INTERVENTIONS = (GOLD_CONTEXT, TOP_K, RERANKER, TOKEN_BUDGET)
# The interventions that replay the parent's recorded retrieval (the retriever is not called).
REPLAYS = (TOP_K, RERANKER, TOKEN_BUDGET)

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
RETRIEVAL_DRIFTED = "control_retrieval_drifted"
CONTEXT_UNCHANGED = "context_unchanged"
# The repeats of a role were handed different contexts, so whether the intervention changed the
# case's context has no one answer.
CONTEXT_VARIED = "context_varied_between_repeats"
GOLD_TEXT_DIFFERS = "gold_text_differs"
NO_GOLD_CONTEXT = "no_gold_context"
NO_VERDICT = "no_verdict"  # an excluded case the parent gave no verdict on
# An excluded case of a parent run with repeats that failed in some of them and not in others.
FAILED_IN_SOME_REPEATS = "failed_in_some_repeats"
# The order label lines are printed in, within a label.
REASONS = (
    RELEVANT_NOT_RETRIEVED,
    RELEVANT_RANKED_OUT,
    RELEVANT_DROPPED,
    FAILS_WITH_GOLD,
    INTERVENTION_UNSUPPORTED,
    PASSES_UNDER_CONTROL,
    CONTEXT_UNCHANGED,
    CONTEXT_VARIED,
    RECOVERS_ONLY_WITH_GOLD_ALONE,
    NO_RELEVANCE_LABELS,
    RETRIEVAL_DRIFTED,
    GOLD_TEXT_DIFFERS,
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

# A replay case whose relevant passage the intervention brought within its cut, only for the
# token budget to drop it again: the replay never showed the model that passage.
BUDGET_DROPPED = "admitted_then_dropped_by_budget"

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


def outcome_of(verdict: VerdictCopy | None) -> str:
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


def is_failure(verdict: VerdictCopy | None) -> bool:
    """Whether a parent verdict selects its case: a fail, or a graded value of 0."""
    if verdict is None:
        return False
    status = verdict.get("s")
    return status == "fail" or (status == "value" and float(verdict["v"]) == 0.0)


def gold_label(
    *,
    evidence: Evidence,
    top_k: int,
    control: str,
    intervention: str,
    drifted: bool = False,
    unchanged: bool = False,
    varied: bool = False,
    differs: bool = False,
) -> Label:
    """Label one case from the parent's evidence and its outcomes under control and gold.

    ``drifted``: the control retrieved or assembled other passages than the parent did. The
    labels that read the parent's retrieval and context then describe a system that is no
    longer the one re-executed; a failure under gold, which reads neither, still stands. So it
    does when ``differs``: the parent's retrieval holds other text than the gold passage under
    its doc_id and chunk_id.
    ``unchanged``: the control was handed the very gold passages (``given_gold``), so a pass
    with them beside a fail under the control is the system's own variation, not a recovery; a
    fail under both is a failure with the gold passages all the same. ``varied``: the
    control's repeats were handed the gold passages in some and other passages in others, so
    such a pass is neither a recovery nor the system's own variation alone.
    """
    if control == PASSED:
        return Label(UNRESOLVED, PASSES_UNDER_CONTROL, CONTROL_RECOVERY)
    if control != FAILED:
        return Label(UNRESOLVED, CONTROL_NOT_OBSERVED, NO_STRENGTH)
    if intervention == FAILED:
        return Label(GENERATION_FAILURE, FAILS_WITH_GOLD, INTERVENTION_NON_RECOVERY)
    if intervention != PASSED:
        return Label(UNRESOLVED, INTERVENTION_NOT_OBSERVED, NO_STRENGTH)
    if unchanged:
        return Label(UNRESOLVED, CONTEXT_UNCHANGED, NO_STRENGTH)
    if varied:
        return Label(UNRESOLVED, CONTEXT_VARIED, NO_STRENGTH)
    position = evidence.position
    if position == POSITION_UNLABELLED:
        return Label(UNRESOLVED, NO_RELEVANCE_LABELS, INTERVENTION_RECOVERY)
    if drifted:
        return Label(UNRESOLVED, RETRIEVAL_DRIFTED, INTERVENTION_RECOVERY)
    if differs:
        return Label(UNRESOLVED, GOLD_TEXT_DIFFERS, INTERVENTION_RECOVERY)
    if position == POSITION_NONE:
        return Label(RETRIEVAL_MISS, RELEVANT_NOT_RETRIEVED, INTERVENTION_RECOVERY)
    if int(position) > top_k:
        return Label(RANKED_OUT, RELEVANT_RANKED_OUT, INTERVENTION_RECOVERY)
    if not evidence.in_context:
        return Label(CONTEXT_ASSEMBLY_LOSS, RELEVANT_DROPPED, INTERVENTION_RECOVERY)
    return Label(UNRESOLVED, RECOVERS_ONLY_WITH_GOLD_ALONE, INTERVENTION_RECOVERY)


def replay_result(
    *, control: str, intervention: str, unchanged: bool = False, varied: bool = False
) -> tuple[str, str]:
    """(result, strength) of one case under a replay beside its replay control.

    ``unchanged``: the intervention handed generate exactly what the control did, so a verdict
    that differs between them is the system's own variation, and one that agrees says nothing
    about the intervention either. ``varied``: it did so in some repeats and not in others (a
    role's repeats were handed different contexts), so neither can be said.
    """
    if control == PASSED:
        return PASSES_UNDER_CONTROL, CONTROL_RECOVERY
    if control != FAILED:
        return CONTROL_NOT_OBSERVED, NO_STRENGTH
    if intervention not in (PASSED, FAILED):
        return INTERVENTION_NOT_OBSERVED, NO_STRENGTH
    if unchanged:
        return CONTEXT_UNCHANGED, NO_STRENGTH
    if varied:
        return CONTEXT_VARIED, NO_STRENGTH
    if intervention == PASSED:
        return RECOVERED, INTERVENTION_RECOVERY
    return STILL_FAILED, INTERVENTION_NON_RECOVERY


def _passages(passages: Sequence[Mapping[str, Any]]) -> list[tuple[Any, ...]]:
    return [(p.get("doc_id"), p.get("chunk_id"), p.get("text")) for p in passages]


def retrieved_alike(one: Mapping[str, Any] | None, other: Mapping[str, Any] | None) -> bool:
    """Whether two recorded retrievals returned the same passages in the same order.

    Scores are left out: no label reads them, and a retriever that rescores the same ranking
    moves no relevant passage.
    """
    return _passages((one or {}).get("candidates", [])) == _passages(
        (other or {}).get("candidates", [])
    )


def assembled_alike(one: Mapping[str, Any] | None, other: Mapping[str, Any] | None) -> bool:
    """Whether two recorded contexts handed the model the same passages in the same order.

    Token counts are left out: a tokenizer that counts otherwise yet keeps the same passages
    moves no relevant passage into or out of the context.
    """
    return _passages((one or {}).get("items", [])) == _passages((other or {}).get("items", []))


def _words(text: str) -> str:
    return " ".join(text.split())


def gold_text_differs(retrieval: Mapping[str, Any] | None, expected: Mapping[str, Any]) -> bool:
    """Whether ``retrieval`` holds a passage with a gold passage's doc_id and chunk_id whose
    text does not hold the gold passage's text (spacing aside): the corpus is then not the one
    the case was labelled against (re-chunked, or edited), and a recovery with the gold text
    says nothing about the passage retrieved under its name. A gold passage without a chunk_id
    names no one passage, so it is compared with none."""
    gold = {
        (entry["doc_id"], entry["chunk_id"]): _words(entry["text"])
        for entry in expected.get("gold_context") or []
        if entry.get("chunk_id") is not None
    }
    for candidate in (retrieval or {}).get("candidates", []):
        text = gold.get((candidate["doc_id"], candidate.get("chunk_id")))
        held = candidate.get("text")
        if text is not None and held is not None and text not in _words(held):
            return True
    return False


def given_gold(context: Mapping[str, Any] | None, expected: Mapping[str, Any]) -> bool:
    """Whether ``context`` (a control's) handed the model exactly the case's gold passages: the
    same texts of the same documents, in the same order (and the same chunks, where a gold
    passage names one). Only their positions in a ranking, which gold passages have none of,
    can then differ."""
    items = (context or {}).get("items", [])
    gold = expected.get("gold_context") or []
    if context is None or len(items) != len(gold):
        return False
    return all(
        item["doc_id"] == entry["doc_id"]
        and item.get("text") == entry["text"]
        and entry.get("chunk_id") in (None, item.get("chunk_id"))
        for item, entry in zip(items, gold, strict=True)
    )


def failed_repeats(
    verdict: VerdictCopy | None, repeats: Sequence[Mapping[str, Any]] | None, criterion: str
) -> int:
    """How many of a case's repeats failed ``criterion`` (``is_failure``) when the case as a
    whole did not, its other repeats having done better: 0 for a case run once, one that failed
    as a whole, or one no repeat failed."""
    if not repeats or verdict is None or is_failure(verdict):
        return 0
    return sum(is_failure((r.get("verdicts") or {}).get(criterion)) for r in repeats)


def evidence_of(
    retrieval: Mapping[str, Any] | None,
    context: Mapping[str, Any] | None,
    expected: Mapping[str, Any],
    top_k: int | None,
    unit: str,
) -> Evidence:
    """Read one case's relevant passages out of its recorded retrieval and context, relevance
    read as ``unit`` (``oloproof.relevance``, as the retrieval metrics read it)."""
    relevant = relevant_units(expected, unit)
    if not relevant:
        return Evidence(POSITION_UNLABELLED)
    found = first_relevant((retrieval or {}).get("candidates", []), relevant, unit)
    position = POSITION_NONE if found is None else str(found)
    items = (context or {}).get("items", [])
    in_context = any(unit_of(item, unit) in relevant for item in items)
    reasons: list[str] = []
    for dropped in (context or {}).get("dropped", []):
        within = top_k is None or (dropped.get("position") or 0) <= top_k
        if unit_of(dropped, unit) in relevant and within and dropped["reason"] not in reasons:
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
    kind: str,
    *,
    top_k: int | None = None,
    reranker: str | None = None,
    token_budget: int | None = None,
    spelled: Spelling = OPTIONS,
) -> dict[str, Any]:
    """The recorded form of an intervention; raise ``ConfigError`` on a bad combination, naming
    the options as ``spelled`` does."""
    name, where = spelled.name, spelled.function
    if kind not in INTERVENTIONS:
        raise ConfigError(
            f"unknown intervention {kind!r} (use {', '.join(INTERVENTIONS)})", where=where
        )
    for option, value, kinds in (
        ("top_k", top_k, (TOP_K, TOKEN_BUDGET)),
        ("reranker", reranker, (RERANKER,)),
        ("token_budget", token_budget, (TOKEN_BUDGET,)),
    ):
        if value is not None and kind not in kinds:
            raise ConfigError(
                f"{name(option)} applies only to {name('intervention')} {' or '.join(kinds)}",
                where=where,
            )
    if top_k is not None and top_k < 1:
        raise ConfigError(f"{name('top_k')} must be 1 or more, not {top_k}", where=where)
    needs = spelled.given("intervention", kind) + " needs "
    if kind == TOP_K:
        if top_k is None:
            raise ConfigError(
                needs + f"{spelled.wanted('top_k', 'N')} (the wider cut to try)", where=where
            )
        return {"kind": TOP_K, "top_k": top_k}
    if kind == RERANKER:
        if not reranker:
            raise ConfigError(needs + spelled.wanted("reranker", "module:function"), where=where)
        return {"kind": RERANKER, "reranker": reranker}
    if kind == TOKEN_BUDGET:
        if token_budget is None:
            raise ConfigError(
                needs + f"{spelled.wanted('token_budget', 'N')} (the budget to try)", where=where
            )
        if token_budget < 1:
            raise ConfigError(
                f"{name('token_budget')} must be 1 or more, not {token_budget}", where=where
            )
        body: dict[str, Any] = {"kind": TOKEN_BUDGET, "token_budget": token_budget}
        if top_k is not None:
            body["top_k"] = top_k
        return body
    return {"kind": GOLD_CONTEXT}


def intervention_label(intervention: Mapping[str, Any]) -> str:
    """How the output names an intervention: ``gold context``, ``top-k 4``, ``reranker m:f``,
    ``token-budget 900`` (``token-budget 900 top-k 20`` with a cut)."""
    kind = intervention["kind"]
    if kind == TOP_K:
        return f"top-k {intervention['top_k']}"
    if kind == RERANKER:
        return f"reranker {intervention['reranker']}"
    if kind == TOKEN_BUDGET:
        cut = f" top-k {intervention['top_k']}" if "top_k" in intervention else ""
        return f"token-budget {intervention['token_budget']}{cut}"
    return GOLD_LABEL


# Why an intervention cannot move a ranking metric, by intervention.
_KEEPS_THE_RANKING = {
    GOLD_CONTEXT: "it replaces the context the model is given and never touches the retrieval",
    TOP_K: "it changes how many retrieved passages reach the model, never their order",
    TOKEN_BUDGET: "it changes which retrieved passages fit the context, never their order",
}


def unchangeable(
    intervention: Mapping[str, Any],
    criterion: str,
    evaluator_type: str | None,
    spelled: Spelling = OPTIONS,
) -> str | None:
    """Why ``intervention`` cannot change ``criterion`` (None when it can).

    A ranking metric reads only the recorded ranking, so only a reranker can move it; every
    other criterion reads the answer or the context, which each intervention changes.
    """
    kind = intervention["kind"]
    if evaluator_type not in RANKING_EVALUATORS or kind == RERANKER:
        return None
    sep = " " if spelled.function is None else ", "  # options, or keyword arguments
    reranker = (
        spelled.given("intervention", RERANKER)
        + sep
        + spelled.wanted("reranker", "module:function")
    )
    return (
        f"{spelled.given('intervention', kind)} cannot change {criterion}: "
        f"{_KEEPS_THE_RANKING[kind]}, and {criterion} scores the ranking alone. The "
        f"intervention that can: reranker ({reranker})"
    )


def changes_nothing(
    intervention: Mapping[str, Any],
    *,
    top_k: int,
    token_budget: int | None,
    depth: int | None,
    spelled: Spelling = OPTIONS,
) -> str | None:
    """Why a replay would assemble exactly the parent's contexts, or cut past what was recorded
    (None when it is a real change)."""
    kind = intervention["kind"]
    cut = intervention.get("top_k")
    if cut is not None and depth is not None and cut > depth:
        return (
            f"{spelled.given('top_k', cut)} cuts past the recorded retrievals, which hold at "
            f"most {depth} candidates (the run's depth); use {spelled.given('top_k', depth)} "
            "or less"
        )
    if kind == TOP_K and cut == top_k:
        return (
            f"{spelled.given('top_k', cut)} is the run's own top_k, so the replay would change "
            "nothing"
        )
    same_budget = intervention.get("token_budget") == token_budget
    if kind == TOKEN_BUDGET and same_budget and cut in (None, top_k):
        return (
            f"{spelled.given('token_budget', token_budget)} is the run's own token_budget, so "
            "the replay would change nothing"
        )
    return None


def combine(outcomes: Sequence[str]) -> str:
    """One outcome from a case's repeats: passed when any repeat passed, failed when every
    repeat failed, otherwise not observed."""
    if PASSED in outcomes:
        return PASSED
    if outcomes and all(o == FAILED for o in outcomes):
        return FAILED
    return NOT_OBSERVED


def budget_dropped(
    parent: Mapping[str, Any] | None,
    parent_top_k: int,
    ranking: Mapping[str, Any] | None,
    context: Mapping[str, Any] | None,
    expected: Mapping[str, Any],
    top_k: int,
    unit: str,
) -> list[int]:
    """Positions of the relevant passages (read as ``unit``) an intervention admitted and the
    budget dropped.

    A relevant passage is admitted by the intervention when it is within the intervention's cut
    (``top_k`` of ``ranking``) but was not within the parent's (``parent_top_k`` of
    ``parent``). The case counts (a non-empty list) when it has such passages, none of them
    reached the model, and ``token_budget`` is why: the replay never showed them to the model.
    """
    relevant = relevant_units(expected, unit)
    if not relevant:
        return []
    # Which passage is which: its chunk, whatever unit relevance is read in.
    before = {unit_of(c, CHUNK) for c in (parent or {}).get("candidates", [])[:parent_top_k]}
    admitted = [
        (position, unit_of(c, CHUNK))
        for position, c in enumerate((ranking or {}).get("candidates", [])[:top_k], start=1)
        if unit_of(c, unit) in relevant and unit_of(c, CHUNK) not in before
    ]
    kept = {unit_of(item, CHUNK) for item in (context or {}).get("items", [])}
    if not admitted or any(passage in kept for _, passage in admitted):
        return []
    dropped = {
        d.get("position")
        for d in (context or {}).get("dropped", [])
        if d["reason"] == "token_budget"
    }
    return [position for position, _ in admitted if position in dropped]


def child_labels(intervention: Mapping[str, Any], repeats: int = 1) -> list[tuple[str, str]]:
    """``(label, role)`` of each child run of an intervention, in the order they are run.

    One repeat is the intervention then its control; with more, each repeat's pair follows the
    last (``gold context repeat 1``, ``control repeat 1``, ``gold context repeat 2``, ...), so a
    drift in the system over time touches both roles alike.
    """
    if intervention["kind"] == GOLD_CONTEXT:
        treated, control = GOLD_LABEL, CONTROL_LABEL
    else:
        treated, control = intervention_label(intervention), REPLAY_CONTROL_LABEL
    if repeats == 1:
        return [(treated, "intervention"), (control, "control")]
    pairs: list[tuple[str, str]] = []
    for r in range(1, repeats + 1):
        pairs += [(f"{treated} repeat {r}", "intervention"), (f"{control} repeat {r}", "control")]
    return pairs
