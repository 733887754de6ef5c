"""Text holding a lone surrogate, which no UTF-8 text (so no ledger) can hold, in what a system
or a stage returns: the run stops naming the case, where the text sits and what is wrong with
it in the user's terms, through the real CLI.

The probe: an answer "a\\ud800b" stopped `oloproof run` with the encoder's own words, "case
'c2': the output cannot be recorded: cannot encode value: 'utf-8' codec can't encode character
'\\ud800' in position 1: surrogates not allowed" (which field?), and a key of the output with
"cannot encode the map key ...: it is not valid Unicode". A retrieved passage whose text held one
did not stop the run at all: the case was errored with Oloproof's own `CodecError` and its
frames, as if the user's code had raised it, exit 0; one in a `doc_id` was refused with
pydantic's "unable to parse raw data as a unicode string".
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.support import TOY_CONFIG, oloproof, toy_project, write_project

WRONG = (
    "the text holds a lone surrogate '\\ud800' (at character 1), a character no UTF-8 text "
    "can hold: half of a UTF-16 pair, or a byte that was not UTF-8 read with "
    "errors='surrogateescape'"
)
IN_OUTPUT = "is a value of type str, which " + WRONG.removeprefix("the text ")

APP = """
from oloproof import system


@system(name="toy", version="1")
def run(case):
    if case["q"] == "value":
        return {"answer": ["x", "a\\ud800b"]}
    if case["q"] == "key":
        return {"answer": "x", "k\\ud800": 1}
    return {"answer": case["q"]}
"""


@pytest.mark.parametrize(("q", "where"), [("value", "output.answer.1"), ("key", "a key of output")])
def test_an_output_holding_a_lone_surrogate_is_named(tmp_path: Path, q: str, where: str) -> None:
    root = toy_project(tmp_path / "p", config=TOY_CONFIG.replace("policy: policy.yaml\n", ""))
    (root / "app.py").write_text(APP)
    case = {"id": "c2", "input": {"q": q}, "expected": {"answer": "x"}}
    with (root / "cases.jsonl").open("a") as cases:
        cases.write(json.dumps(case) + "\n")
    done = oloproof("run", cwd=root)
    assert done.code == 2, done.out + done.err
    assert done.err == f"error: case 'c2': the output cannot be recorded: {where} {IN_OUTPUT}\n"


STAGED_APP = """
import os

from oloproof import Passage, Retrieval, rag_system


@rag_system(name="r", version="1", depth=3, top_k=2, index_version="i1")
class Staged:
    def retrieve(self, input, depth):
        field = os.environ["FIELD"]
        odd = {"doc_id": "d1", "text": "passage", field: "p\\ud800"}
        return Retrieval(query=input["q"], depth=depth, candidates=(Passage(**odd),))

    def generate(self, input, context):
        return {"answer": input["q"], "citations": [context.items[0].doc_id]}
"""
STAGED_CONFIG = """\
system: {name: r, version: "1", rag: {object: "app:Staged"}}
dataset: cases.jsonl
evaluators:
  - {type: contains, criterion: echo, field: answer, expected_field: answer}
"""


@pytest.mark.parametrize("field", ["text", "doc_id"])
def test_a_passage_holding_a_lone_surrogate_stops_the_run_naming_it(
    tmp_path: Path, field: str
) -> None:
    root = write_project(
        tmp_path / "p",
        app=STAGED_APP,
        config=STAGED_CONFIG,
        policy="",
        cases=[{"id": "c1", "input": {"q": "x"}, "expected": {"answer": "x"}}],
    )
    done = oloproof("run", cwd=root, env={"FIELD": field})
    # A text was exit 0, the case errored with CodecError; a doc_id, pydantic's words.
    assert done.code == 2, done.out + done.err
    assert done.err == f"error: case 'c1': malformed Passage artifact: {field}: {WRONG}\n"
