"""The checks a gold-context recovery passes before it is credited or given a stage, and the
cases of a repeated run that failed in some repeats only (``oloproof.diagnosis.labels``)."""

from __future__ import annotations

from typing import Any

import pytest

from oloproof.diagnosis.labels import (
    CONTEXT_UNCHANGED,
    FAILED,
    GOLD_TEXT_DIFFERS,
    INTERVENTION_RECOVERY,
    NO_STRENGTH,
    PASSED,
    Evidence,
    failed_repeats,
    given_gold,
    gold_label,
    gold_text_differs,
)

TEXT = "Refund requests are reviewed by the billing team within two business days."
GOLD = {"gold_context": [{"doc_id": "kb-01", "chunk_id": "c2", "text": TEXT}]}


def retrieval(*candidates: dict[str, Any]) -> dict[str, Any]:
    return {"candidates": list(candidates)}


def test_a_retrieved_chunk_holding_the_gold_text_agrees_with_it() -> None:
    spaced = {"doc_id": "kb-01", "chunk_id": "c2", "text": f"Billing.  {TEXT}\nAn approved …"}
    assert not gold_text_differs(retrieval(spaced), GOLD)


def test_a_retrieved_chunk_with_other_text_under_the_gold_ids_differs() -> None:
    rechunked = {"doc_id": "kb-01", "chunk_id": "c2", "text": "within two business days."}
    assert gold_text_differs(retrieval(rechunked), GOLD)


@pytest.mark.parametrize(
    "candidate",
    [
        {"doc_id": "kb-01", "chunk_id": "c1", "text": "Another chunk."},  # another chunk
        {"doc_id": "kb-02", "chunk_id": "c2", "text": "Another document."},
        {"doc_id": "kb-01", "chunk_id": "c2"},  # recorded without its text
    ],
)
def test_only_the_gold_passage_s_own_chunk_with_text_is_compared(
    candidate: dict[str, Any],
) -> None:
    assert not gold_text_differs(retrieval(candidate), GOLD)


def test_a_gold_passage_without_a_chunk_id_names_no_one_passage() -> None:
    expected = {"gold_context": [{"doc_id": "kb-01", "text": TEXT}]}
    assert not gold_text_differs(retrieval({"doc_id": "kb-01", "text": "Other text."}), expected)


def item(doc_id: str, text: str, chunk_id: str | None = None, position: int = 1) -> dict[str, Any]:
    return {"doc_id": doc_id, "chunk_id": chunk_id, "text": text, "position": position}


def test_a_context_of_exactly_the_gold_passages_was_given_them() -> None:
    assert given_gold({"items": [item("kb-01", TEXT, "c2")]}, GOLD)
    # A gold passage without a chunk_id matches the chunk its text was retrieved as.
    assert given_gold(
        {"items": [item("kb-01", TEXT, "c2")]},
        {"gold_context": [{"doc_id": "kb-01", "text": TEXT}]},
    )


@pytest.mark.parametrize(
    "items",
    [
        [item("kb-01", TEXT, "c2"), item("kb-09", "Audit trail.", position=2)],  # one more
        [],
        [item("kb-01", TEXT, "c3")],  # another chunk of the same text
        [item("kb-02", TEXT, "c2")],
        [item("kb-01", TEXT.upper(), "c2")],
    ],
)
def test_any_other_context_was_not(items: list[dict[str, Any]]) -> None:
    assert not given_gold({"items": items}, GOLD)


def test_no_context_recorded_is_not_the_gold_passages() -> None:
    assert not given_gold(None, GOLD)


def recovered(**checks: bool) -> tuple[str, str, str]:
    label = gold_label(
        evidence=Evidence("5"), top_k=2, control=FAILED, intervention=PASSED, **checks
    )
    return label.label, label.reason, label.strength


def test_a_pass_with_the_passages_the_control_had_is_no_recovery() -> None:
    assert recovered(unchanged=True) == ("UNRESOLVED", CONTEXT_UNCHANGED, NO_STRENGTH)
    assert recovered(unchanged=True, differs=True, drifted=True)[1] == CONTEXT_UNCHANGED
    # A failure with the gold passages is one, whatever the control had.
    failed = gold_label(
        evidence=Evidence("1", in_context=True),
        top_k=2,
        control=FAILED,
        intervention=FAILED,
        unchanged=True,
    )
    assert failed.label == "GENERATION_FAILURE"


def test_a_recovery_with_text_the_corpus_no_longer_holds_names_no_stage() -> None:
    assert recovered() == ("RANKED_OUT", "relevant_ranked_out", INTERVENTION_RECOVERY)
    assert recovered(differs=True) == ("UNRESOLVED", GOLD_TEXT_DIFFERS, INTERVENTION_RECOVERY)


def repeat(status: str, value: float | None = None) -> dict[str, Any]:
    verdict: dict[str, Any] = {"s": status}
    if value is not None:
        verdict["v"] = value
    return {"verdicts": {"answer_correct": verdict}}


@pytest.mark.parametrize(
    ("verdict", "repeats", "failed"),
    [
        # Failed in one of three, passed in the others: counted.
        ({"s": "value", "v": 2 / 3, "n": 3}, [repeat("fail"), repeat("pass"), repeat("pass")], 1),
        # Failed in every repeat: the case failed (selected), nothing to count here.
        ({"s": "value", "v": 0.0, "n": 3}, [repeat("fail")] * 3, 0),
        ({"s": "value", "v": 1.0, "n": 2}, [repeat("pass")] * 2, 0),
        # A graded criterion whose repeats each scored above 0 failed in none of them.
        ({"s": "value", "v": 0.5, "n": 2}, [repeat("value", 0.5)] * 2, 0),
        ({"s": "value", "v": 0.25, "n": 2}, [repeat("value", 0.0), repeat("value", 0.5)], 1),
        # A case run once has no repeats.
        ({"s": "pass"}, None, 0),
    ],
)
def test_failed_repeats(
    verdict: dict[str, Any], repeats: list[dict[str, Any]] | None, failed: int
) -> None:
    assert failed_repeats(verdict, repeats, "answer_correct") == failed
