"""The retrieval metrics at cut-offs far past the ranking (k up to 100 on lists of 0 to 40), with
graded and tied labels and a unit retrieved twice, against trec_eval itself (pytrec_eval).

trec_eval reads a run as a dict, so a unit retrieved again is given as an unjudged placeholder
at its later position, the reading Oloproof documents (a unit counts at its first position
only). A query without a relevant unit scores 0 in trec_eval on every measure; the pure
functions give the same 0 (the evaluators exclude such a case instead, tested elsewhere).
"""

from __future__ import annotations

import random

import pytest
import pytrec_eval

from oloproof.evaluators.retrieval import (
    hit_at_k,
    ndcg_at_k,
    precision_at_k,
    recall_at_k,
    reciprocal_rank_at_k,
)

KS = (1, 4, 7, 20, 41, 100)
CUTS = ",".join(str(k) for k in KS)


def scored(docnos: list[str]) -> dict[str, float]:
    """Strictly decreasing scores: trec_eval's sort keeps the given order."""
    return {docno: float(len(docnos) - i) for i, docno in enumerate(docnos)}


def trec_eval(labels: dict[str, int], docnos: list[str]) -> dict[str, float]:
    qrels = {"q": labels}
    values = {f"{m}_{k}": 0.0 for m in ("success", "recall", "P", "ndcg_cut") for k in KS}
    values.update({f"rr_{k}": 0.0 for k in KS})
    if not docnos:  # trec_eval scores an empty ranking 0 on every measure
        return values
    measures = {f"success.{CUTS}", f"recall.{CUTS}", f"P.{CUTS}", f"ndcg_cut.{CUTS}"}
    values.update(
        pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate({"q": scored(docnos)})["q"]
    )
    for k in KS:
        cut = {"q": scored(docnos[:k])}
        rr = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"}).evaluate(cut)["q"]
        values[f"rr_{k}"] = rr["recip_rank"]
    return values


def test_cutoffs_past_the_ranking_match_trec_eval() -> None:
    rng = random.Random(4242)
    compared = 0
    for _ in range(400):
        pool = [f"d{i}" for i in range(rng.choice([3, 10, 40]))]
        labelled = rng.sample(pool, rng.randint(1, len(pool)))
        labels = {d: rng.choice([-1, 0, 1, 1, 2, 2, 3]) for d in labelled}
        ranking = rng.sample(pool, rng.randint(0, len(pool)))
        if ranking and rng.random() < 0.4:  # the same unit again, further down
            ranking.insert(rng.randint(1, len(ranking)), rng.choice(ranking))
        docnos = [f"repeat-{i}" if d in ranking[:i] else d for i, d in enumerate(ranking)]
        expected = trec_eval(labels, docnos)
        grades = {d: float(g) for d, g in labels.items()}
        for k in KS:
            ours = {
                f"success_{k}": float(hit_at_k(ranking, grades, k)),
                f"recall_{k}": recall_at_k(ranking, grades, k),
                f"P_{k}": precision_at_k(ranking, grades, k),
                f"ndcg_cut_{k}": ndcg_at_k(ranking, grades, k),
                f"rr_{k}": reciprocal_rank_at_k(ranking, grades, k),
            }
            for name, value in ours.items():
                assert value == pytest.approx(expected[name], abs=1e-12), (name, ranking, labels)
                compared += 1
    assert compared == 400 * len(KS) * 5
