"""With `--repeats K`, a repeat that errored (or that a judge gave no verdict) never hides behind
its case's combined verdicts: `runs`, the report, `inspect --case` and `--failures`, JUnit and
the exports each say how many of a case's repeats errored, through the real CLI."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pandas as pd
from tests.support import bundle_cases, flaky_repeats_project, oloproof, runs_fields


def _repeated_run(root: Path, *args: str) -> str:
    done = oloproof("run", "--repeats", "3", *args, cwd=root)
    assert done.code in (0, 3), done.out + done.err
    return done.lines[0].split()[1]


def test_runs_and_the_report_count_the_errored_repeats(tmp_path: Path) -> None:
    root = flaky_repeats_project(tmp_path)
    done = oloproof("run", "--repeats", "3", cwd=root)
    run_id = done.lines[0].split()[1]
    # c3 errored in every repeat (a missing case); c1 and c4 in one repeat of three each.
    # Kinds seen as often come in case order, a case's repeats in theirs.
    assert done.lines[0].endswith("[DECIDED/PARTIAL]")
    assert done.lines[2:4] == [
        f"1 of 6 cases errored: RuntimeError: the model timed out on q3 (call 1) (first: c3) · "
        f"oloproof inspect {run_id} --failures",
        f"5 of 18 repeats errored: RuntimeError: the model timed out on q1 (call 2) (1, first: "
        f"c1); RuntimeError: the model timed out on q3 (call 1) (1, first: c3); 3 more kinds · "
        f"oloproof inspect {run_id} --failures",
    ]
    fields = runs_fields(root, run_id)
    assert fields[3] == "PARTIAL"
    assert fields[5] == "5 of 6 answered · 1 missing (1 errored) · 5 of 18 repeats errored"
    row = json.loads(oloproof("runs", "--json", cwd=root).out)[0]
    assert (row["repeats"], row["repeats_errored"]) == (3, 5)
    # A run without repeats lists as it always did, in its line and its JSON.
    plain = oloproof("run", cwd=root)
    plain_id = plain.lines[0].split()[1]
    assert runs_fields(root, plain_id)[5] == "4 of 6 answered · 2 missing (2 errored)"
    assert "repeats" not in json.loads(oloproof("runs", "--json", cwd=root).out)[0]


def test_runs_counts_the_repeats_of_a_run_recorded_before_they_were_counted(
    tmp_path: Path,
) -> None:
    from oloproof import events as ev
    from oloproof.store import open_project_ledger

    root = flaky_repeats_project(tmp_path)
    run_id = _repeated_run(root)
    # A run_end as one written before it counted errored repeats (the latest one counts).
    ledger = open_project_ledger(root, create=False)
    try:
        (end,) = [e for _, e in ledger.lookup_events("run_meta", run_id) if e.type == ev.RUN_END]
        older = {k: v for k, v in end.body.items() if k != "repeats_errored"}
        ledger.put(ev.make(ev.RUN_END, older, end.refs))
    finally:
        ledger.close()
    fields = runs_fields(root, run_id)
    assert (fields[3], fields[5]) == (
        "PARTIAL",
        "5 of 6 answered · 1 missing (1 errored) · 5 of 18 repeats errored",
    )


def test_inspect_case_lists_every_repeat_with_its_error(tmp_path: Path) -> None:
    root = flaky_repeats_project(tmp_path)
    run_id = _repeated_run(root)
    shown = oloproof("inspect", run_id, "--case", "c1", cwd=root)
    assert shown.code == 0, shown.err
    lines = shown.lines
    assert lines[0] == "case c1 (ok)"
    at = lines.index("  judgments (over its 3 repeats):")
    assert lines[at + 1 : at + 4] == [
        "    answer_correct: 1.000 (2 of 3 repeats observed, 1 missing)",
        "    shaped: 1.000 (2 of 3 repeats observed, 1 missing)",
        "  1 of 3 repeats errored",
    ]
    assert lines[at + 4] == "  repeat 1 (ok):"
    second = lines.index("  repeat 2 (errored):")
    assert lines[second + 1] == "    error: RuntimeError: the model timed out on q1 (call 2)"
    assert lines[second + 2] == "      Traceback (most recent call last):"
    assert "      RuntimeError: the model timed out on q1 (call 2)" in lines[second:]
    assert "      answer_correct: missing (execution_errored)" in lines[second:]
    assert lines.index("  repeat 3 (ok):") > second
    executions = [line for line in lines if line.startswith("    execution: sha256:")]
    assert len(set(executions)) == 3
    # The same, as data: each repeat's status, verdicts and error.
    data = json.loads(oloproof("inspect", run_id, "--case", "c1", "--json", cwd=root).out)
    assert [r["status"] for r in data["repeats"]] == ["ok", "errored", "ok"]
    assert data["repeats"][1]["error"]["type"] == "RuntimeError"
    assert data["repeats"][0]["verdicts"]["answer_correct"] == {"s": "pass"}
    # A repeat whose judge gave no verdict is listed as such.
    judged = oloproof("inspect", run_id, "--case", "c5", cwd=root).lines
    assert "  1 of 3 repeats without a verdict" in judged
    second = judged.index("  repeat 2 (ok):")
    assert judged[second + 4].startswith("      answer_correct: missing (field_not_text)  sha256:")
    assert judged[second + 5] == "        the output's 'answer' is a number, not text"
    assert judged[second + 6].startswith("      shaped: missing (evaluator_raised)  sha256:")


def test_failures_list_the_cases_with_an_errored_or_unjudged_repeat(tmp_path: Path) -> None:
    root = flaky_repeats_project(tmp_path)
    run_id = _repeated_run(root)
    listed = oloproof("inspect", run_id, "--failures", cwd=root)
    assert listed.code == 0, listed.err
    blocks = listed.out.rstrip("\n").split("\n\n")
    assert blocks[0] == "5 of 6 cases failed, errored, are missing a verdict or did not finish"
    by_case = {block.splitlines()[0]: block.splitlines()[1:] for block in blocks[1:]}
    # c2 passed in every repeat; c6 failed one of three, which a count of failures counts.
    assert list(by_case) == ["c1", "c3", "c4", "c5", "c6"]
    assert by_case["c1"] == [
        "  1 of 3 repeats errored; repeat 2: RuntimeError: the model timed out on q1 (call 2)",
        '  output (repeat 1): {"answer": "yes"}',
        "  answer_correct: missing in 1 of 3 repeats",
        "  shaped: missing in 1 of 3 repeats",
    ]
    assert by_case["c3"][0] == "  errored: RuntimeError: the model timed out on q3 (call 1)"
    assert by_case["c4"][:2] == [
        "  1 of 3 repeats errored; repeat 1: RuntimeError: the model timed out on q4 (call 1)",
        '  output (repeat 2): {"answer": "yes"}',
    ]
    # c5's second answer is a number: no text for contains to read, so no verdict there either.
    assert by_case["c5"] == [
        "  1 of 3 repeats without a verdict",
        '  output (repeat 1): {"answer": "yes"}',
        "  answer_correct: missing in 1 of 3 repeats",
        "  shaped: missing in 1 of 3 repeats",
    ]
    assert by_case["c6"] == [
        "  3 repeats, each judged",
        '  output (repeat 1): {"answer": "yes"}',
        "  answer_correct: failed in 1 of 3 repeats",
    ]
    # An errored repeat has no verdict on any criterion: its case counts on each of them.
    on = oloproof("inspect", run_id, "--failures", "--criterion", "answer_correct", cwd=root)
    assert on.lines[0] == (
        "5 of 6 cases failed, errored, are missing a verdict or did not finish on answer_correct"
    )
    data = json.loads(oloproof("inspect", run_id, "--failures", "--json", cwd=root).out)
    c1 = next(d for d in data["failed"] if d["case_id"] == "c1")
    assert [r["status"] for r in c1["repeats"]] == ["ok", "errored", "ok"]


def test_junit_counts_a_case_with_an_errored_repeat_as_an_error(tmp_path: Path) -> None:
    root = flaky_repeats_project(tmp_path)
    run_id = _repeated_run(root, "--junit", "eval.xml", "--junit-cases")
    suite = ET.parse(root / "eval.xml").getroot().findall("testsuite")[1]
    # c1, c3 and c4 errored (c3 in every repeat); c5's repeat without a verdict fails, as do
    # the repeats c5 and c6 failed.
    assert (suite.get("tests"), suite.get("errors"), suite.get("failures")) == ("6", "3", "2")
    c1 = suite.find("testcase[@name='c1']/error")
    assert c1 is not None
    assert c1.get("type") == "RuntimeError"
    message = "1 of 3 repeats errored (repeat 2: the model timed out on q1 (call 2))"
    assert c1.get("message") == message
    assert c1.text == f"oloproof inspect {run_id} --case c1"
    c5 = suite.find("testcase[@name='c5']/failure")
    assert c5 is not None
    assert c5.get("message") == (
        "answer_correct: missing in 1 of 3 repeats; shaped: missing in 1 of 3 repeats"
    )
    c6 = suite.find("testcase[@name='c6']/failure")
    assert c6 is not None and c6.get("message") == "answer_correct: failed in 1 of 3 repeats"


def test_exports_carry_each_case_s_errored_and_missing_repeats(tmp_path: Path) -> None:
    root = flaky_repeats_project(tmp_path)
    run_id = _repeated_run(root)
    for fmt in ("csv", "jsonl", "parquet"):
        done = oloproof("export", run_id, "--format", fmt, "--output", fmt, cwd=root)
        assert done.code == 0, done.err
    read = {
        "csv": pd.read_csv,
        "jsonl": lambda p: pd.read_json(p, lines=True),
        "parquet": pd.read_parquet,
    }
    for fmt, reader in read.items():
        cases = reader(root / fmt / f"cases.{fmt}").set_index("case_id")
        assert list(cases["errored_repeats"]) == [1, 0, 3, 1, 0, 0], fmt
        assert set(cases["repeats"]) == {3}, fmt
        verdicts = reader(root / fmt / f"verdicts.{fmt}")
        shaped = verdicts[verdicts.criterion == "shaped"].set_index("case_id")
        assert list(shaped["missing_repeats"]) == [1, 0, 3, 1, 1, 0], fmt
        assert list(verdicts.columns)[9:11] == ["observed_repeats", "missing_repeats"], fmt
    # The bundle holds every repeat, with the error of the one that errored.
    c1 = bundle_cases(root, run_id)[0]
    assert [r["status"] for r in c1["repeats"]] == ["ok", "errored", "ok"]
    assert c1["repeats"][1]["error"]["message"] == "the model timed out on q1 (call 2)"
