"""The observed cases of a repeated run are read, alone, as their judged repeats say, through
the real CLI.

The defect: 20 cases run with ``--repeats 3``; one errors on its second repeat and passes the
other two, the others pass all three. On their judged repeats every case passed: 20 of 20,
whose Clopper-Pearson interval (from 83.2%) clears a ``min: 0.8`` floor. The repeat without a
verdict rightly kept the rule from PASS (with it failing, that case is worth 2/3), but the
observed cases alone were read by the betting interval, as if a case passing 2 of its 2 judged
repeats were a graded value, from 76.5%: below the floor too, so the rule read
``interval_overlaps_threshold``, as if the judged executions fell short of it, and nothing said
the missing repeat decided it. Now the observed cases alone are a proportion whenever their
judged repeats make every case 0 or 1; the rule is ``missing_cases_decide``, its
``observed_only`` PASS; the decision itself and its interval are as before. A decision an
earlier release recorded so (schema 7) re-derives under ``verify`` as it was made.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.support import (
    FLAKY_APP,
    earlier_release,
    oloproof,
    stored_event,
    write_project,
)

from oloproof import events as ev
from oloproof.stats import clopper_pearson

PATTERNS = {f"q{i}": "pep" if i == 0 else "ppp" for i in range(20)}
CONFIG = """\
system: {name: flaky, version: "1", callable: "app:answer"}
dataset: cases.jsonl
evaluators:
  - {type: contains, criterion: answer_correct, field: answer, expected_field: answer}
policy: policy.yaml
concurrency: 1
"""
FLOOR = "version: 1\nrules:\n  - {id: floor, metric: answer_correct, min: 0.8}\n"
FLOOR_ROW = "│ floor │ answer_correct │ INSUFFICIENT_EVIDENCE │ missing_cases_decide │"
FLOOR_LINE = (
    "floor: 1 repeat without a verdict decides it: on the observed cases alone, on their judged "
    "repeats, it would be PASS (interval_above_threshold)"
)
# Decision schema 7 and before: the observed cases alone read by the betting interval.
EARLIER_RELEASE = earlier_release({ev.DECISION: 7})


def project(dest: Path) -> Path:
    return write_project(
        dest / "p",
        app=FLAKY_APP.format(patterns=PATTERNS),
        config=CONFIG,
        policy=FLOOR,
        cases=[
            {"id": f"c{q[1:]}", "input": {"question": q}, "expected": {"answer": "yes"}}
            for q in PATTERNS
        ],
    )


def test_a_missing_repeat_that_decides_a_floor_says_so(tmp_path: Path) -> None:
    root = project(tmp_path)
    done = oloproof("run", "--repeats", "3", "--json", cwd=root)
    assert done.code == 3, done.out + done.err
    (floor,) = json.loads(done.out)["rules"]
    # Was: interval_overlaps_threshold, observed_only from the betting interval (0.765).
    assert (floor["outcome"], floor["reason"]) == ("INSUFFICIENT_EVIDENCE", "missing_cases_decide")
    observed = floor["detail"]["observed_only"]
    assert (observed["outcome"], observed["reason"]) == ("PASS", "interval_above_threshold")
    assert observed["lower"] == clopper_pearson(20, 20).lower
    # The decision rests on the interval that counts the repeat failing, as before.
    assert floor["detail"]["lower"] < 0.8 and floor["detail"]["missing_repeats"] == 1

    run_id = json.loads(done.out)["run_id"]
    shown = oloproof("inspect", run_id, cwd=root)
    assert FLOOR_ROW in shown.lines and FLOOR_LINE in shown.lines, shown.out
    assert "Gate: BLOCK (exit 3)" in shown.lines
    # One repeat is said as one (it read "1 repeats ... have no verdict").
    assert (
        "answer_correct: 1 repeat of observed cases has no verdict; the interval counts it as "
        "failing for the lower bound and passing for the upper"
    ) in shown.lines, shown.out
    verified = oloproof("verify", cwd=root)
    assert verified.code == 0, verified.out + verified.err


def test_what_an_earlier_release_decided_verifies_as_it_was_made(tmp_path: Path) -> None:
    root = project(tmp_path)
    done = oloproof("run", "--repeats", "3", "--json", cwd=root, command=EARLIER_RELEASE)
    assert done.code == 3, done.out + done.err
    schema, body = stored_event(root, ev.DECISION)
    assert (schema, body["observed_as_judged"]) == (7, False)
    (floor,) = body["rules"]
    assert floor["reason"] == "interval_overlaps_threshold"
    assert floor["detail"]["observed_only"]["outcome"] == "INSUFFICIENT_EVIDENCE"
    verified = oloproof("verify", cwd=root)
    assert verified.code == 0, verified.out + verified.err
    assert "re-derived 1 decision(s)" in verified.out
    # Its report reads the decision it recorded.
    shown = oloproof("inspect", json.loads(done.out)["run_id"], cwd=root)
    assert "interval_overlaps_threshold" in shown.out and FLOOR_LINE not in shown.lines
