"""A rule that repeats without a verdict decide says so, through the real CLI.

The defect: 20 cases run with ``--repeats 3``; ten of them error on their second repeat and pass
the other two, the other ten pass all three. On their judged repeats every case is a perfect
1.000 and a ``min: 0.7`` rule would PASS; counted against the run, the ten repeats without a
verdict take the interval's lower bound below 0.7, and the rule was rightly
INSUFFICIENT_EVIDENCE, but with the interval's ordinary reason
(``interval_overlaps_threshold``) and nothing recorded of what the judged repeats show: the gate
read as if the judged executions fell short of the floor. And a ``kind: observed_count`` rule
with ``max_failures: 0`` PASSed, counting a case that passed its two judged repeats as one that
never fails, when its errored repeat may have failed. Now both rules are
``missing_cases_decide``, record ``observed_only`` and how many repeats decide them, and the
report says so in terms of repeats. A decision recorded before (schema 2) still re-derives as it
was made.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.support import (
    FLAKY_APP,
    Result,
    decision_recorded_at,
    oloproof,
    stale_when_current,
    write_project,
)

from oloproof import events as ev
from oloproof.store import open_project_ledger

# Ten cases error on their second call and pass the others; ten pass every call.
PATTERNS = {f"q{i}": "pep" if i < 10 else "ppp" for i in range(20)}

CONFIG = """\
system: {name: flaky, version: "1", callable: "app:answer"}
dataset: cases.jsonl
evaluators:
  - {type: contains, criterion: answer_correct, field: answer, expected_field: answer}
