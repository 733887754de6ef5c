"""The replay logic as pure functions: admissions the budget undid, repeats, refusals."""

from __future__ import annotations

from typing import Any

import pytest

from oloproof.diagnosis import labels as dg
from oloproof.diagnosis.labels import FAILED, NOT_OBSERVED, PASSED
from oloproof.errors import ConfigError
from oloproof.relevance import DOCUMENT

EXPECTED = {"relevant": [{"doc_id": "rel"}]}


def ranking(*doc_ids: str) -> dict[str, Any]:
    return {"candidates": [{"doc_id": d} for d in doc_ids]}


def context(kept: list[tuple[str, int]], dropped: list[tuple[str, int, str]]) -> dict[str, Any]:
    return {
        "items": [{"doc_id": d, "position": p} for d, p in kept],
        "dropped": [{"doc_id": d, "position": p, "reason": r} for d, p, r in dropped],
    }


def test_a_wider_cut_whose_new_passage_the_budget_drops_is_counted() -> None:
    parent = ranking("a", "b", "rel", "c")
    made = context([("a", 1), ("b", 2)], [("rel", 3, "token_budget"), ("c", 4, "top_k")])
    assert dg.budget_dropped(parent, 2, parent, made, EXPECTED, 3, DOCUMENT) == [3]


def test_an_admitted_passage_that_reached_the_model_is_not_counted() -> None:
    parent = ranking("a", "b", "rel")
    made = context([("a", 1), ("rel", 3)], [("b", 2, "token_budget")])
    assert dg.budget_dropped(parent, 2, parent, made, EXPECTED, 3, DOCUMENT) == []


def test_a_relevant_passage_already_within_the_run_s_cut_is_not_admitted() -> None:
    # The budget dropped it in the parent already: a context assembly loss, not this.
    parent = ranking("a", "rel", "c")
    made = context([("a", 1)], [("rel", 2, "token_budget"), ("c", 3, "token_budget")])
    assert dg.budget_dropped(parent, 2, parent, made, EXPECTED, 3, DOCUMENT) == []


def test_a_reranker_that_moves_the_passage_into_the_cut_admits_it() -> None:
    parent = ranking("a", "b", "c", "rel")
    reranked = ranking("rel", "a", "b", "c")
    dropped = context([("a", 2)], [("rel", 1, "token_budget"), ("b", 3, "top_k")])
    assert dg.budget_dropped(parent, 2, reranked, dropped, EXPECTED, 2, DOCUMENT) == [1]
    kept = context([("rel", 1), ("a", 2)], [("b", 3, "top_k")])
    assert dg.budget_dropped(parent, 2, reranked, kept, EXPECTED, 2, DOCUMENT) == []


def test_a_passage_left_out_for_another_reason_is_not_the_budget_s_doing() -> None:
    parent = ranking("a", "rel")
    made = context([("a", 1)], [("rel", 2, "duplicate")])
    assert dg.budget_dropped(parent, 1, parent, made, EXPECTED, 2, DOCUMENT) == []


def test_without_relevance_labels_nothing_is_counted() -> None:
    parent = ranking("a", "rel")
    made = context([("a", 1)], [("rel", 2, "token_budget")])
    assert dg.budget_dropped(parent, 1, parent, made, {}, 2, DOCUMENT) == []


@pytest.mark.parametrize(
    ("outcomes", "combined"),
    [
        ([FAILED, FAILED, FAILED], FAILED),
        ([FAILED, PASSED, FAILED], PASSED),
        ([FAILED, NOT_OBSERVED, PASSED], PASSED),
        ([FAILED, NOT_OBSERVED, FAILED], NOT_OBSERVED),
        ([], NOT_OBSERVED),
    ],
)
def test_repeats_combine_into_one_outcome(outcomes: list[str], combined: str) -> None:
    assert dg.combine(outcomes) == combined


def test_repeats_alternate_the_roles_and_name_each_repeat() -> None:
    top_k = dg.intervention_body("top-k", top_k=4)
    assert dg.child_labels(top_k) == [("top-k 4", "intervention"), ("replay control", "control")]
    assert dg.child_labels(dg.intervention_body("gold-context"), 2) == [
        ("gold context repeat 1", "intervention"),
        ("control repeat 1", "control"),
        ("gold context repeat 2", "intervention"),
        ("control repeat 2", "control"),
    ]


def test_the_token_budget_intervention_and_its_label() -> None:
    alone = dg.intervention_body("token-budget", token_budget=900)
    cut = dg.intervention_body("token-budget", token_budget=900, top_k=20)
    assert alone == {"kind": "token-budget", "token_budget": 900}
    assert cut == {"kind": "token-budget", "token_budget": 900, "top_k": 20}
    assert dg.intervention_label(alone) == "token-budget 900"
    assert dg.intervention_label(cut) == "token-budget 900 top-k 20"
    with pytest.raises(ConfigError, match="--token-budget applies only"):
        dg.intervention_body("reranker", reranker="m:f", token_budget=5)


@pytest.mark.parametrize("evaluator", ["hit_rate", "recall", "precision", "mrr", "ndcg"])
def test_only_a_reranker_can_change_a_ranking_metric(evaluator: str) -> None:
    for kind, options in (
        ("gold-context", {}),
        ("top-k", {"top_k": 9}),
        ("token-budget", {"token_budget": 9}),
    ):
        why = dg.unchangeable(dg.intervention_body(kind, **options), "m", evaluator)
        assert why is not None and why.startswith(f"--intervention {kind} cannot change m: ")
        assert why.endswith(
            "The intervention that can: reranker (--intervention reranker "
            "--reranker module:function)"
        )
    assert dg.unchangeable(dg.intervention_body("reranker", reranker="m:f"), "m", evaluator) is None


@pytest.mark.parametrize("evaluator", ["contains", "citation_validity", "groundedness_judge", None])
def test_every_intervention_can_change_an_answer_or_context_criterion(
    evaluator: str | None,
) -> None:
    for kind in ("gold-context", "top-k", "reranker", "token-budget"):
        options = {"top-k": {"top_k": 3}, "reranker": {"reranker": "m:f"}}.get(kind, {})
        if kind == "token-budget":
            options = {"token_budget": 3}
        assert dg.unchangeable(dg.intervention_body(kind, **options), "c", evaluator) is None


def test_replays_that_would_change_nothing() -> None:
    settings = {"top_k": 5, "token_budget": 100, "depth": 20}
    same = dg.intervention_body("top-k", top_k=5)
    assert "the run's own top_k" in (dg.changes_nothing(same, **settings) or "")
    deep = dg.intervention_body("token-budget", token_budget=900, top_k=21)
    assert "at most 20 candidates" in (dg.changes_nothing(deep, **settings) or "")
    budget = dg.intervention_body("token-budget", token_budget=100, top_k=5)
    assert "the run's own token_budget" in (dg.changes_nothing(budget, **settings) or "")
    for real in (
        dg.intervention_body("top-k", top_k=3),
        dg.intervention_body("top-k", top_k=20),
        dg.intervention_body("token-budget", token_budget=100, top_k=10),
        dg.intervention_body("token-budget", token_budget=101),
    ):
        assert dg.changes_nothing(real, **settings) is None
