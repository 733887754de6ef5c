"""The diagnosis label logic as pure functions over small inputs: every branch."""

from __future__ import annotations

from typing import Any

import pytest

from oloproof.diagnosis import labels as dg
from oloproof.diagnosis.labels import (
    CONTEXT_ASSEMBLY_LOSS,
    FAILED,
    GENERATION_FAILURE,
    NOT_OBSERVED,
    PASSED,
    RANKED_OUT,
    RETRIEVAL_MISS,
    UNRESOLVED,
    Evidence,
    Label,
    gold_label,
)
from oloproof.errors import ConfigError
from oloproof.relevance import CHUNK, DOCUMENT

TOP_K = 2


def label(evidence: Evidence, control: str = FAILED, intervention: str = PASSED) -> Label:
    return gold_label(evidence=evidence, top_k=TOP_K, control=control, intervention=intervention)


# -- gold_label ---------------------------------------------------------------------------


def test_a_case_that_passes_under_the_control_is_unstable_not_diagnosed() -> None:
    for intervention in (PASSED, FAILED, NOT_OBSERVED):
        got = label(Evidence("none"), control=PASSED, intervention=intervention)
        assert got == Label(UNRESOLVED, "passes_under_control", "control_recovery")


def test_a_control_without_a_verdict_leaves_the_case_unresolved() -> None:
    got = label(Evidence("none"), control=NOT_OBSERVED)
    assert got == Label(UNRESOLVED, "control_not_observed", "none")


def test_still_failing_with_the_gold_passages_is_a_generation_failure() -> None:
    for evidence in (Evidence("1", in_context=True), Evidence("none"), Evidence("5")):
        got = label(evidence, intervention=FAILED)
        assert got == Label(
            GENERATION_FAILURE, "fails_with_gold_context", "intervention_non_recovery"
        )


def test_an_intervention_without_a_verdict_leaves_the_case_unresolved() -> None:
    got = label(Evidence("none"), intervention=NOT_OBSERVED)
    assert got == Label(UNRESOLVED, "intervention_not_observed", "none")


def test_recovering_when_nothing_relevant_was_retrieved_is_a_retrieval_miss() -> None:
    got = label(Evidence("none"))
    assert got == Label(RETRIEVAL_MISS, "relevant_not_retrieved", "intervention_recovery")


def test_recovering_when_the_relevant_passage_sat_below_top_k_is_ranked_out() -> None:
    got = label(Evidence("3"))
    assert got == Label(RANKED_OUT, "relevant_ranked_out", "intervention_recovery")


def test_recovering_when_the_relevant_passage_was_dropped_is_context_assembly_loss() -> None:
    got = label(Evidence("2", in_context=False, drop_reasons=("token_budget",)))
    assert got == Label(
        CONTEXT_ASSEMBLY_LOSS, "relevant_dropped_from_context", "intervention_recovery"
    )


def test_recovering_only_with_the_gold_passages_alone_is_not_one_of_the_four() -> None:
    # The relevant passage reached the model and the answer was still wrong; only a context
    # of the gold passages alone helped. No stage is implicated.
    got = label(Evidence("1", in_context=True))
    assert got == Label(UNRESOLVED, "recovers_only_with_gold_alone", "intervention_recovery")


def test_recovering_without_relevance_labels_cannot_name_a_stage() -> None:
    got = label(Evidence("unlabelled"))
    assert got == Label(UNRESOLVED, "no_relevance_labels", "intervention_recovery")


# -- replay_result ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("control", "intervention", "expected"),
    [
        (PASSED, PASSED, ("passes_under_control", "control_recovery")),
        (PASSED, FAILED, ("passes_under_control", "control_recovery")),
        (NOT_OBSERVED, PASSED, ("control_not_observed", "none")),
        (FAILED, PASSED, ("recovered", "intervention_recovery")),
        (FAILED, FAILED, ("still_failed", "intervention_non_recovery")),
        (FAILED, NOT_OBSERVED, ("intervention_not_observed", "none")),
    ],
)
def test_replay_result(control: str, intervention: str, expected: tuple[str, str]) -> None:
    assert dg.replay_result(control=control, intervention=intervention) == expected


