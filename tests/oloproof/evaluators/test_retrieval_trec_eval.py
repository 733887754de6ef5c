"""The retrieval evaluators agree with trec_eval itself (pytrec_eval, from pytrec-eval-terrier).

Every ranking gives strictly decreasing scores, so trec_eval's re-sort by score keeps our
recorded order and its tie rule never applies. The mapping to trec_eval measures:
hit_rate → success_k, recall → recall_k, precision → P_k, ndcg → ndcg_cut_k, and
mrr → recip_rank on the run cut to its first k documents (trec_eval has no cut for it).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import pytrec_eval
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import TypeAdapter

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

KS = (1, 2, 3, 5, 10)
TYPES = ("hit_rate", "recall", "precision", "mrr", "ndcg")
ADAPTER: TypeAdapter[EvaluatorConfig] = TypeAdapter(EvaluatorConfig)
TOLERANCE = 1e-9


@dataclass(frozen=True)
class Query:
    """One case: its labels and its ranking of (doc_id, chunk_id | None) candidates."""

    labels: list[dict[str, Any]]
    ranking: list[tuple[str, str | None]]


def evaluators(unit: str) -> dict[tuple[str, int], Evaluator]:
    built = {}
    for kind in TYPES:
        for k in KS:
            config = ADAPTER.validate_python({"type": kind, "k": k, "relevance_unit": unit})
            built[kind, k] = build_evaluator(config, base_dir=Path("."))
    return built


def as_view(qid: str, query: Query) -> CaseView:
    candidates = []
    for doc_id, chunk_id in query.ranking:
        candidates.append(
            {"doc_id": doc_id} if chunk_id is None else {"doc_id": doc_id, "chunk_id": chunk_id}
        )
    artifacts = {"retrieval/v1": [{"candidates": candidates, "depth": len(candidates)}]}
    return CaseView(qid, {}, {"relevant": query.labels}, {}, {"answer": ""}, artifacts)


def trec_docno(doc_id: str, chunk_id: str | None, unit: str) -> str:
    return doc_id if unit == "document" else f"{doc_id}#{chunk_id}"


def trec_qrels(query: Query, unit: str) -> dict[str, int]:
    """trec_eval judgments: one per unit; a document takes the best grade of its chunks."""
    qrels: dict[str, int] = {}
    for label in query.labels:
        docno = trec_docno(label["doc_id"], label.get("chunk_id"), unit)
        grade = label.get("grade", 1)
        qrels[docno] = max(qrels.get(docno, grade), grade)
    return qrels


def trec_run(query: Query, unit: str) -> list[str]:
    """The ranking as trec_eval docnos; a repeated unit becomes an unjudged placeholder."""
    docnos: list[str] = []
    for position, (doc_id, chunk_id) in enumerate(query.ranking):
        docno = trec_docno(doc_id, chunk_id, unit)
        docnos.append(f"zz-repeat-{position}" if docno in docnos else docno)
    return docnos


def scored(docnos: list[str]) -> dict[str, float]:
    """Strictly decreasing scores: trec_eval's sort keeps the recorded order."""
    return {docno: float(len(docnos) - i) for i, docno in enumerate(docnos)}


def trec_eval(queries: dict[str, Query], unit: str) -> dict[str, dict[str, float]]:
    qrels = {qid: trec_qrels(q, unit) for qid, q in queries.items()}
    runs = {qid: trec_run(q, unit) for qid, q in queries.items()}
    cuts = ",".join(str(k) for k in KS)
    measures = {f"success.{cuts}", f"recall.{cuts}", f"P.{cuts}", f"ndcg_cut.{cuts}"}
    full = {qid: scored(docnos) for qid, docnos in runs.items()}
    results: dict[str, dict[str, float]] = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(
        full
    )
    for k in KS:
        cut = {qid: scored(docnos[:k]) for qid, docnos in runs.items()}
        by_rank = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"}).evaluate(cut)
        for qid, values in by_rank.items():
            results[qid][f"recip_rank_at_{k}"] = values["recip_rank"]
    return results


TREC_NAME = {
    "hit_rate": "success_{k}",
    "recall": "recall_{k}",
    "precision": "P_{k}",
    "mrr": "recip_rank_at_{k}",
    "ndcg": "ndcg_cut_{k}",
}
PURE: dict[str, Callable[[Sequence[Any], Mapping[Any, float], int], float]] = {
    "hit_rate": hit_at_k,
    "recall": recall_at_k,
    "precision": precision_at_k,
    "mrr": reciprocal_rank_at_k,
    "ndcg": ndcg_at_k,
}


