"""`export --format trec` says which labelled cases have no ranking in run.trec.

The probe: a run of four labelled cases, one retrieving the relevant passage, one recording an
empty retrieval (Oloproof: recall 0), one recording none and one that errored (both missing).
`run.trec` held lines for the first alone, `qrels.trec` for all four, and the export printed
nothing more: trec_eval (pytrec_eval too) averages over the run file's queries unless given
`-c`, so it gave a mean recall of 1.0 over one query where Oloproof counts four cases. Now the
export names the cases run.trec has no line for, and says what trec_eval does with them.
"""

from __future__ import annotations

from pathlib import Path

import pytrec_eval
from tests.support import oloproof, write_project

APP = """
from oloproof import Passage, Retrieval, current_case, system


@system(name="ret", version="1", records=("retrieval/v1",))
def run(case):
    mode = case["mode"]
    if mode == "raise":
        raise RuntimeError("search is down")
    if mode != "none":
        found = (Passage(doc_id="d1", score=1.0),) if mode == "hit" else ()
        current_case().retrieval(Retrieval(query=mode, depth=2, candidates=found))
    return {"answer": mode}
"""
CONFIG = """\
system: {name: ret, version: "1", callable: "app:run"}
dataset: cases.jsonl
evaluators:
  - {type: recall, k: 2}
"""


def test_the_labelled_cases_without_a_ranking_are_named(tmp_path: Path) -> None:
    cases = [
        {"id": mode, "input": {"mode": mode}, "expected": {"relevant": [{"doc_id": "d1"}]}}
        for mode in ("hit", "empty", "none", "raise")
    ]
    root = write_project(tmp_path / "p", app=APP, config=CONFIG, policy="", cases=cases)
    assert oloproof("run", cwd=root).code == 0
    done = oloproof("export", "latest", "--format", "trec", "--output", "trec", cwd=root)
    assert done.code == 0, done.err
    assert done.err == (
        "warning: 3 labelled cases (empty, none, raise) have no ranking in run.trec (errored, "
        "or no retrieval recorded, or an empty one): trec_eval averages over the queries of "
        "run.trec alone unless given -c, which counts each as retrieving nothing\n"
    )
    # What the warning is about: trec_eval measures the one query of the run file.
    run = {"hit": {"d1": 1.0}}
    assert (root / "trec" / "run.trec").read_text().split()[:3] == ["hit", "Q0", "d1"]
    qrels = {mode: {"d1": 1} for mode in ("hit", "empty", "none", "raise")}
    measured = pytrec_eval.RelevanceEvaluator(qrels, {"recall.2"}).evaluate(run)
    assert set(measured) == {"hit"}
    # The tables say nothing more: they hold a row for every case.
    tables = oloproof("export", "latest", "--format", "jsonl", "--output", "t", cwd=root)
    assert tables.code == 0 and tables.err == ""
