"""A reranker may reorder or drop the candidates it is given, and nothing else.

Through the real CLI on the support example: a reranker that adds a passage, repeats one,
relabels or rewrites one, gives one a score the ledger cannot record (NaN, infinite), or
returns something other than passages errors the case it did it on, with a recorded reason
naming the position and what is wrong; that case is not observed under the intervention, so it
is never counted as a recovery, and the diagnosis goes on. A reranker that drops and rescores
candidates is still a reranker.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from tests.support import copy_example, oloproof

HOSTILE = """
from oloproof import Passage

PAYMENTS = (
    "To ask for a refund on an annual plan, open the Payments page of the admin console. Only"
    " workspace owners see that page."
)


def injected(input, candidates):
    return [Passage(doc_id="kb-02", text=PAYMENTS)] + list(candidates)


def duplicated(input, candidates):
    return list(candidates) + list(candidates[:1])


def relabelled(input, candidates):
    return [passage.model_copy(update={"doc_id": "kb-02"}) for passage in candidates]


def rewritten(input, candidates):
    changed = [f"{passage.text} Refunds are instant." for passage in candidates]
    return [p.model_copy(update={"text": t}) for p, t in zip(candidates, changed)]


def nothing(input, candidates):
    return None


def ids(input, candidates):
    return [passage.doc_id for passage in candidates] or ["kb-02"]


def nan_built(input, candidates):
    return [Passage(doc_id=p.doc_id, text=p.text, score=float("nan")) for p in candidates]


def nan_copied(input, candidates):
    return [passage.model_copy(update={"score": float("nan")}) for passage in candidates]


def inf_copied(input, candidates):
    return [passage.model_copy(update={"score": float("inf")}) for passage in candidates]


def dropped_and_rescored(input, candidates):
    kept = list(reversed(candidates))[:2]
    return [passage.model_copy(update={"score": 1.0 / n}) for n, passage in enumerate(kept, 1)]
"""

MALFORMED = "the reranker's output is malformed: "
# The selected cases whose recorded retrieval has candidates (money_back's has none).
RETRIEVED = {"refund_review", "seat_count", "security_review"}
SELECTED = RETRIEVED | {"money_back"}


@pytest.fixture(scope="module")
def parent(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    root = copy_example("support_rag", tmp_path_factory.mktemp("rerank"))
    (root / "hostile.py").write_text(HOSTILE)
    done = oloproof("run", cwd=root)
    assert done.code == 3, done.err
    return root, done.lines[0].split()[1]


def diagnose(root: Path, run_id: str, reranker: str, criterion: str) -> list[str]:
    done = oloproof(
        "diagnose",
        run_id,
        "--intervention",
        "reranker",
        "--reranker",
        f"hostile:{reranker}",
        "--criterion",
        criterion,
        cwd=root,
    )
    assert done.code == 0, done.out + done.err
    return done.lines


def errors(root: Path, lines: list[str], reranker: str) -> dict[str, str]:
    """The recorded error of each errored case of the intervention's child run, by case id."""
    (children,) = [line for line in lines if line.startswith("Child runs: ")]
    found = re.search(rf"reranker hostile:{reranker} (run_\w+)", children)
    assert found is not None, children
    done = oloproof("inspect", found.group(1), "--failures", "--json", cwd=root)
    assert done.code == 0, done.err
    failed: list[dict[str, Any]] = json.loads(done.out)["failed"]
    return {
        case["case_id"]: f"{case['error']['type']}: {case['error']['message']}"
        for case in failed
        if case["status"] == "errored"
    }


def test_a_passage_the_reranker_added_is_never_credited_with_a_recovery(
    parent: tuple[Path, str],
) -> None:
    root, run_id = parent
    lines = diagnose(root, run_id, "injected", "hit_rate_at_2")
    assert "Recovered under reranker hostile:injected: 0 of 1" in lines
    assert "UNRESOLVED: 1 of 1, the intervention gave no verdict (errored or missing)" in lines
    assert errors(root, lines, "injected") == {
        "money_back": f"RerankerOutputError: {MALFORMED}position 1 (kb-02) is not among the "
        "candidates it was given; a reranker may reorder or drop the candidates it is given, and "
        "nothing else"
    }
    (address,) = [x.removeprefix("Diagnosis ") for x in lines if x.startswith("Diagnosis ")]
    shown = oloproof("inspect", address, cwd=root)
    assert shown.lines == [
        "money_back: under reranker hostile:injected: UNRESOLVED, intervention_not_observed, "
        "strength none, best relevant position none, missing under reranker hostile:injected; "
        "no gold-context label"
    ]
    assert oloproof("diagnose", "--verify", address, cwd=root).code == 0
    # Dropping candidates and giving them new scores is what a reranker does: every case runs.
    honest = diagnose(root, run_id, "dropped_and_rescored", "answer_correct")
    assert errors(root, honest, "dropped_and_rescored") == {}


@pytest.mark.parametrize(
    ("reranker", "errored", "why"),
    [
        # refund_review was given kb-02 itself: the added copy makes it appear twice.
        ("injected", SELECTED, "(kb-02)"),
        ("duplicated", RETRIEVED, "repeats a passage it was given once"),
        ("relabelled", RETRIEVED, "not among the candidates it was given: its text is candidate"),
        ("rewritten", RETRIEVED, "candidate 1 has that doc_id with other text"),
        ("nothing", SELECTED, "it returned NoneType, not a list of passages"),
        ("ids", SELECTED, "position 1 is a str, not a Passage"),
        # A score the ledger cannot record is the reranker's fault on that case, whether its
        # Passage refused it or a model_copy slipped it past validation.
        ("nan_built", RETRIEVED, "it built a malformed Passage artifact: score: Input should"),
        ("nan_copied", RETRIEVED, "is not a valid passage: score: Input should be a finite"),
        ("inf_copied", RETRIEVED, "is not a valid passage: score: Input should be a finite"),
    ],
)
def test_a_malformed_reranker_output_errors_its_case_and_recovers_nothing(
    parent: tuple[Path, str], reranker: str, errored: set[str], why: str
) -> None:
    root, run_id = parent
    lines = diagnose(root, run_id, reranker, "answer_correct")
    assert f"Recovered under reranker hostile:{reranker}: 0 of 4" in lines
    found = errors(root, lines, reranker)
    assert set(found) == errored
    for message in found.values():
        assert message.startswith(f"RerankerOutputError: {MALFORMED}"), message
        assert why in message, message