policy: policy.yaml
concurrency: 1
"""


def policy(floor: float, max_failures: int) -> str:
    return (
        "version: 1\nrules:\n"
        f"  - {{id: floor, metric: answer_correct, min: {floor}}}\n"
        "  - {id: never, metric: answer_correct, kind: observed_count, "
        f"max_failures: {max_failures}}}\n"
    )


def project(dest: Path, floor: float = 0.7, max_failures: int = 0) -> Path:
    return write_project(
        dest / "p",
        app=FLAKY_APP.format(patterns=PATTERNS),
        config=CONFIG,
        policy=policy(floor, max_failures),
        cases=[
            {"id": f"c{q[1:]}", "input": {"question": q}, "expected": {"answer": "yes"}}
            for q in PATTERNS
        ],
    )


def rules(done: Result) -> dict[str, tuple[str, str]]:
    """The rules table of a report, as rule id -> (decision, reason)."""
    found = {}
    for line in done.lines:
        cells = [c.strip() for c in line.strip("│").split("│")]
        if line.startswith("│") and cells[0] in ("floor", "never"):
            found[cells[0]] = (cells[2], cells[3])
    return found


def decision_address(root: Path) -> str:
    with open_project_ledger(root, create=False) as ledger:
        ((address, _),) = list(ledger.events(ev.DECISION))
    return address


FLOOR_LINE = (
    "floor: 10 repeats without a verdict decide it: on the observed cases alone, on their "
    "judged repeats, it would be PASS (interval_above_threshold)"
)
NEVER_LINE = (
    "never: 10 repeats without a verdict decide it: on the observed cases alone, on their "
    "judged repeats, it would be PASS (observed_failures_within_limit)"
)


def test_repeats_without_a_verdict_that_decide_a_rule_say_so(tmp_path: Path) -> None:
    root = project(tmp_path)
    done = oloproof("run", "--repeats", "3", cwd=root)
    assert done.code == 3, done.out + done.err
    # Was: floor interval_overlaps_threshold, never PASS observed_failures_within_limit.
    assert rules(done) == {
        "floor": ("INSUFFICIENT_EVIDENCE", "missing_cases_decide"),
        "never": ("INSUFFICIENT_EVIDENCE", "missing_cases_decide"),
    }
    below = done.lines.index(next(line for line in done.lines if line.startswith("└")))
    assert done.lines[below + 1 : below + 4] == [FLOOR_LINE, NEVER_LINE, ""]
    assert (
        "answer_correct: 10 repeats of observed cases have no verdict; the interval counts them "
        "as failing for the lower bound and passing for the upper"
    ) in done.lines

    run_id = done.lines[0].split()[1]
    again = oloproof("inspect", run_id, cwd=root)
    assert rules(again) == rules(done)
    assert FLOOR_LINE in again.lines and NEVER_LINE in again.lines

    report = json.loads(oloproof("inspect", run_id, "--json", cwd=root).out)
    floor, never = report["rules"]
    observed = floor["detail"]["observed_only"]
    # The judged repeats alone clear the floor; with the errored ones failing, it does not.
    assert observed["outcome"] == "PASS" and observed["reason"] == "interval_above_threshold"
    assert observed["lower"] >= 0.7 > floor["detail"]["lower"]
    assert floor["detail"]["missing_repeats"] == 10 and "missing" not in floor["detail"]
    assert never["detail"] == {
        "failures": 0,
        "observed": 20,
        "max_failures": 0,
        "passes_unconfirmed": 10,
        "missing_repeats": 10,
        "observed_only": {"outcome": "PASS", "reason": "observed_failures_within_limit"},
    }

    stored = json.loads(oloproof("inspect", decision_address(root), "--json", cwd=root).out)
    assert stored["schema"] == ev.SCHEMAS[ev.DECISION]  # today's, which counts them
    assert stored["body"]["counts_missing_repeats"] is True
    assert stored["body"]["rules"][0]["reason"] == "missing_cases_decide"
    assert stored["body"]["rules"][1]["detail"]["passes_unconfirmed"] == 10
    assert oloproof("verify", cwd=root).code == 0


def test_repeats_without_a_verdict_that_decide_nothing_leave_the_reason(tmp_path: Path) -> None:
    # A floor both intervals clear, and a limit that holds every case that may hide a failure.
    root = project(tmp_path, floor=0.5, max_failures=10)
    done = oloproof("run", "--repeats", "3", cwd=root)
    assert done.code == 0, done.out + done.err
    assert rules(done) == {
        "floor": ("PASS", "interval_above_threshold"),
        "never": ("PASS", "observed_failures_within_limit"),
    }
    assert not [line for line in done.lines if "decide it" in line]
    run_id = done.lines[0].split()[1]
    floor, never = json.loads(oloproof("inspect", run_id, "--json", cwd=root).out)["rules"]
    assert floor["detail"]["missing_repeats"] == 10
    assert floor["detail"]["observed_only"]["outcome"] == "PASS"
    assert (never["detail"]["passes_unconfirmed"], never["detail"]["missing_repeats"]) == (10, 10)
    assert "observed_only" not in never["detail"]
    # One case fewer than may hide a failure: the count cannot show the limit holds.
    (root / "policy.yaml").write_text(policy(0.5, 9))
    tighter = oloproof("run", "--repeats", "3", "--no-cache", cwd=root)
    assert tighter.code == 3, tighter.out + tighter.err
    assert rules(tighter)["never"] == ("INSUFFICIENT_EVIDENCE", "missing_cases_decide")
    assert oloproof("verify", cwd=root).code == 0


def _as_schema_2(body: dict[str, Any]) -> dict[str, Any]:
    """The decision the code before schema 3 recorded for this run: the floor's ordinary reason
    with nothing of its judged repeats, and the count PASSed."""
    later = ("counts_missing_repeats", "missing_any_value")
    old = {key: value for key, value in body.items() if key not in later}
    floor, never = old["rules"]
    floor["reason"] = "interval_overlaps_threshold"
    # Before schema 5 a case's unjudged repeats were read by the betting interval alone (its
    # upper bound is 1 either way; today Clopper-Pearson's, of every repeat passing).
    floor["detail"]["method"] = "betting"
    del floor["detail"]["observed_only"], floor["detail"]["missing_repeats"]
    never.update(outcome="PASS", reason="observed_failures_within_limit")
    never["detail"] = {"failures": 0, "observed": 20, "max_failures": 0}
    return old


def test_a_decision_of_schema_2_re_derives_as_it_was_made(tmp_path: Path) -> None:
    root = project(tmp_path)
    done = oloproof("run", "--repeats", "3", cwd=root)
    assert done.code == 3, done.out + done.err
    old, body, refs = decision_recorded_at(root, 2, _as_schema_2)
    # Read through its upcaster: decided by the rule of its day.
    raw = json.loads(oloproof("inspect", old, "--json", cwd=root).out)
    assert raw["body"]["counts_missing_repeats"] is False
    assert [(r["outcome"], r["reason"]) for r in raw["body"]["rules"]] == [
        ("INSUFFICIENT_EVIDENCE", "interval_overlaps_threshold"),
        ("PASS", "observed_failures_within_limit"),
    ]
    verified = oloproof("verify", cwd=root)
    assert verified.code == 0, verified.out + verified.err
    assert "re-derived 2 decision(s)" in verified.out

    # The same body recorded at today's schema claims a rule it was not decided by.
    current = {**body, "counts_missing_repeats": True, "missing_any_value": False}
    stale = stale_when_current(root, current, refs)
    # Today's rule counts the ten cases with an errored repeat against the count.
    assert (
        "observed_only: stored (absent), re-derived {'outcome': 'PASS', 'reason': "
        "'observed_failures_within_limit'}"
    ) in stale
