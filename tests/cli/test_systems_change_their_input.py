"""A system that changes the input it is handed does not change the case.

A callable was handed the case's own input, and the execution was recorded after the call, so a
function that added a key to it, or appended to a list in it, left the ledger saying the case's
input was what the function made of it. In a staged system, retrieve was handed the same
object as generate, so generate saw what retrieve changed on a run that retrieved, and the
dataset's input on a run that took the retrieval from the stage cache: one case, two answers.
Each call is now handed its own copy.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.support import oloproof

INPUT = {"q": "x", "tags": ["a"], "meta": {"lang": "en"}}

CALLABLE = """
from oloproof import system


@system(name="m", version="1")
{kind}def changes(case):
    asked = case["q"]
    case["q"] = "changed"
    case["tags"].append("added")
    case["meta"]["lang"] = "fr"
    case["extra"] = 1
    return {{"answer": asked}}
"""

CALLABLE_CONFIG = """
system: {name: m, version: "1", callable: app:changes}
dataset: cases.jsonl
evaluators:
  - {type: contains, criterion: answered, field: answer, expected_field: answer}
"""

STAGED = """
import json

from oloproof import Passage, Retrieval, rag_system


@rag_system(name="s", version="1", depth=1, top_k=1, index_version="i1")
class Changes:
    def retrieve(self, input, depth):
        input["tags"].append("retrieved")
        input["q"] = "changed"
        return Retrieval(query="x", depth=depth, candidates=(Passage(doc_id="d1", text="t"),))

    def generate(self, input, context):
        {again}return {"answer": json.dumps(input, sort_keys=True)}

    def count_tokens(self, passage):
        return 1
"""

STAGED_CONFIG = """
system: {name: s, version: "1", rag: {object: "app:Changes"}}
dataset: cases.jsonl
evaluators:
  - {type: contains, criterion: answered, field: answer, expected_field: answer}
"""


def _recorded_input(root: Path) -> object:
    shown = json.loads(oloproof("inspect", "latest", "--case", "c1", "--json", cwd=root).out)
    return shown["input"]


@pytest.mark.parametrize("kind", ["", "async "])
def test_the_recorded_input_is_the_dataset_s(tmp_path: Path, kind: str) -> None:
    root = tmp_path / "p"
    root.mkdir()
    (root / "app.py").write_text(CALLABLE.format(kind=kind))
    (root / "oloproof.yaml").write_text(CALLABLE_CONFIG)
    (root / "cases.jsonl").write_text(
        json.dumps({"id": "c1", "input": INPUT, "expected": {"answer": "x"}}) + "\n"
    )
    first = oloproof("run", cwd=root)
    assert first.code == 0, first.err
    assert _recorded_input(root) == INPUT
    again = oloproof("run", cwd=root)  # from the execution cache
    assert "Cache: execution 1 hit/0 miss" in again.out, again.out
    assert _recorded_input(root) == INPUT


def test_generate_sees_the_input_whether_retrieve_ran_or_not(tmp_path: Path) -> None:
    root = tmp_path / "p"
    root.mkdir()
    (root / "app.py").write_text(STAGED.replace("{again}", ""))
    (root / "oloproof.yaml").write_text(STAGED_CONFIG)
    given = json.dumps(INPUT, sort_keys=True)
    (root / "cases.jsonl").write_text(
        json.dumps({"id": "c1", "input": INPUT, "expected": {"answer": given}}) + "\n"
    )
    first = oloproof("run", cwd=root)
    assert first.code == 0, first.err
    assert "retrieve 0 hit/1 miss" in first.out, first.out
    # New generate code generates again, with the retrieval taken from the stage cache:
    # generate must see the same input as when retrieve ran.
    (root / "app.py").write_text(STAGED.replace("{again}", "_ = 1\n        "))
    again = oloproof("run", cwd=root)
    assert again.code == 0, again.err
    assert "retrieve 1 hit/0 miss; generate 0 hit/1 miss" in again.out, again.out
    for result in (first, again):
        assert "answered │ 100.0%" in result.out, result.out
    assert _recorded_input(root) == INPUT