# -- verdicts -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("verdict", "outcome", "selected"),
    [
        ({"s": "pass"}, PASSED, False),
        ({"s": "fail"}, FAILED, True),
        ({"s": "value", "v": 1.0}, PASSED, False),
        ({"s": "value", "v": 0.0}, FAILED, True),
        ({"s": "value", "v": 0.5}, FAILED, False),
        ({"s": "missing", "r": "execution_errored"}, NOT_OBSERVED, False),
        ({"s": "excluded", "r": "no_relevance_labels"}, NOT_OBSERVED, False),
        (None, NOT_OBSERVED, False),
    ],
)
def test_outcomes_and_selection(
    verdict: dict[str, Any] | None, outcome: str, selected: bool
) -> None:
    assert dg.outcome_of(verdict) == outcome
    assert dg.is_failure(verdict) is selected


# -- evidence_of --------------------------------------------------------------------------


def retrieval(*doc_ids: str) -> dict[str, Any]:
    return {"candidates": [{"doc_id": d} for d in doc_ids]}


EXPECTED = {"relevant": [{"doc_id": "kb-01"}]}


def test_evidence_when_the_relevant_passage_reached_the_model() -> None:
    context = {"items": [{"doc_id": "kb-01"}], "dropped": []}
    assert dg.evidence_of(retrieval("kb-01", "kb-02"), context, EXPECTED, 2, DOCUMENT) == Evidence(
        "1", True, ()
    )


def test_evidence_when_the_budget_dropped_it() -> None:
    context = {
        "items": [{"doc_id": "kb-09"}],
        "dropped": [
            {"doc_id": "kb-01", "position": 2, "reason": "token_budget"},
            {"doc_id": "kb-03", "position": 3, "reason": "top_k"},
        ],
    }
    got = dg.evidence_of(retrieval("kb-09", "kb-01", "kb-03"), context, EXPECTED, 2, DOCUMENT)
    assert got == Evidence("2", False, ("token_budget",))


def test_evidence_ignores_the_top_k_drop_of_a_passage_below_the_cut() -> None:
    context = {"items": [], "dropped": [{"doc_id": "kb-01", "position": 3, "reason": "top_k"}]}
    got = dg.evidence_of(retrieval("kb-08", "kb-09", "kb-01"), context, EXPECTED, 2, DOCUMENT)
    assert got == Evidence("3", False, ())


def test_evidence_when_nothing_relevant_was_retrieved_or_nothing_is_labelled() -> None:
    assert dg.evidence_of(retrieval(), {"items": []}, EXPECTED, 2, DOCUMENT) == Evidence("none")
    assert dg.evidence_of(None, None, EXPECTED, 2, DOCUMENT) == Evidence("none")
    assert dg.evidence_of(retrieval("kb-01"), None, {}, 2, DOCUMENT) == Evidence("unlabelled")
    ungraded = {"relevant": [{"doc_id": "kb-01", "grade": 0}]}
    assert dg.evidence_of(retrieval("kb-01"), None, ungraded, 2, DOCUMENT) == Evidence("unlabelled")


def test_evidence_under_the_chunk_unit_matches_the_chunk_not_its_document() -> None:
    """Another chunk of the relevant chunk's document is not relevant evidence under ``chunk``:
    where it stands first, the relevant chunk is ranked out or not retrieved, as hit_rate
    (chunk) scores it."""
    expected = {"relevant": [{"doc_id": "kb-01", "chunk_id": "c2"}]}
    ranked = {
        "candidates": [
            {"doc_id": "kb-01", "chunk_id": "c1"},
            {"doc_id": "kb-09", "chunk_id": "c1"},
            {"doc_id": "kb-01", "chunk_id": "c2"},
        ]
    }
    context = {
        "items": [{"doc_id": "kb-01", "chunk_id": "c1"}, {"doc_id": "kb-09", "chunk_id": "c1"}],
        "dropped": [{"doc_id": "kb-01", "chunk_id": "c2", "position": 3, "reason": "top_k"}],
    }
    assert dg.evidence_of(ranked, context, expected, 2, CHUNK) == Evidence("3", False, ())
    assert dg.evidence_of(ranked, context, expected, 2, DOCUMENT) == Evidence("1", True, ())
    missed = {"candidates": ranked["candidates"][:2]}
    assert dg.evidence_of(missed, context, expected, 2, CHUNK) == Evidence("none")
    # A label without a chunk names no chunk, and a candidate without one matches no label.
    unchunked = {"relevant": [{"doc_id": "kb-01"}]}
    bare = {"candidates": [{"doc_id": "kb-01"}]}
    assert dg.evidence_of(bare, None, unchunked, 2, CHUNK) == Evidence("unlabelled")
    assert dg.evidence_of(bare, None, expected, 2, CHUNK) == Evidence("none")


