"""One reading of relevance: hit_rate, the relevant_position slice and a diagnosis agree.

For any recorded candidates and relevance labels, in either unit, the hit_rate evaluator passes
exactly when the slice puts the case within the cut and the diagnosis's best relevant position
is within it too; and the unit readers other than the metrics take is the metrics' own.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st
from pydantic import TypeAdapter

from oloproof.diagnosis import labels as dg
from oloproof.evaluator_config import EvaluatorConfig
from oloproof.evaluators import build_evaluator
from oloproof.evaluators.base import CaseView
from oloproof.relevance import CHUNK, DOCUMENT, retrieval_units, run_unit
from oloproof.systems.rag import relevant_position

ADAPTER: TypeAdapter[EvaluatorConfig] = TypeAdapter(EvaluatorConfig)

DOCS = st.sampled_from(["kb-01", "kb-02", "kb-03"])
CHUNKS = st.sampled_from(["c1", "c2", "c3"])
PASSAGES = st.lists(st.fixed_dictionaries({"doc_id": DOCS, "chunk_id": CHUNKS}), max_size=6)
LABELS = st.lists(
    st.fixed_dictionaries({"doc_id": DOCS, "chunk_id": CHUNKS, "grade": st.sampled_from([0, 1])}),
    min_size=1,
    max_size=3,
)


@given(candidates=PASSAGES, relevant=LABELS, unit=st.sampled_from([DOCUMENT, CHUNK]))
def test_the_metric_the_slice_and_the_diagnosis_cannot_disagree(
    candidates: list[dict[str, str]], relevant: list[dict[str, Any]], unit: str
) -> None:
    top_k = 2
    evaluator = build_evaluator(
        ADAPTER.validate_python({"type": "hit_rate", "k": top_k, "relevance_unit": unit}),
        base_dir=Path("."),
    )
    expected = {"relevant": relevant}
    retrieval = {"candidates": candidates}
    view = CaseView("c", {}, expected, {}, {}, {"retrieval/v1": [retrieval]})
    verdict = evaluator.judge(view)
    position = relevant_position(retrieval, expected, top_k, unit)
    found = dg.evidence_of(retrieval, None, expected, top_k, unit).position
    if verdict.status == "excluded":  # every label graded 0
        assert (position, found) == ("unlabelled", dg.POSITION_UNLABELLED)
        return
    hit = verdict.status == "pass"
    assert hit == (position not in ("below_top_k", "not_retrieved"))
    assert hit == (found != dg.POSITION_NONE and int(found) <= top_k)
    if found != dg.POSITION_NONE and hit:
        assert position == found


def test_the_unit_of_a_run_is_its_retrieval_metrics() -> None:
    def spec(kind: str, unit: str = DOCUMENT) -> dict[str, Any]:
        return {"type": kind, "k": 2, "relevance_unit": unit}

    both = retrieval_units(
        [
            {"criterion": "answer_correct", "spec": {"type": "contains"}},
            {"criterion": "hit_rate_at_2", "spec": spec("hit_rate", CHUNK)},
            {"criterion": "recall_at_2", "spec": spec("recall")},
        ]
    )
    assert both == {"hit_rate_at_2": CHUNK, "recall_at_2": DOCUMENT}
    assert run_unit(both) is None  # no one reading
    assert run_unit(both, "answer_correct") is None
    assert run_unit(both, "hit_rate_at_2") == CHUNK  # a metric reads its own
    assert run_unit({"hit_rate_at_2": CHUNK, "mrr_at_2": CHUNK}, "answer_correct") == CHUNK
    assert run_unit({}) == DOCUMENT
