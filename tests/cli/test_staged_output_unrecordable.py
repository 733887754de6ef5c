"""A staged system's generate that returns what the ledger cannot record (a NaN) stops the run
naming the case, as a callable system's output does: the case is not left as an error whose
message runs through Oloproof's own ledger code."""

from __future__ import annotations

import json
from pathlib import Path

from support import oloproof

APP = """
from oloproof import Passage, Retrieval, rag_system


@rag_system(name="nan", version="1", depth=2, top_k=1, token_budget=50)
class App:
    def retrieve(self, input, depth):
        return Retrieval(query=input["q"], depth=depth, candidates=(
            Passage(doc_id="d1", score=1.0, text="one"),))

    def generate(self, input, context):
        return {"answer": float("nan") if input["q"] == "bad" else input["q"]}

    def count_tokens(self, passage):
        return len(passage.text.split())
"""


def test_generate_returning_nan_stops_the_run_naming_the_case(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text(APP)
    (tmp_path / "oloproof.yaml").write_text(
        'system: {name: nan, version: "1", rag: {object: app:App}}\n'
        "dataset: cases.jsonl\n"
        "evaluators:\n"
        "  - {type: contains, criterion: answer_correct, field: answer, expected_field: answer}\n"
    )
    (tmp_path / "cases.jsonl").write_text(
        "".join(
            json.dumps({"id": f"c{i}", "input": {"q": q}, "expected": {"answer": q}}) + "\n"
            for i, q in enumerate(["good", "bad", "fine"])
        )
    )
    result = oloproof("run", cwd=tmp_path)
    assert result.code == 2, result.out + result.err
    assert result.err == (
        "error: case 'c1': the output cannot be recorded: cannot encode the float nan: "
        "only finite floats are allowed\n"
    )
    listed = oloproof("runs", cwd=tmp_path)
    assert "STOPPED" in listed.out, listed.out
