"""`oloproof export --format`: tables pandas reads in one line, TREC files trec_eval reads
(through pytrec_eval, whose numbers must equal Oloproof's own judgments), and
`qrels-to-cases` turning a qrels file into relevance labels."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
import pytrec_eval
from tests.support import oloproof, write_project


def _run(root: Path) -> str:
    done = oloproof("run", cwd=root)
    assert done.code in (1, 3), done.err
    return done.lines[0].split()[1]


def test_the_default_export_is_still_the_bundle(blackbox: Path) -> None:
    run_id = _run(blackbox)
    done = oloproof("export", run_id, cwd=blackbox)
    assert done.out == f"Exported {run_id} to {blackbox / '.oloproof' / 'bundles' / run_id}\n"


def test_parquet_tables_load_in_one_line_each(blackbox: Path) -> None:
    run_id = _run(blackbox)
    done = oloproof("export", run_id, "--format", "parquet", "--output", "out", cwd=blackbox)
    assert done.code == 0, done.err
    verdicts = pd.read_parquet(blackbox / "out" / "verdicts.parquet")
    cases = pd.read_parquet(blackbox / "out" / "cases.parquet")
    assert len(verdicts) == 15 * 4 and len(cases) == 15
    assert list(verdicts.columns) == [
        "run_id",
        "case_id",
        "line",
        "case_status",
        "criterion",
        "status",
        "passed",
        "value",
        "reason",
        "observed_repeats",
        "missing_repeats",
        "judgment",
    ]
    answer = verdicts[verdicts.criterion == "answer_correct"]
    assert answer.passed.sum() == 11  # the report's 11 / 15
    hit = verdicts[verdicts.criterion == "hit_rate_at_2"]
    assert (hit.status == "excluded").sum() == 2
    assert set(hit[hit.status == "excluded"].reason) == {"no_relevance_labels"}
    assert cases["verdict.answer_correct"].mean() == pytest.approx(11 / 15)
    billing = cases[cases["metadata.topic"] == "billing"]
    assert billing["verdict.answer_correct"].sum() == 1  # the slice table's 1 / 4
    assert str(verdicts.passed.dtype) in ("bool", "object", "boolean")
    assert json.loads(cases.set_index("case_id").loc["money_back", "output"])["citations"] == []


def test_csv_and_jsonl_hold_the_same_rows(blackbox: Path) -> None:
    run_id = _run(blackbox)
    for fmt in ("csv", "jsonl"):
        done = oloproof("export", run_id, "--format", fmt, "--output", fmt, cwd=blackbox)
        assert done.code == 0, done.err
    from_csv = pd.read_csv(blackbox / "csv" / "verdicts.csv")
    from_jsonl = pd.read_json(blackbox / "jsonl" / "verdicts.jsonl", lines=True)
    assert list(from_csv.case_id) == list(from_jsonl.case_id)
    assert list(from_csv.value.fillna(-1)) == list(from_jsonl.value.fillna(-1))


def test_parquet_without_pyarrow_says_how_to_get_it(blackbox: Path, tmp_path: Path) -> None:
    run_id = _run(blackbox)
    blocker = tmp_path / "no_pyarrow" / "pyarrow"
    blocker.mkdir(parents=True)
    (blocker / "__init__.py").write_text("raise ImportError('pyarrow is not installed')\n")
    done = oloproof(
        "export",
        run_id,
        "--format",
        "parquet",
        "--output",
        "out",
        cwd=blackbox,
        env={"PYTHONPATH": str(blocker.parent)},
    )
    assert (done.code, done.err) == (
        2,
        "error: writing Parquet needs pyarrow, which is not installed: "
        "pip install 'oloproof[parquet]'\n",
    )


def test_trec_files_give_trec_evals_numbers_equal_to_oloprooofs(support: Path) -> None:
    run_id = _run(support)
    done = oloproof("export", run_id, "--format", "trec", "--output", "trec", cwd=support)
    assert done.code == 0, done.err
    run: dict[str, dict[str, float]] = {}
    for line in (support / "trec" / "run.trec").read_text().splitlines():
        qid, q0, doc, _rank, score, tag = line.split()
        assert q0 == "Q0" and tag == run_id
        run.setdefault(qid, {})[doc] = float(score)
    qrels: dict[str, dict[str, int]] = {}
    for line in (support / "trec" / "qrels.trec").read_text().splitlines():
        qid, _, doc, rel = line.split()
        qrels.setdefault(qid, {})[doc] = int(rel)
    measured = pytrec_eval.RelevanceEvaluator(qrels, {"recall.2", "ndcg_cut.6"}).evaluate(run)
    oloproof("export", run_id, "--format", "jsonl", "--output", "tables", cwd=support)
    rows = [json.loads(x) for x in (support / "tables" / "verdicts.jsonl").read_text().splitlines()]
    ours = {(r["case_id"], r["criterion"]): r["value"] for r in rows}
    assert measured, "trec_eval evaluated no query"
    for qid, values in measured.items():
        assert values["recall_2"] == pytest.approx(ours[(qid, "recall_at_2")])
        assert values["ndcg_cut_6"] == pytest.approx(ours[(qid, "ndcg_at_6")])
    # A case that retrieved nothing relevant, at all, is in the run file with its recorded order.
    assert set(run) <= {r["case_id"] for r in rows}


def test_unknown_format_and_output_without_format(blackbox: Path) -> None:
    run_id = _run(blackbox)
    done = oloproof("export", run_id, "--format", "xlsx", cwd=blackbox)
    assert (done.code, done.err) == (
        2,
        "error: unknown export format 'xlsx' (formats: jsonl, csv, parquet, trec)\n",
    )
    done = oloproof("export", run_id, "--output", "x", cwd=blackbox)
    assert done.code == 2 and "give --format with it" in done.err


def test_qrels_to_cases_labels_the_cases_trec_eval_would_judge(blackbox: Path) -> None:
    cases = blackbox / "cases.jsonl"
    (blackbox / "qrels.txt").write_text(
        "office_hours 0 kb-06 2\noffice_hours 0 kb-07 0\nnot_a_case 0 kb-01 1\n"
    )
    refused = oloproof("qrels-to-cases", "qrels.txt", cwd=blackbox)
    assert refused.code == 0, refused.err  # office_hours has no labels yet: nothing to refuse
    assert refused.lines == [
        f"Labelled 1 cases in {Path('cases.jsonl')}; 14 have no qrels",
        "1 qids in qrels.txt match no case: not_a_case",
    ]
    record = next(
        json.loads(line) for line in cases.read_text().splitlines() if '"office_hours"' in line
    )
    assert record["expected"]["relevant"] == [
        {"doc_id": "kb-06", "grade": 2},
        {"doc_id": "kb-07", "grade": 0},
    ]
    (blackbox / "more.txt").write_text("office_hours 0 kb-05 1\n")
    again = oloproof("qrels-to-cases", "more.txt", "--output", "other.jsonl", cwd=blackbox)
    assert again.code == 2 and "already has expected.relevant; give --replace" in again.err
    bad = blackbox / "bad.txt"
    bad.write_text("office_hours kb-06 1\n")
    done = oloproof("qrels-to-cases", "bad.txt", cwd=blackbox)
    assert (done.code, done.err) == (
        2,
        f"error: {Path('bad.txt')}, line 1: a qrels line has 4 fields (qid iter docno rel), "
        "this has 3\n",
    )


TWO_RETRIEVALS = """
from oloproof import Passage, Retrieval, current_case, system

