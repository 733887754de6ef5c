"""`citation_validity` with `require_citations: true` fails an answer that recorded no
citations at all, as it fails one that recorded an empty list: both cite nothing. Real CLI run.

(Before: a staged system records `citations/v1` only when its output has a `citations` key, so
an answer that left the key out was excluded with `no_citations_recorded`. 30 of 40 answers
cited nothing, the metric read 10 / 10 observed, 100.0%, with 30 excluded, and a `min: 0.5`
rule PASSed with exit 0. Now it reads 10 / 40 and the rule FAILs.)
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.support import oloproof, write_project

APP = """
from oloproof import Context, Passage, Retrieval, rag_system


@rag_system(name="r", version="1", depth=2, top_k=2, index_version="i1")
class Rag:
    def retrieve(self, input: dict, depth: int) -> Retrieval:
        return Retrieval(candidates=(Passage(doc_id="kb-1", text="Refunds take 14 days."),))

    def generate(self, input: dict, context: Context) -> dict:
        if input["cites"]:
            return {"answer": "14 days", "citations": ["kb-1"]}
        return {"answer": "14 days"}  # the model left its citations out
"""

CONFIG = """\
system:
  name: r
  version: "1"
  rag: {object: app:Rag, depth: 2, top_k: 2, index_version: i1}
dataset: cases.jsonl
policy: policy.yaml
evaluators:
  - {type: citation_validity, require_citations: true}
  - {type: citation_validity, criterion: cited_in_context}
"""


def test_an_answer_without_recorded_citations_fails_when_they_are_required(
    tmp_path: Path,
) -> None:
    root = write_project(
        tmp_path / "p",
        app=APP,
        config=CONFIG,
        policy="version: 1\nrules:\n  - {id: cites, metric: citations_valid, min: 0.5}\n",
        cases=[{"id": f"q{i}", "input": {"q": i, "cites": i < 10}} for i in range(40)],
    )
    result = oloproof("run", "--json", cwd=root)
    assert result.code == 1, result.out + result.err
    report = json.loads(result.out)
    tallies = {m["criterion"]: m for m in report["metrics"]}
    required = tallies["citations_valid"]
    assert (required["successes"], required["observed"], required["excluded"]) == (10, 40, 0)
    # Without the requirement, an answer that cites nothing says nothing about where its
    # citations point: still excluded, as the docs say.
    loose = tallies["cited_in_context"]
    assert (loose["successes"], loose["observed"], loose["excluded"]) == (10, 10, 30)
    assert loose["excluded_reasons"] == {"no_citations_recorded": 30}

    case = oloproof("inspect", "latest", "--case", "q12", "--json", cwd=root)
    assert case.code == 0, case.err
    verdicts = json.loads(case.out)["verdicts"]
    assert verdicts["citations_valid"] == {"s": "fail"}
    judgment = oloproof("inspect", json.loads(case.out)["judgments"]["citations_valid"], cwd=root)
    assert '"reason": "no_citations"' in judgment.out, judgment.out
