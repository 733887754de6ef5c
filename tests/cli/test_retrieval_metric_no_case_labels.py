"""A retrieval metric (hit_rate, recall, precision, mrr, ndcg) over cases none of which labels a
passage in ``expected.relevant`` is refused, as an ``expected_field`` no case has is: the file,
the line, the metric, what the cases hold; exit 2, before the ledger is made. Real CLI.

(Before: with the labels written under ``relevent``, every case was excluded
(no_relevance_labels), the run printed ``0 / 0 observed`` for the metric and a rule on it
blocked the gate for want of evidence, as if nobody had labelled the cases.)
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.support import oloproof, write_project

APP = """
from oloproof import Passage, Retrieval, current_case, system

@system(name="ranker", version="1", records=("retrieval/v1",))
def run(case):
    current_case().retrieval(Retrieval(query="q", depth=1, candidates=(
        Passage(doc_id="d1", text="t"),)))
    return {"answer": "x"}
"""
CONFIG = """\
system: {name: ranker, version: "1", callable: app:run}
dataset: cases.jsonl
policy: policy.yaml
evaluators:
  - {type: contains, criterion: echo, field: answer, expected_field: answer}
  - {type: ndcg, k: 1}
"""
POLICY = "version: 1\nrules:\n  - {id: r, metric: ndcg_at_1, min: 0.5}\n"


def _run(root: Path, cases: list[dict[str, Any]], *command: str) -> tuple[int, str, str]:
    write_project(root, app=APP, config=CONFIG, policy=POLICY, cases=cases)
    done = oloproof(*command, cwd=root)
    return done.code, done.out, done.err


def _case(n: int, **expected: Any) -> dict[str, Any]:
    return {"id": f"c{n}", "input": {}, "expected": {"answer": "x", **expected}}


def test_labels_under_a_misspelt_key_are_refused(tmp_path: Path) -> None:
    cases = [_case(n, relevent=[{"doc_id": "d1"}]) for n in range(3)]
    for n, command in enumerate((("run",), ("run", "--dry-run"))):
        code, out, err = _run(tmp_path / f"p{n}", cases, *command)
        assert (code, out) == (2, ""), err
        config = (tmp_path / f"p{n}" / "oloproof.yaml").resolve()
        assert err == (
            f"error: {config}, line 6: evaluators.1: 'ndcg_at_1' (ndcg) reads the relevance "
            "labels in expected.relevant, and no case has any there, so every case would be "
            "excluded from the metric (the cases' expected fields: answer, relevent)\n"
        )
        assert not (tmp_path / f"p{n}" / ".oloproof").exists()


def test_empty_label_lists_everywhere_are_refused(tmp_path: Path) -> None:
    cases = [_case(0, relevant=[]), _case(1), _case(2, relevant=[])]
    code, out, err = _run(tmp_path / "p", cases, "run")
    assert (code, out) == (2, ""), err
    assert "'ndcg_at_1' (ndcg) reads the relevance labels in expected.relevant, and no case" in err
    assert "(the cases' expected fields: answer, relevant)\n" in err


def test_some_labelled_cases_are_read(tmp_path: Path) -> None:
    # c0 alone is labelled: the others are cases nobody labelled, excluded as before.
    cases = [_case(0, relevant=[{"doc_id": "d1"}]), _case(1), _case(2, relevant=[])]
    code, out, err = _run(tmp_path / "p", cases, "run", "--json")
    assert code == 3, out + err  # one case observed: too few to decide
    ndcg = next(m for m in json.loads(out)["metrics"] if m["criterion"] == "ndcg_at_1")
    assert ndcg["observed"] == 1
    assert ndcg["excluded_reasons"] == {"no_relevance_labels": 2}
