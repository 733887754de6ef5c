"""Retrieval metrics at a cut-off k: ``hit_rate``, ``recall``, ``precision``, ``mrr``, ``ndcg``.

Each evaluator reads the last ``retrieval/v1`` artifact the case recorded and the case's
``expected.relevant`` labels, and each metric is a pure function below whose docstring gives
its formula and the trec_eval measure it reproduces.

Conventions shared by every metric (and by trec_eval unless noted):

* **Ranking.** The ranking is the recorded order of ``candidates``; position 1 is the first.
  Oloproof never re-ranks. trec_eval instead sorts a run by score descending and breaks ties by
  docno descending, so the two agree exactly when scores strictly decrease down the list (as in
  our cross-check tests) or when the recorded order already follows trec_eval's tie rule.
* **Cut-off.** Only positions 1..k count. Fewer than k candidates is fine: the missing positions
  hold nothing relevant.
* **Units.** With ``relevance_unit: document`` a unit is a ``doc_id``; a document's grade is the
  largest grade among its entries. With ``relevance_unit: chunk`` a unit is a
  ``(doc_id, chunk_id)`` pair. ``oloproof.relevance`` makes units, for the
  ``relevant_position`` slice and a diagnosis as well as here. A unit retrieved again at a
  later position counts only at its first position; the later position holds nothing
  relevant, exactly as if it were an unjudged document (trec_eval counts each docno once). The
  positions of other units do not move, so k always means the first k candidates the system
  returned.
* **Relevance.** A unit is relevant when its grade is > 0 (trec_eval's relevance level 1 for
  integer grades). Grades ≤ 0, and units without a label, are non-relevant and have gain 0.
* **Exclusions.** A case without ``expected.relevant`` (absent or empty) is excluded with
  ``no_relevance_labels``; a case whose labels are all non-relevant (grade ≤ 0) with
  ``all_labels_non_relevant`` (recall and nDCG are 0/0 there; trec_eval would print 0, which would
  count a question nothing can answer against the retriever); these two the labels decide, so
  an errored case records them too (``case_exclusion``). A labelled case that recorded no
  ``retrieval/v1`` is *missing* (``no_retrieval_recorded``), not excluded: its labels say there
  was something to find, and what the system retrieved is unknown, so the interval counts it
  against the system; excluded, the cases a broken retriever skipped would leave the
  denominator (version 1 did so).
* **Errors.** A malformed relevance entry raises ``DatasetError`` naming the case and entry.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, ClassVar, TypeVar

from oloproof.dataset import Case
from oloproof.errors import DatasetError
from oloproof.evaluator_config import RetrievalConfig, default_criterion
from oloproof.evaluators.base import CaseView
from oloproof.evaluators.reads import Reads
from oloproof.relevance import CHUNK, graded_units, ranked_units
from oloproof.results import MetricKind, Verdict

U = TypeVar("U", bound=Hashable)

RETRIEVAL_KIND = "retrieval/v1"

# --- The metrics, as pure functions ----------------------------------------------------------


def relevant_ranks(
    ranked: Sequence[U], grades: Mapping[U, float], k: int
) -> list[tuple[int, float]]:
    """``(rank, grade)`` of each relevant unit at its first position within the top k.

    Ranks are 1-based. A unit seen again lower down is skipped; units absent from ``grades`` or
    graded ≤ 0 are non-relevant.
    """
    found: list[tuple[int, float]] = []
    seen: set[U] = set()
    for rank, unit in enumerate(ranked[:k], start=1):
        if unit in seen:
            continue
        seen.add(unit)
        grade = grades.get(unit, 0.0)
        if grade > 0:
            found.append((rank, grade))
    return found


def count_relevant(grades: Mapping[U, float]) -> int:
    """The number of judged units with grade > 0 (trec_eval's ``num_rel``)."""
    return sum(1 for grade in grades.values() if grade > 0)


def hit_at_k(ranked: Sequence[U], grades: Mapping[U, float], k: int) -> bool:
    """Whether any relevant unit is among the first k positions.

    ``hit@k = 1 if |Rel ∩ top_k| > 0 else 0``. Matches trec_eval ``success_k`` (``success.k``
    in pytrec_eval). False when nothing is relevant.
    """
    return bool(relevant_ranks(ranked, grades, k))


def recall_at_k(ranked: Sequence[U], grades: Mapping[U, float], k: int) -> float:
    """The share of all relevant units found in the first k positions.

    ``recall@k = |Rel ∩ top_k| / |Rel|`` with ``Rel`` the units graded > 0, each counted once.
    Matches trec_eval ``recall_k`` (``recall.k``). 0.0 when ``Rel`` is empty, as trec_eval
    prints; the evaluator excludes such a case instead.
    """
    total = count_relevant(grades)
    return len(relevant_ranks(ranked, grades, k)) / total if total else 0.0


def precision_at_k(ranked: Sequence[U], grades: Mapping[U, float], k: int) -> float:
    """The share of the k positions holding a (first occurrence of a) relevant unit.

    ``P@k = |Rel ∩ top_k| / k``: the denominator is k even when fewer than k candidates were
    retrieved. Matches trec_eval ``P_k`` (``P.k``).
    """
    return len(relevant_ranks(ranked, grades, k)) / k


def reciprocal_rank_at_k(ranked: Sequence[U], grades: Mapping[U, float], k: int) -> float:
    """One over the rank of the first relevant unit within the first k, else 0.

    ``RR@k = 1 / min{r ≤ k : unit_r ∈ Rel}``, 0 when no relevant unit is in the top k. Matches
    trec_eval ``recip_rank`` computed on the run cut to its first k documents (trec_eval itself
    has no cut-off for this measure). Averaged over cases it is MRR@k.
    """
    found = relevant_ranks(ranked, grades, k)
    return 1.0 / found[0][0] if found else 0.0


@lru_cache(maxsize=64)
def _discounts(k: int) -> tuple[float, ...]:
    return tuple(1.0 / math.log2(rank + 1) for rank in range(1, k + 1))


def ndcg_at_k(ranked: Sequence[U], grades: Mapping[U, float], k: int) -> float:
    """Normalised discounted cumulative gain of the first k positions, linear gains.

    ``DCG@k = Σ_{r=1..k} g(unit_r) / log2(r + 1)`` where ``g`` is the unit's grade when > 0,
    else 0 (so a repeated unit, an unlabelled unit or a grade ≤ 0 adds nothing).
    ``IDCG@k`` is the same sum over the ideal ranking: all units graded > 0 (retrieved or not),
    sorted by grade descending, cut at k. ``nDCG@k = DCG@k / IDCG@k``, 0.0 when IDCG is 0.
    Matches trec_eval ``ndcg_cut_k`` (``ndcg_cut.k``) with its default gains (gain = grade).
    """
    discounts = _discounts(k)
    ideal_gains = sorted((g for g in grades.values() if g > 0), reverse=True)[:k]
    ideal = sum(g * d for g, d in zip(ideal_gains, discounts, strict=False))
    if ideal == 0.0:
        return 0.0
    dcg = sum(grade * discounts[rank - 1] for rank, grade in relevant_ranks(ranked, grades, k))
    return min(1.0, dcg / ideal)


# --- Reading a case --------------------------------------------------------------------------


def relevance_grades(
    case_id: str, expected: Mapping[str, Any], unit: str
) -> dict[Any, float] | None:
    """The case's ``expected.relevant`` as ``{unit: grade}`` (``relevance.graded_units``, once
    every entry is checked); None when it has no labels.

    ``unit`` is ``"document"`` (keys are doc ids, grade = max over the document's entries) or
    ``"chunk"`` (keys are ``(doc_id, chunk_id)``; every entry must carry a ``chunk_id``).
    Raises ``DatasetError`` naming the case and the entry for anything malformed.
    """
    labels = expected.get("relevant")
    if labels is None or (isinstance(labels, list | tuple) and not labels):
        return None
    if not isinstance(labels, list | tuple):
        raise _label_error(case_id, None, "must be a list of {doc_id, chunk_id?, grade?} objects")
    for index, entry in enumerate(labels):
        _check_label(case_id, index, entry, unit)
    return graded_units(labels, unit)


def _check_label(case_id: str, index: int, entry: Any, unit: str) -> None:
    if not isinstance(entry, (dict, Mapping)):
        raise _label_error(case_id, index, "must be an object {doc_id, chunk_id?, grade?}")
    doc_id = entry.get("doc_id")
    if not isinstance(doc_id, str) or not doc_id:
        raise _label_error(case_id, index, "needs a doc_id that is a non-empty string")
    chunk_id = entry.get("chunk_id")
    if chunk_id is not None and not isinstance(chunk_id, str):
        raise _label_error(case_id, index, "has a chunk_id that is not a string")
    grade = entry.get("grade", 1)
    if isinstance(grade, bool) or not isinstance(grade, int | float) or not math.isfinite(grade):
        raise _label_error(case_id, index, f"has a grade that is not a finite number: {grade!r}")
    if len(entry) > 1 + ("chunk_id" in entry) + ("grade" in entry):
        extra = sorted(set(entry) - {"doc_id", "chunk_id", "grade"})
        raise _label_error(case_id, index, f"has unknown keys {extra}")
    # graded_units would leave such a label out; a metric refuses it instead.
    if unit == CHUNK and chunk_id is None:
        raise _label_error(case_id, index, "needs a chunk_id under relevance_unit: chunk")


def chunk_label_check(configs: Iterable[Any]) -> Callable[[Case], str | None] | None:
    """The check ``load_dataset`` makes of each case for the retrieval metrics among
    ``configs`` that read relevance by chunk: each ``expected.relevant`` entry needs a
    ``chunk_id`` there, which a metric otherwise finds missing only once the run reaches the
    case, and stops the run. None when no metric reads chunks."""
    chunked = [
        c.criterion for c in configs if isinstance(c, RetrievalConfig) and c.relevance_unit == CHUNK
    ]
    if not chunked:
        return None

    def check(case: Case) -> str | None:
        labels = case.expected.get("relevant")
        if not isinstance(labels, list):
            return None  # its shape is the loader's to check
        for index, entry in enumerate(labels):
            if isinstance(entry, dict) and entry.get("chunk_id") is None:
                return (
                    f"expected.relevant[{index}] of case {case.id!r} has no chunk_id, and "
                    f"{chunked[0]!r} reads relevance by chunk (relevance_unit: chunk)"
                )
        return None

    return check


def _label_error(case_id: str, index: int | None, problem: str) -> DatasetError:
    where = "expected.relevant" if index is None else f"expected.relevant[{index}]"
    return DatasetError(f"{where} {problem}", where=f"case {case_id}")


# --- The evaluators --------------------------------------------------------------------------


@dataclass(frozen=True)
class _RetrievalEvaluator:
    """Shared reading and exclusion logic; subclasses supply ``_score``."""

    config: RetrievalConfig
    VERSION: ClassVar[int] = 2
    _criterion: str = field(init=False, repr=False)
    _k: int = field(init=False, repr=False)
    _unit: str = field(init=False, repr=False)

    def __post_init__(self) -> None:
        criterion = self.config.criterion or default_criterion(self.config.type, self.config.k)
        object.__setattr__(self, "_criterion", criterion)
        object.__setattr__(self, "_k", self.config.k)
        object.__setattr__(self, "_unit", self.config.relevance_unit)

    @property
    def criterion(self) -> str:
        return self._criterion

    @property
    def kind(self) -> MetricKind:
        return "mean"

    def spec(self) -> dict[str, Any]:
        return {**self.config.model_dump(mode="json", by_alias=True), "version": self.VERSION}

    def reads(self) -> Reads:
        return Reads(expected=("relevant",), artifacts=(RETRIEVAL_KIND,))

    def judge(self, view: CaseView) -> Verdict:
        grades = self._grades(view.case_id, view.expected)
        if isinstance(grades, Verdict):
            return grades
        retrieval = view.artifact(RETRIEVAL_KIND)
        if retrieval is None:
            return Verdict.missing("no_retrieval_recorded")
        ranked = ranked_units(retrieval.get("candidates", ()), self._unit, self._k)
        return self._score(ranked, grades)

    def case_exclusion(self, case_id: str, expected: Mapping[str, Any]) -> Verdict | None:
        """``ExcludesByCase``: the exclusion the case's labels decide, whatever it retrieved."""
        grades = self._grades(case_id, expected)
        return grades if isinstance(grades, Verdict) else None

    def _grades(self, case_id: str, expected: Mapping[str, Any]) -> dict[Any, float] | Verdict:
        """The case's relevance grades, or the exclusion its labels decide. Read before the
        retrieval, so a case is excluded for its labels alike whether it ran or errored."""
        grades = relevance_grades(case_id, expected, self._unit)
        if grades is None:
            return Verdict.excluded("no_relevance_labels")
        if not any(grade > 0 for grade in grades.values()):
            return Verdict.excluded("all_labels_non_relevant")
        return grades

    def _score(self, ranked: list[Any], grades: dict[Any, float]) -> Verdict:
        raise NotImplementedError


@dataclass(frozen=True)
class HitRate(_RetrievalEvaluator):
    """Pass when a relevant unit is in the top k (``hit_at_k``; trec_eval ``success_k``)."""

    @property
    def kind(self) -> MetricKind:
        return "pass_fail"

    def _score(self, ranked: list[Any], grades: dict[Any, float]) -> Verdict:
        if hit_at_k(ranked, grades, self._k):
            return Verdict.passed()
        return Verdict.failed("no_relevant_in_top_k")


@dataclass(frozen=True)
class Recall(_RetrievalEvaluator):
    """Recall at k as a value in [0, 1] (``recall_at_k``; trec_eval ``recall_k``)."""

    def _score(self, ranked: list[Any], grades: dict[Any, float]) -> Verdict:
        return Verdict.scored(recall_at_k(ranked, grades, self._k))


@dataclass(frozen=True)
class Precision(_RetrievalEvaluator):
    """Precision at k as a value in [0, 1] (``precision_at_k``; trec_eval ``P_k``)."""

    def _score(self, ranked: list[Any], grades: dict[Any, float]) -> Verdict:
        return Verdict.scored(precision_at_k(ranked, grades, self._k))


@dataclass(frozen=True)
class Mrr(_RetrievalEvaluator):
    """Reciprocal rank cut at k (``reciprocal_rank_at_k``; trec_eval ``recip_rank`` on top k)."""

    def _score(self, ranked: list[Any], grades: dict[Any, float]) -> Verdict:
        return Verdict.scored(reciprocal_rank_at_k(ranked, grades, self._k))


@dataclass(frozen=True)
class Ndcg(_RetrievalEvaluator):
    """nDCG at k, linear gains (``ndcg_at_k``; trec_eval ``ndcg_cut_k``)."""

    def _score(self, ranked: list[Any], grades: dict[Any, float]) -> Verdict:
        return Verdict.scored(ndcg_at_k(ranked, grades, self._k))
