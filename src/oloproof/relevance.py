"""What counts as relevant: one reading of ``expected.relevant`` for the retrieval metrics, the
``relevant_position`` slice and a diagnosis, so that none of them can call a passage relevant
that another does not.

Requirements this module meets:

1. A relevance unit is ``document`` (a passage is its ``doc_id``) or ``chunk`` (its
   ``(doc_id, chunk_id)`` pair). ``unit_of`` gives the unit of a retrieved candidate, a context
   item, a dropped passage and a relevance label alike: a passage and a label match exactly
   when their units are equal.
2. A unit's grade is the highest of its labels' (``graded_units``; no grade counts as 1), the
   grades the retrieval metrics score with, and it is relevant when that grade is above 0
   (``relevant_units``). Under ``chunk`` a label without a ``chunk_id`` names no chunk, and a
   candidate recorded without one never matches a label.
3. The readers that are not a retrieval metric take the run's unit from its retrieval metrics
   (``run_unit``): the unit of the criterion they read when it is one of them, else the one
   unit they all share, ``document`` when the run has none. When they disagree there is no
   such unit, and the caller refuses rather than pick one of them.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence
from typing import Any

DOCUMENT = "document"
CHUNK = "chunk"

# Evaluator types that score the ranking against ``expected.relevant`` (retrieval/v1 alone).
RANKING_EVALUATORS = frozenset({"hit_rate", "recall", "precision", "mrr", "ndcg"})


def unit_of(passage: Mapping[str, Any], unit: str) -> Hashable:
    """The unit a passage or a relevance label stands for: its ``doc_id`` under ``document``,
    its ``(doc_id, chunk_id)`` under ``chunk``."""
    doc_id: str = passage["doc_id"]
    if unit == CHUNK:
        return (doc_id, passage.get("chunk_id"))
    return doc_id


def ranked_units(candidates: Sequence[Mapping[str, Any]], unit: str, k: int) -> list[Hashable]:
    """The units of the first k candidates, in recorded order (repeats kept)."""
    return [unit_of(c, unit) for c in candidates[:k]]


def graded_units(labels: Iterable[Mapping[str, Any]], unit: str) -> dict[Hashable, float]:
    """``{unit: grade}`` of relevance labels read as ``unit``: the highest grade of the unit's
    labels (no grade counts as 1). Under ``chunk`` a label without a ``chunk_id`` names no
    chunk and is left out."""
    grades: dict[Hashable, float] = {}
    for label in labels:
        if unit == CHUNK and label.get("chunk_id") is None:
            continue
        key = unit_of(label, unit)
        grade = float(label.get("grade", 1))
        previous = grades.get(key)
        grades[key] = grade if previous is None else max(previous, grade)
    return grades


def relevant_units(expected: Mapping[str, Any], unit: str) -> set[Hashable]:
    """The units the case labels relevant (a grade above 0), read as ``unit``."""
    graded = graded_units(expected.get("relevant") or [], unit)
    return {key for key, grade in graded.items() if grade > 0}


def first_relevant(
    passages: Iterable[Mapping[str, Any]], relevant: set[Hashable], unit: str
) -> int | None:
    """The 1-based position of the first passage whose unit is relevant, or None."""
    return next(
        (n for n, passage in enumerate(passages, start=1) if unit_of(passage, unit) in relevant),
        None,
    )


def retrieval_units(evaluators: Iterable[Mapping[str, Any]]) -> dict[str, str]:
    """``{criterion: unit}`` of a run's retrieval metrics, from its recorded evaluators (each
    ``{"criterion", "spec"}``, as a run body lists them)."""
    units: dict[str, str] = {}
    for evaluator in evaluators:
        spec = evaluator.get("spec") or {}
        if spec.get("type") in RANKING_EVALUATORS:
            units[evaluator["criterion"]] = spec.get("relevance_unit", DOCUMENT)
    return units


def run_unit(units: Mapping[str, str], criterion: str | None = None) -> str | None:
    """The unit ``criterion`` reads relevance in when it is a retrieval metric, else the one
    unit of every retrieval metric in ``units`` (``document`` for none); None when they
    disagree."""
    if criterion is not None and criterion in units:
        return units[criterion]
    distinct = set(units.values())
    if len(distinct) > 1:
        return None
    return distinct.pop() if distinct else DOCUMENT


def described(units: Mapping[str, str]) -> str:
    """``hit_rate_at_2: chunk, recall_at_2: document``: each retrieval metric and its unit."""
    return ", ".join(f"{criterion}: {unit}" for criterion, unit in units.items())
