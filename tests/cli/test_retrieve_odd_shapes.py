"""A retrieve that returns a ``Retrieval`` built past its validation is held to what
``retrieval/v1`` allows, as one returned as a mapping is, through the real CLI.

- ``Retrieval.model_construct`` or ``Passage.model_copy(update=...)`` with a NaN score used to
  error each case with a ``CodecError`` (the ledger cannot encode it) and the run went on: now
  it is the malformed retrieval it is, and stops the run naming the case, as a NaN built
  through ``Passage(...)`` does.
- A subclass of ``Retrieval`` with a field of its own was recorded with that field, so the run
  passed and every replay of it stopped reading the retrieval back: now the run refuses it, as
  it refuses a mapping with that extra key.
- ``Retrieval.model_construct`` with candidates given as mappings is a retrieval of those
  passages, as the same mapping returned whole is.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.support import oloproof

APP = """
from oloproof import Passage, Retrieval, rag_system


class Noted(Retrieval):
    note: str = ""


@rag_system(name="odd", version="1", depth=3, top_k=1)
class Odd:
    def retrieve(self, input, depth):
        q = input["question"]
        near = Passage(doc_id=f"{{q}}-near", score=2.0, text="near")
        answer = Passage(doc_id=f"{{q}}-answer", score=1.0, text=f"ANSWER-{{q}}.")
        return {returned}

    def generate(self, input, context):
        return {{"answer": " ".join(item.text or "" for item in context.items)}}
"""

RETURNED = {
    "constructed_nan": "Retrieval.model_construct(query=q, depth=depth, candidates=(near, "
    'answer.model_copy(update={"score": float("nan")})))',
    "subclass_field": 'Noted(query=q, depth=depth, note="mine", candidates=(near, answer))',
}

CONFIG = """
system:
  name: odd
  version: "1"
  rag: {object: app:Odd}
dataset: cases.jsonl
concurrency: 1
evaluators:
  - {type: contains, criterion: answered, field: answer, expected_field: answer}
"""


def project(root: Path, returned: str) -> Path:
    root.mkdir()
    (root / "app.py").write_text(APP.format(returned=returned))
    (root / "oloproof.yaml").write_text(CONFIG)
    with (root / "cases.jsonl").open("w") as f:
        for q in ("q1", "q2"):
            case = {"id": q, "input": {"question": q}, "expected": {"answer": "near"}}
            f.write(json.dumps(case) + "\n")
    return root


@pytest.mark.parametrize(
    ("variant", "why"),
    [
        ("constructed_nan", "Input should be a finite number"),
        ("subclass_field", "Extra inputs are not permitted"),
    ],
)
def test_a_retrieval_built_past_validation_is_malformed(
    tmp_path: Path, variant: str, why: str
) -> None:
    root = project(tmp_path / "p", RETURNED[variant])
    done = oloproof("run", cwd=root)
    assert (done.code, done.out) == (2, ""), done.out
    assert done.err == f"error: case 'q1': retrieve() returned a malformed retrieval/v1: {why}\n"


def test_constructed_candidates_given_as_mappings_are_passages(tmp_path: Path) -> None:
    returned = (
        "Retrieval.model_construct(query=q, depth=depth, candidates=("
        'near.model_dump(), {"doc_id": f"{q}-answer", "text": "mapped"}))'
    )
    root = project(tmp_path / "p", returned)
    done = oloproof("run", cwd=root)
    assert done.code == 0, done.err
    assert "Stages: retrieve 0 hit/2 miss; generate 0 hit/2 miss" in done.lines
    assert "answered" in done.out and "2 / 2 observed" in done.out