@system(name="two-stage", version="1", records=("retrieval/v1",))
def run(case):
    recorder = current_case()
    recorder.retrieval(Retrieval(candidates=(Passage(doc_id="d1"),)))
    # A second stage re-ranks: the relevant d1 falls to rank 2. The evaluators read this one.
    recorder.retrieval(Retrieval(candidates=(Passage(doc_id="zz"), Passage(doc_id="d1"))))
    return {"answer": "x"}
"""


def test_trec_files_hold_the_retrieval_the_evaluators_scored(tmp_path: Path) -> None:
    # The run file held the first retrieval: trec_eval gave recall@1 = 1 where Oloproof gave 0.
    root = write_project(
        tmp_path / "p",
        app=TWO_RETRIEVALS,
        config="system: {name: two-stage, version: '1', callable: app:run}\n"
        "evaluators:\n  - {type: recall, k: 1}\n",
        policy="version: 1\nrules:\n  - {id: r, metric: recall_at_1, min: 0.5}\n",
        cases=[{"id": "q2", "input": {"q": "x"}, "expected": {"relevant": [{"doc_id": "d1"}]}}],
    )
    assert oloproof("run", cwd=root).code == 0
    done = oloproof("export", "latest", "--format", "trec", "--output", "trec", cwd=root)
    assert done.code == 0, done.err
    lines = (root / "trec" / "run.trec").read_text().splitlines()
    assert [line.split()[:4] for line in lines] == [
        ["q2", "Q0", "zz", "1"],
        ["q2", "Q0", "d1", "2"],
    ]
    run = {"q2": {line.split()[2]: float(line.split()[4]) for line in lines}}
    measured = pytrec_eval.RelevanceEvaluator({"q2": {"d1": 1}}, {"recall.1"}).evaluate(run)
    oloproof("export", "latest", "--format", "jsonl", "--output", "tables", cwd=root)
    (row,) = [json.loads(x) for x in (root / "tables" / "verdicts.jsonl").read_text().splitlines()]
    assert measured["q2"]["recall_1"] == row["value"] == 0.0