# -- counts and implicated factors --------------------------------------------------------


def case(label: str, reason: str, strength: str, drops: tuple[str, ...] = ()) -> dict[str, Any]:
    return {"label": label, "reason": reason, "strength": strength, "drop_reasons": list(drops)}


RECOVERY = "intervention_recovery"


def test_label_counts_follow_the_print_order() -> None:
    cases = [
        case(UNRESOLVED, "passes_under_control", "control_recovery"),
        case(GENERATION_FAILURE, "fails_with_gold_context", "intervention_non_recovery"),
        case(CONTEXT_ASSEMBLY_LOSS, "relevant_dropped_from_context", RECOVERY),
        case(UNRESOLVED, "recovers_only_with_gold_alone", RECOVERY),
        case(RETRIEVAL_MISS, "relevant_not_retrieved", RECOVERY),
        case(CONTEXT_ASSEMBLY_LOSS, "relevant_dropped_from_context", RECOVERY),
        case(RANKED_OUT, "relevant_ranked_out", RECOVERY),
    ]
    assert [(e["label"], e["reason"], e["count"]) for e in dg.label_counts(cases)] == [
        (RETRIEVAL_MISS, "relevant_not_retrieved", 1),
        (RANKED_OUT, "relevant_ranked_out", 1),
        (CONTEXT_ASSEMBLY_LOSS, "relevant_dropped_from_context", 2),
        (GENERATION_FAILURE, "fails_with_gold_context", 1),
        (UNRESOLVED, "passes_under_control", 1),
        (UNRESOLVED, "recovers_only_with_gold_alone", 1),
    ]


def test_implicated_factors_come_from_drop_reasons_and_the_top_k_cut() -> None:
    cases = [
        case(CONTEXT_ASSEMBLY_LOSS, "relevant_dropped_from_context", RECOVERY, ("token_budget",)),
        case(CONTEXT_ASSEMBLY_LOSS, "relevant_dropped_from_context", RECOVERY, ("token_budget",)),
        case(CONTEXT_ASSEMBLY_LOSS, "relevant_dropped_from_context", RECOVERY, ("dedupe",)),
        case(RANKED_OUT, "relevant_ranked_out", RECOVERY),
        case(RETRIEVAL_MISS, "relevant_not_retrieved", RECOVERY),
        case(GENERATION_FAILURE, "fails_with_gold_context", "intervention_non_recovery"),
    ]
    assert dg.implicated(cases) == [
        {"factor": "the top-k cut", "count": 1, "experiments": ["a larger top_k", "a reranker"]},
        {
            "factor": "context budget",
            "count": 2,
            "experiments": ["a larger token budget", "smaller chunks"],
        },
        {"factor": "context assembly (dedupe)", "count": 1, "experiments": []},
    ]


def test_nothing_is_implicated_without_a_recovered_upstream_failure() -> None:
    cases = [
        case(RETRIEVAL_MISS, "relevant_not_retrieved", RECOVERY),
        case(GENERATION_FAILURE, "fails_with_gold_context", "intervention_non_recovery"),
        case(UNRESOLVED, "passes_under_control", "control_recovery", ("token_budget",)),
    ]
    assert dg.implicated(cases) == []


# -- interventions ------------------------------------------------------------------------


def test_intervention_bodies_and_labels() -> None:
    gold = dg.intervention_body("gold-context")
    top_k = dg.intervention_body("top-k", top_k=4)
    rerank = dg.intervention_body("reranker", reranker="rerank:shortest_first")
    assert gold == {"kind": "gold-context"}
    assert top_k == {"kind": "top-k", "top_k": 4}
    assert rerank == {"kind": "reranker", "reranker": "rerank:shortest_first"}
    assert [dg.intervention_label(i) for i in (gold, top_k, rerank)] == [
        "gold context",
        "top-k 4",
        "reranker rerank:shortest_first",
    ]


@pytest.mark.parametrize(
    ("kind", "options", "message"),
    [
        ("magic", {}, "unknown intervention"),
        ("top-k", {}, "needs --top-k"),
        ("top-k", {"top_k": 0}, "1 or more"),
        ("reranker", {}, "needs --reranker"),
        ("gold-context", {"top_k": 3}, "--top-k applies only"),
        ("top-k", {"top_k": 3, "reranker": "m:f"}, "--reranker applies only"),
    ],
)
def test_bad_interventions_are_refused(kind: str, options: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        dg.intervention_body(kind, **options)
