"""Retrieval metrics against values worked out by hand, and the evaluators' exclusions."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
from pydantic import TypeAdapter

from oloproof.errors import DatasetError
from oloproof.evaluator_config import EvaluatorConfig
from oloproof.evaluators import build_evaluator
from oloproof.evaluators.base import CaseView, Evaluator
from oloproof.evaluators.retrieval import (
    hit_at_k,
    ndcg_at_k,
    precision_at_k,
    recall_at_k,
    reciprocal_rank_at_k,
)

ADAPTER: TypeAdapter[EvaluatorConfig] = TypeAdapter(EvaluatorConfig)
D2 = 1 / math.log2(3)  # the discount at rank 2: 0.6309...
D3 = 1 / math.log2(4)  # rank 3: 0.5


def build(kind: str, k: int, **extra: Any) -> Evaluator:
    config = ADAPTER.validate_python({"type": kind, "k": k, **extra})
    return build_evaluator(config, base_dir=Path("."))


# --- the pure functions ----------------------------------------------------------------------


def test_one_relevant_at_rank_two_of_three() -> None:
    ranked = ["d1", "d2", "d3", "d4"]
    grades = {"d2": 1.0, "d4": 1.0, "d5": 2.0}
    assert hit_at_k(ranked, grades, 3)
    assert recall_at_k(ranked, grades, 3) == pytest.approx(1 / 3)
    assert precision_at_k(ranked, grades, 3) == pytest.approx(1 / 3)
    assert reciprocal_rank_at_k(ranked, grades, 3) == pytest.approx(1 / 2)
    # DCG = 1·D2; ideal = [2, 1, 1] → 2 + D2 + D3 = 3.13093
    assert ndcg_at_k(ranked, grades, 3) == pytest.approx(D2 / (2 + D2 + D3))
    assert ndcg_at_k(ranked, grades, 3) == pytest.approx(0.201515, abs=1e-6)


def test_k_cuts_before_the_relevant_unit() -> None:
    ranked = ["d1", "d2"]
    grades = {"d2": 1.0}
    assert not hit_at_k(ranked, grades, 1)
    for metric in (recall_at_k, precision_at_k, reciprocal_rank_at_k, ndcg_at_k):
        assert metric(ranked, grades, 1) == 0.0


def test_fewer_than_k_retrieved() -> None:
    ranked = ["d2"]
    grades = {"d2": 1.0, "d3": 1.0}
    assert recall_at_k(ranked, grades, 5) == 0.5
    assert precision_at_k(ranked, grades, 5) == pytest.approx(0.2)  # divides by k, not by 1
    assert reciprocal_rank_at_k(ranked, grades, 5) == 1.0
    assert ndcg_at_k(ranked, grades, 5) == pytest.approx(1 / (1 + D2))  # 0.61315
    assert ndcg_at_k([], grades, 5) == 0.0


def test_no_relevant_retrieved() -> None:
    ranked = ["x", "y", "z"]
    grades = {"a": 1.0, "y": 0.0, "z": -1.0}
    assert not hit_at_k(ranked, grades, 3)
    for metric in (recall_at_k, precision_at_k, reciprocal_rank_at_k, ndcg_at_k):
        assert metric(ranked, grades, 3) == 0.0


def test_graded_labels() -> None:
    ranked = ["a", "b", "c"]
    grades = {"a": 1.0, "b": 3.0, "c": 2.0}
    dcg = 1 + 3 * D2 + 2 * D3  # 3.89279
    ideal = 3 + 2 * D2 + 1 * D3  # 4.76186
    assert ndcg_at_k(ranked, grades, 3) == pytest.approx(dcg / ideal)
    assert ndcg_at_k(ranked, grades, 3) == pytest.approx(0.817494, abs=1e-6)
    # Grades do not weigh in the binary metrics.
    assert recall_at_k(ranked, grades, 2) == pytest.approx(2 / 3)
    assert reciprocal_rank_at_k(ranked, grades, 3) == 1.0


def test_the_ideal_ranking_uses_every_relevant_unit_even_unretrieved() -> None:
    # A perfect top 1 is not a perfect top 2 when a second relevant unit exists.
    assert ndcg_at_k(["a"], {"a": 1.0, "b": 1.0}, 1) == 1.0
    assert ndcg_at_k(["a"], {"a": 1.0, "b": 1.0}, 2) == pytest.approx(1 / (1 + D2))
    # The ideal is cut at k: a lower-graded relevant unit beyond k does not enter it.
    assert ndcg_at_k(["b"], {"a": 3.0, "b": 1.0}, 1) == pytest.approx(1 / 3)


def test_the_guide_worked_example() -> None:
    # statistics.md: one relevant document at position 2 gives 1/log2(3) = 0.63093.
    assert ndcg_at_k(["kb-09", "kb-01"], {"kb-01": 1.0}, 6) == pytest.approx(0.63093, abs=1e-5)


def test_a_repeated_unit_counts_once_at_its_first_position() -> None:
    ranked = ["d1", "d1", "d2"]  # two chunks of d1, then d2
    grades = {"d1": 1.0, "d2": 1.0}
    assert recall_at_k(ranked, grades, 2) == 0.5
    assert precision_at_k(ranked, grades, 2) == 0.5  # not 2/2
    assert ndcg_at_k(ranked, grades, 2) == pytest.approx(1 / (1 + D2))
    # d2 keeps its position 3: the repeat is not removed from the ranking.
    assert precision_at_k(ranked, grades, 3) == pytest.approx(2 / 3)
    assert ndcg_at_k(ranked, grades, 3) == pytest.approx((1 + D3) / (1 + D2))
    assert reciprocal_rank_at_k(["x", "d2", "d2"], grades, 3) == 0.5


def test_metrics_stay_in_the_unit_interval() -> None:
    grades = {"a": 2.0, "b": 2.0}
    assert ndcg_at_k(["b", "a"], grades, 2) == 1.0
    assert ndcg_at_k(["a", "b", "a", "b"], grades, 4) == 1.0


# --- the evaluators --------------------------------------------------------------------------


def candidates(*units: str | tuple[str, str]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for position, unit in enumerate(units):
        doc, chunk = (unit, None) if isinstance(unit, str) else unit
        entry: dict[str, Any] = {"doc_id": doc, "score": 1.0 - position / 100}
        if chunk is not None:
            entry["chunk_id"] = chunk
        out.append(entry)
    return out


def view(relevant: Any = None, *retrievals: list[dict[str, Any]], case_id: str = "c1") -> CaseView:
    expected = {} if relevant is None else {"relevant": relevant}
    artifacts = {"retrieval/v1": [{"candidates": c} for c in retrievals]} if retrievals else {}
    return CaseView(case_id, {}, expected, {}, {"answer": ""}, artifacts)


def test_evaluators_score_the_last_retrieval() -> None:
    relevant = [{"doc_id": "kb-01"}]
    case = view(relevant, candidates("kb-01"), candidates("kb-09", "kb-01"))
    assert build("hit_rate", 1).judge(case).status == "fail"
    assert build("hit_rate", 2).judge(case).status == "pass"
    assert build("recall", 2).judge(case).value == 1.0
    assert build("precision", 2).judge(case).value == 0.5
    assert build("mrr", 2).judge(case).value == 0.5
    assert build("ndcg", 6).judge(case).value == pytest.approx(D2)


def test_verdict_kinds() -> None:
    case = view([{"doc_id": "a"}], candidates("b"))
    hit = build("hit_rate", 1)
    assert hit.kind == "pass_fail"
    verdict = hit.judge(case)
    assert (verdict.status, verdict.value, verdict.reason) == ("fail", 0.0, "no_relevant_in_top_k")
    for kind in ("recall", "precision", "mrr", "ndcg"):
        ev = build(kind, 3)
        assert ev.kind == "mean"
        assert (ev.judge(case).status, ev.judge(case).value) == ("value", 0.0)


def test_an_empty_retrieval_is_judged_not_excluded() -> None:
    case = view([{"doc_id": "kb-01"}], [])
    assert build("hit_rate", 2).judge(case).status == "fail"
    assert build("recall", 2).judge(case).value == 0.0


@pytest.mark.parametrize("kind", ["hit_rate", "recall", "precision", "mrr", "ndcg"])
def test_exclusions(kind: str) -> None:
    ev = build(kind, 2)
    assert ev.judge(view(None, candidates("a"))).reason == "no_relevance_labels"
    assert ev.judge(view([], candidates("a"))).reason == "no_relevance_labels"
    unanswerable = view([{"doc_id": "a", "grade": 0}], candidates("a"))
    assert ev.judge(unanswerable).reason == "all_labels_non_relevant"
    assert all(
        ev.judge(v).status == "excluded" for v in (view(None, candidates("a")), unanswerable)
    )
    # The labels say there was something to find and nothing says what was retrieved: missing
    # (counted against the system), not excluded (version 1).
    unrecorded = ev.judge(view([{"doc_id": "a"}]))
    assert (unrecorded.status, unrecorded.reason) == ("missing", "no_retrieval_recorded")
    # Labels that leave nothing to find still exclude the case, recorded or not.
    assert ev.judge(view([{"doc_id": "a", "grade": 0}])).reason == "all_labels_non_relevant"


def test_document_unit_takes_the_best_grade_of_a_documents_chunks() -> None:
    relevant = [
        {"doc_id": "d1", "chunk_id": "c1", "grade": 1},
        {"doc_id": "d1", "chunk_id": "c3", "grade": 3},
        {"doc_id": "d2", "grade": 2},
    ]
    case = view(relevant, candidates(("d2", "c9"), ("d1", "c1"), ("d1", "c2")))
    # Units d2 (grade 2), d1 (grade 3), d1 again (nothing): DCG = 2 + 3·D2; ideal = 3 + 2·D2.
    assert build("ndcg", 3).judge(case).value == pytest.approx((2 + 3 * D2) / (3 + 2 * D2))
    assert build("precision", 3).judge(case).value == pytest.approx(2 / 3)
    assert build("recall", 1).judge(case).value == 0.5


def test_chunk_unit() -> None:
    relevant = [{"doc_id": "d1", "chunk_id": "c2"}, {"doc_id": "d2", "chunk_id": "c1", "grade": 2}]
    retrieved = candidates(("d1", "c1"), ("d1", "c2"), "d2")
    case = view(relevant, retrieved)
    assert build("hit_rate", 1, relevance_unit="chunk").judge(case).status == "fail"
    assert build("hit_rate", 1).judge(case).status == "pass"  # as documents, d1 is relevant
    assert build("mrr", 3, relevance_unit="chunk").judge(case).value == 0.5
    # d2 retrieved without a chunk_id is not the labelled chunk (d2, c1).
    assert build("recall", 3, relevance_unit="chunk").judge(case).value == 0.5
    ndcg = build("ndcg", 3, relevance_unit="chunk").judge(case).value
    assert ndcg == pytest.approx(D2 / (2 + D2))


def test_chunk_unit_needs_chunk_ids_on_labels() -> None:
    with pytest.raises(DatasetError, match=r"needs a chunk_id") as raised:
        build("recall", 2, relevance_unit="chunk").judge(view([{"doc_id": "d1"}], candidates("d1")))
    assert raised.value.where == "case c1"
    assert "expected.relevant[0]" in raised.value.message


@pytest.mark.parametrize(
    ("relevant", "problem"),
    [
        ("kb-01", "must be a list"),
        ({"doc_id": "kb-01"}, "must be a list"),
        (["kb-01"], r"\[0\] must be an object"),
        ([{"chunk_id": "c1"}], "needs a doc_id"),
        ([{"doc_id": ""}], "needs a doc_id"),
        ([{"doc_id": 7}], "needs a doc_id"),
        ([{"doc_id": "a"}, {"doc_id": "b", "chunk_id": 3}], r"\[1\] has a chunk_id"),
        ([{"doc_id": "a", "grade": "high"}], "grade that is not a finite number"),
        ([{"doc_id": "a", "grade": True}], "grade that is not a finite number"),
        ([{"doc_id": "a", "grade": float("nan")}], "grade that is not a finite number"),
        ([{"doc_id": "a", "grde": 2}], r"unknown keys \['grde'\]"),
    ],
)
def test_malformed_labels_are_dataset_errors(relevant: Any, problem: str) -> None:
    with pytest.raises(DatasetError, match=problem) as raised:
        build("ndcg", 3).judge(view(relevant, candidates("a"), case_id="money_back"))
    assert raised.value.where == "case money_back"
    assert "expected.relevant" in str(raised.value)


def test_spec_and_criterion() -> None:
    ev = build("ndcg", 6)
    assert ev.criterion == "ndcg_at_6"
    assert ev.spec() == {
        "type": "ndcg",
        "k": 6,
        "relevance_unit": "document",
        "criterion": "ndcg_at_6",
        "version": 2,
    }
    assert build("mrr", 2, criterion="first_hit").criterion == "first_hit"