def check_against_trec_eval(queries: dict[str, Query], unit: str) -> list[float]:
    """Compare every metric at every k on every query; return the reference values compared."""
    expected = trec_eval(queries, unit)
    built = evaluators(unit)
    compared: list[float] = []
    for qid, query in queries.items():
        answerable = any(label.get("grade", 1) > 0 for label in query.labels)
        units = [u if unit == "chunk" else u[0] for u in query.ranking]
        grades = {
            (d if unit == "document" else tuple(d.split("#"))): float(g)
            for d, g in trec_qrels(query, unit).items()
        }
        for (kind, k), evaluator in built.items():
            reference = expected[qid][TREC_NAME[kind].format(k=k)]
            verdict = evaluator.judge(as_view(qid, query))
            if answerable:
                assert verdict.value == pytest.approx(reference, abs=TOLERANCE), (qid, kind, k)
            else:  # trec_eval prints 0 for a query with nothing relevant; we exclude it
                assert (verdict.status, verdict.reason) == ("excluded", "all_labels_non_relevant")
            assert float(PURE[kind](units, grades, k)) == pytest.approx(reference, abs=TOLERANCE)
            compared.append(reference)
    return compared


def assert_non_trivial(values: list[float]) -> None:
    """The random queries exercise partial scores, not just zeros and ones."""
    assert sum(0.0 < v < 1.0 for v in values) > len(values) / 5
    assert sum(v == 1.0 for v in values) > len(values) / 20


# --- seeded bulk comparison ------------------------------------------------------------------

GRADES = (-1, 0, 1, 1, 1, 2, 3)


def random_document_query(rng: random.Random) -> Query:
    """Distinct documents in the ranking; labels graded -1..3, some chunk-level."""
    pool = [f"d{i:02d}" for i in range(15)]
    labels: list[dict[str, Any]] = []
    for doc_id in rng.sample(pool, rng.randint(1, 8)):
        label: dict[str, Any] = {"doc_id": doc_id}
        if rng.random() < 0.7:
            label["grade"] = rng.choice(GRADES)
        labels.append(label)
    ranking: list[tuple[str, str | None]] = [
        (d, None) for d in rng.sample(pool, rng.randint(0, 12))
    ]
    return Query(labels, ranking)


def random_chunked_query(rng: random.Random) -> Query:
    """Chunks of a few documents: the same document retrieved at several positions."""
    pool = [(f"d{i}", f"c{j}") for i in range(5) for j in range(4)]
    labels = [
        {"doc_id": d, "chunk_id": c, "grade": rng.choice(GRADES)}
        for d, c in rng.sample(pool, rng.randint(1, 8))
    ]
    ranking: list[tuple[str, str | None]] = list(rng.sample(pool, rng.randint(0, 14)))
    return Query(labels, ranking)


def test_document_unit_matches_trec_eval_on_many_random_queries() -> None:
    rng = random.Random(20240917)
    queries = {f"q{i}": random_document_query(rng) for i in range(1500)}
    compared = check_against_trec_eval(queries, "document")
    assert len(compared) == 1500 * len(TYPES) * len(KS)
    assert_non_trivial(compared)


def test_chunk_unit_matches_trec_eval_on_many_random_queries() -> None:
    rng = random.Random(7)
    queries = {f"q{i}": random_chunked_query(rng) for i in range(1000)}
    assert_non_trivial(check_against_trec_eval(queries, "chunk"))


def test_repeated_documents_match_trec_eval_with_repeats_as_unjudged() -> None:
    rng = random.Random(11)
    queries = {f"q{i}": random_chunked_query(rng) for i in range(1000)}
    assert any(
        len({d for d, _ in q.ranking}) < len(q.ranking) for q in queries.values()
    )  # the generator does produce repeats
    assert_non_trivial(check_against_trec_eval(queries, "document"))


# --- property: any small query ---------------------------------------------------------------

doc_ids = st.sampled_from([f"d{i}" for i in range(8)])


@st.composite
def queries(draw: st.DrawFn) -> Query:
    labelled = draw(st.lists(doc_ids, min_size=1, max_size=8, unique=True))
    # Not -2: trec_eval uses -2 internally for "unjudged", and such a judgment crashes it.
    grades = draw(st.lists(st.integers(-1, 4), min_size=len(labelled), max_size=len(labelled)))
    labels = [{"doc_id": d, "grade": g} for d, g in zip(labelled, grades, strict=True)]
    ranking = draw(st.lists(doc_ids, max_size=8, unique=True))
    return Query(labels, [(d, None) for d in ranking])


@settings(max_examples=300, deadline=None)
@given(query=queries())
def test_any_ranking_matches_trec_eval(query: Query) -> None:
    check_against_trec_eval({"q": query}, "document")
