"""With `--repeats K`, a repeat that errored (or that a judge gave no verdict) never hides behind
its case's combined verdicts: `runs` and the report say how many repeats errored, through the
real CLI."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support import oloproof, runs_fields, write_project

# Each question's calls, in order: p answers right, f wrong, e raises, s answers a number (which
# the `shaped` evaluator cannot judge: its schema's second branch names nothing).
PATTERNS = {"q1": "pep", "q2": "ppp", "q3": "eee", "q4": "epp", "q5": "psp", "q6": "ppf"}

APP = """
from oloproof import system

PATTERNS = {patterns!r}
CALLS = {{}}


@system(name="flaky", version="1")
def answer(case):
    question = case["question"]
    n = CALLS.get(question, 0)
    CALLS[question] = n + 1
    step = PATTERNS[question][n % 3]
    if step == "e":
        raise RuntimeError(f"the model timed out on {{question}} (call {{n + 1}})")
    return {{"answer": {{"p": "yes", "f": "no", "s": 5}}[step]}}
"""

CONFIG = """\
system: {name: flaky, version: "1", callable: "app:answer"}
dataset: cases.jsonl
evaluators:
  - {type: contains, criterion: answer_correct, field: answer, expected_field: answer}
  - {type: json_schema, criterion: shaped, field: answer,
     schema: {anyOf: [{type: string}, {"$ref": "#/$defs/nope"}]}}
policy: policy.yaml
concurrency: 1
"""

POLICY = "version: 1\nrules:\n  - {id: floor, metric: answer_correct, min: 0.05}\n"


def _project(tmp_path: Path) -> Path:
    return write_project(
        tmp_path / "flaky",
        app=APP.format(patterns=PATTERNS),
        config=CONFIG,
        policy=POLICY,
        cases=[
            {"id": f"c{q[1:]}", "input": {"question": q}, "expected": {"answer": "yes"}}
            for q in PATTERNS
        ],
    )


def _repeated_run(root: Path, *args: str) -> str:
    done = oloproof("run", "--repeats", "3", *args, cwd=root)
    assert done.code in (0, 3), done.out + done.err
    return done.lines[0].split()[1]


def test_runs_and_the_report_count_the_errored_repeats(tmp_path: Path) -> None:
    root = _project(tmp_path)
    done = oloproof("run", "--repeats", "3", cwd=root)
    run_id = done.lines[0].split()[1]
    # c3 errored in every repeat (a missing case); c1 and c4 in one repeat of three each.
    assert done.lines[0].endswith("[DECIDED/PARTIAL]")
    assert done.lines[2:4] == [
        f"1 of 6 cases errored: RuntimeError: the model timed out on q3 (call 1) (first: c3) · "
        f"oloproof inspect {run_id} --failures",
        f"5 of 18 repeats errored: RuntimeError: the model timed out on q1 (call 2) (1, first: "
        f"c1); RuntimeError: the model timed out on q3 (call 2) (1, first: c3); 3 more kinds · "
        f"oloproof inspect {run_id} --failures",
    ]
    fields = runs_fields(root, run_id)
    assert fields[3] == "PARTIAL"
    assert fields[5] == "5 of 6 observed · 1 missing (1 errored) · 5 of 18 repeats errored"
    row = json.loads(oloproof("runs", "--json", cwd=root).out)[0]
    assert (row["repeats"], row["repeats_errored"]) == (3, 5)
    # A run without repeats lists as it always did, in its line and its JSON.
    plain = oloproof("run", cwd=root)
    plain_id = plain.lines[0].split()[1]
    assert runs_fields(root, plain_id)[5] == "4 of 6 observed · 2 missing (2 errored)"
    assert "repeats" not in json.loads(oloproof("runs", "--json", cwd=root).out)[0]


def test_runs_counts_the_repeats_of_a_run_recorded_before_they_were_counted(
    tmp_path: Path,
) -> None:
    from oloproof import events as ev
    from oloproof.store import open_project_ledger

    root = _project(tmp_path)
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
        "5 of 6 observed · 1 missing (1 errored) · 5 of 18 repeats errored",
    )
