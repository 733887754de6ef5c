"""A generate that reads what retrieve leaves behind is generated again when retrieve's code
changes, through the real CLI.

Such a system (``self.mode = "A"`` or ``LAST["mode"] = "A"`` in retrieve, read by generate)
retrieves for every case, and generate's key held the whole retrieval, but not retrieve's code:
retrieve edited to leave ``"B"`` behind while returning the same passages found generate's
earlier output in the stage cache (``Stages: retrieve 0 hit/2 miss; generate 2 hit/0 miss``), and
the run reported the answer ``q0A`` that no code of the project made any longer, with no ``Not
seen`` line. generate's key now holds retrieve's fingerprint too.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.support import oloproof, write_project

APP = """
from oloproof import Passage, Retrieval, rag_system

LAST = {{}}


@rag_system(name="s", version="1", depth=2, top_k=1)
class Staged:
    def retrieve(self, input, depth):
        {store} = "A"
        return Retrieval(query=input["q"], depth=depth, candidates=(Passage(doc_id="d", text="t"),))

    def generate(self, input, context):
        return {{"answer": input["q"] + {store}}}
"""
CONFIG = """
system: {name: s, version: "1", rag: {object: "app:Staged"}}
dataset: cases.jsonl
policy: policy.yaml
evaluators:
  - {type: equals, criterion: answered, field: answer, expected_field: answer}
"""


@pytest.mark.parametrize("store", ["self.mode", 'LAST["mode"]'])
def test_an_edit_to_what_retrieve_leaves_generates_again(tmp_path: Path, store: str) -> None:
    cases = (
        {"id": f"q{i}", "input": {"q": f"q{i}"}, "expected": {"answer": f"q{i}B"}} for i in (0, 1)
    )
    policy = "version: 1\nrules:\n  - {id: answers, metric: answered, min: 0.5}\n"
    root = write_project(
        tmp_path / "p", app=APP.format(store=store), config=CONFIG, policy=policy, cases=cases
    )
    first = oloproof("run", cwd=root)
    assert "Stages: retrieve 0 hit/2 miss; generate 0 hit/2 miss" in first.lines, first.err
    assert "│ answered │ 0.0%" in first.out, first.out
    path = root / "app.py"
    path.write_text(path.read_text().replace('= "A"', '= "B"'))

    rerun = oloproof("run", cwd=root)
    assert "Stages: retrieve 0 hit/2 miss; generate 0 hit/2 miss" in rerun.lines, rerun.out
    assert "│ answered │ 100.0%" in rerun.out, rerun.out
