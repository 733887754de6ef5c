"""A generate that reads the context's budget, dropped passages or source is keyed on them.

The generate stage's cache key holds the passages kept in the context, and not how the context
was made (its token budget, the passages it dropped, whether it came from the retrieval or from
gold passages): most generate methods read only the kept passages, and raising the budget then
regenerates only where they changed. But generate is handed the whole context, and one that
sizes its reply from the budget or mentions what was left out made an answer that depends on
them: raising the budget with the kept passages unchanged used to serve the answer made under
the old budget, recorded beside a context holding the new one.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from tests.support import oloproof

APP = """
from oloproof import Passage, Retrieval, rag_system

DOCS = [("d1", "alpha beta"), ("d2", "gamma delta epsilon zeta eta theta iota kappa")]


def prompt(context):
    return f"Answer from: {context}"


def joined(context):
    return " ".join(i.doc_id for i in context.items)


@rag_system(name="b", version="1", depth=2, top_k=2, index_version="i1")
class Budgeted:
    def retrieve(self, input, depth):
        return Retrieval(query=input["q"], depth=depth, candidates=tuple(
            Passage(doc_id=d, text=t, score=1.0) for d, t in DOCS))

    def generate(self, input, context):
        {body}

    def count_tokens(self, passage):
        return len((passage.text or "").split())
"""

READS_BUDGET = (
    'return {"answer": f"budget={context.token_budget} '
    'dropped={[d.doc_id for d in context.dropped]}"}'
)
# Reading only the kept passages, itself or through a helper it hands the context to.
READS_ITEMS = {
    "itself": 'return {"answer": " ".join(i.doc_id for i in context.items)}',
    "helper": 'return {"answer": joined(context)}',
}
# Ways to read the budget without naming it: formatted whole, dumped, handed to a helper.
READS_WHOLE = {
    "formatted": 'return {"answer": f"{context}"}',
    "dumped": 'return {"answer": repr(context.model_dump())}',
    "helper": 'return {"answer": prompt(context)}',
}

CONFIG = """
system: {{name: b, version: "1", rag: {{object: "app:Budgeted", token_budget: {budget}}}}}
dataset: cases.jsonl
evaluators:
  - {{type: contains, criterion: answered, field: answer, expected_field: answer}}
"""

STAGES = re.compile(r"^Stages: .*$", re.MULTILINE)


def project(root: Path, body: str) -> Path:
    root.mkdir()
    (root / "app.py").write_text(APP.replace("{body}", body))
    (root / "oloproof.yaml").write_text(CONFIG.format(budget=5))
    (root / "cases.jsonl").write_text(
        json.dumps({"id": "c1", "input": {"q": "x"}, "expected": {"answer": "d1"}}) + "\n"
    )
    return root


def run_with_budget(root: Path, budget: int) -> tuple[str, str]:
    """Run with ``budget`` (d2, 8 tokens, is dropped under 5 and 6 alike): the Stages line and
    the answer recorded."""
    (root / "oloproof.yaml").write_text(CONFIG.format(budget=budget))
    done = oloproof("run", cwd=root)
    assert done.code == 0, done.out + done.err
    shown = json.loads(oloproof("inspect", "latest", "--case", "c1", "--json", cwd=root).out)
    return STAGES.findall(done.out)[0], shown["output"]["answer"]


def test_a_generate_reading_the_budget_generates_again_when_it_changes(tmp_path: Path) -> None:
    root = project(tmp_path / "reads", READS_BUDGET)
    assert run_with_budget(root, 5) == (
        "Stages: retrieve 0 hit/1 miss; generate 0 hit/1 miss",
        "budget=5 dropped=['d2']",
    )
    assert run_with_budget(root, 6) == (
        "Stages: retrieve 1 hit/0 miss; generate 0 hit/1 miss",
        "budget=6 dropped=['d2']",
    )
    assert oloproof("verify", cwd=root).code == 0


@pytest.mark.parametrize("body", READS_ITEMS.values(), ids=READS_ITEMS.keys())
def test_a_generate_reading_only_the_kept_passages_reuses_its_answer(
    tmp_path: Path, body: str
) -> None:
    root = project(tmp_path / "items", body)
    assert run_with_budget(root, 5) == (
        "Stages: retrieve 0 hit/1 miss; generate 0 hit/1 miss",
        "d1",
    )
    assert run_with_budget(root, 6) == (
        "Stages: retrieve 1 hit/0 miss; generate 1 hit/0 miss",
        "d1",
    )


@pytest.mark.parametrize("body", READS_WHOLE.values(), ids=READS_WHOLE.keys())
def test_a_generate_that_uses_the_whole_context_generates_again_when_the_budget_changes(
    tmp_path: Path, body: str
) -> None:
    # Such a generate's prompt holds the budget (here its answer does) without its code naming
    # it: its answer made under the old budget was served for the new one.
    root = project(tmp_path / "whole", body)
    first = run_with_budget(root, 5)
    assert first[0] == "Stages: retrieve 0 hit/1 miss; generate 0 hit/1 miss"
    assert "token_budget=5" in first[1] or "'token_budget': 5" in first[1], first[1]
    again = run_with_budget(root, 6)
    assert again[0] == "Stages: retrieve 1 hit/0 miss; generate 0 hit/1 miss"
    assert "token_budget=6" in again[1] or "'token_budget': 6" in again[1], again[1]
