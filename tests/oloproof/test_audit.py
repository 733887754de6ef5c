"""``oloproof.audit``: every stored summary re-derives, and a forged one is named.

Runs are real (the support example planned from its oloproof.yaml, executed into a real ledger
in a temp folder); forgeries are written through the library, as a second writer would.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.support import copy_example

from ledger import Event, Ledger, Problem
from oloproof import events as ev
from oloproof.audit import AuditCounts, application_checks, differences_between, verdict_copy
from oloproof.compare import compare_runs
from oloproof.diagnosis import diagnose
from oloproof.metrics import case_results
from oloproof.runner import execute_run, plan_run
from oloproof.store import open_project_ledger
from oloproof.stored_runs import load_run

GOLD = {"intervention": "gold-context", "criterion": "answer_correct"}


@pytest.fixture
def project(tmp_path: Path) -> Iterator[tuple[Path, Ledger]]:
    root = copy_example("support_rag", tmp_path)
    ledger = open_project_ledger(root)
    try:
        yield root, ledger
    finally:
        ledger.close()


def run(root: Path, ledger: Ledger, **options: Any) -> str:
    outcome = asyncio.run(execute_run(ledger, plan_run(root / "oloproof.yaml"), **options))
    return outcome.run_id


def stale(ledger: Ledger) -> list[tuple[str, str | None, str]]:
    return [(p.kind, p.address, p.detail) for p in application_checks(ledger)]


def forge(ledger: Ledger, address: str, edit: Any) -> str:
    """Store a copy of the event at ``address`` with ``edit(body)`` applied; its address."""
    event = ledger.get(address)
    body = json.loads(json.dumps(event.body))
    edit(body)
    return ledger.put(Event(event.type, event.schema, body, event.refs))


def second_result(ledger: Ledger, forged: str) -> tuple[str, str, str]:
    """The problem a forged copy of a case result is besides its own: a second result for
    its case in its run."""
    body = ledger.get(forged).body
    detail = (
        f"case_result: {body['run_id']} already holds a result for case {body['case_id']!r}; "
        "its reports count the first"
    )
    return ("StaleSummary", forged, detail)


def first(ledger: Ledger, kind: str) -> str:
    address, _ = next(iter(ledger.events(kind)))
    return address


def passing_result(ledger: Ledger, run_id: str) -> tuple[str, dict[str, Any]]:
    for address, body in case_results(ledger, run_id):
        if body["verdicts"]["answer_correct"] == {"s": "pass"}:
            return address, dict(body)
    raise AssertionError("no passing case")


# -- clean ledgers ------------------------------------------------------------------------


def test_runs_comparisons_and_diagnoses_of_the_example_all_re_derive(
    project: tuple[Path, Ledger],
) -> None:
    root, ledger = project
    baseline = run(root, ledger)
    candidate = run(root, ledger)
    compare_runs(ledger, candidate, baseline, policy_path=root / "compare.yaml")
    compare_runs(ledger, candidate, baseline)
    diagnose(ledger, baseline, **GOLD)
    diagnose(ledger, baseline, intervention="top-k", top_k=4, criterion="answer_correct")
    counts = AuditCounts()
    assert list(application_checks(ledger, counts)) == []
    # Two parent runs of 13 cases, four child runs of the 4 selected ones.
    assert counts.to_dict() == {
        "case_results": 2 * 13 + 4 * 4,
        "decisions": 2,
        "diagnoses": 2,
        "comparisons": 2,
    }


def test_each_decision_of_a_resumed_run_re_derives_from_its_own_cases(
    project: tuple[Path, Ledger],
) -> None:
    root, ledger = project
    plan = plan_run(root / "oloproof.yaml")
    # A run made on its first 5 cases, then resumed over the rest: two decisions, on 5 and 13.
    first_part = asyncio.run(execute_run(ledger, plan, cases=plan.dataset.cases[:5]))
    stored = load_run(ledger, first_part.run_id)
    resume = (stored.run_id, stored.address, stored.body)
    asyncio.run(execute_run(ledger, plan_run(root / "oloproof.yaml"), resume=resume))
    decisions = [e.body for _, e in ledger.events(ev.DECISION)]
    assert len(decisions) == 2 and decisions[0] != decisions[1]
    counts = AuditCounts()
    assert list(application_checks(ledger, counts)) == []
    assert counts.decisions == 2


# -- verdict copies -----------------------------------------------------------------------


def test_a_verdict_copy_that_disagrees_with_its_judgment_is_named(
    project: tuple[Path, Ledger],
) -> None:
    root, ledger = project
    run_id = run(root, ledger)
    address, body = passing_result(ledger, run_id)
    judgment = body["judgments"]["answer_correct"]
    forged = forge(ledger, address, lambda b: b["verdicts"].update(answer_correct={"s": "fail"}))
    assert stale(ledger) == [
        (
            "StaleSummary",
            forged,
            f"case_result: verdict answer_correct: stored {{'s': 'fail'}}, judgment {judgment} "
            "says {'s': 'pass'}",
        ),
        second_result(ledger, forged),
    ]


def test_a_judgment_pointer_to_the_wrong_event_is_named(project: tuple[Path, Ledger]) -> None:
    root, ledger = project
    run_id = run(root, ledger)
    address, body = passing_result(ledger, run_id)
    other = body["judgments"]["hit_rate_at_2"]
    forged = forge(ledger, address, lambda b: b["judgments"].update(answer_correct=other))
    (kind, where, detail), repeat = stale(ledger)
    assert (kind, where) == ("StaleSummary", forged) and repeat == second_result(ledger, forged)
    assert f"verdict answer_correct: {other} is not a judgment of 'answer_correct'" in detail
    assert "is not among its links" not in detail  # it is linked: the case points at it too


def test_a_verdict_with_no_judgment_behind_it_is_named(project: tuple[Path, Ledger]) -> None:
    root, ledger = project
    run_id = run(root, ledger)
    address, _ = passing_result(ledger, run_id)
    forged = forge(ledger, address, lambda b: b["judgments"].pop("answer_correct"))
    assert stale(ledger) == [
        (
            "StaleSummary",
            forged,
            "case_result: verdict answer_correct: 'pass' with no judgment behind it",
        ),
        second_result(ledger, forged),
    ]


def test_verdict_copy_keeps_a_value_for_graded_and_a_reason_for_unobserved() -> None:
    assert verdict_copy("pass", None, "ok") == {"s": "pass"}
    assert verdict_copy("value", 0.5, "partly") == {"s": "value", "v": 0.5}
    assert verdict_copy("missing", None, "judge_failed") == {"s": "missing", "r": "judge_failed"}
    assert verdict_copy("excluded", None, None) == {"s": "excluded"}


# -- decisions ----------------------------------------------------------------------------


def test_a_decision_with_a_wrong_gate_is_named(project: tuple[Path, Ledger]) -> None:
    root, ledger = project
    run(root, ledger)
    decision = first(ledger, ev.DECISION)
    gate = ledger.get(decision).body["gate"]

    def flip(body: dict[str, Any]) -> None:
        body["gate"] = {"blocked": not gate["blocked"], "exit_code": 0 if gate["blocked"] else 1}

    forged = forge(ledger, decision, flip)
    ((kind, where, detail),) = stale(ledger)
    assert (kind, where) == ("StaleSummary", forged)
    assert detail.startswith(f"decision: gate.blocked: stored {not gate['blocked']!r}, ")


def test_a_decision_whose_links_name_no_run_end_is_named(project: tuple[Path, Ledger]) -> None:
    root, ledger = project
    run(root, ledger)
    event = ledger.get(first(ledger, ev.DECISION))
    forged = ledger.put(Event(event.type, event.schema, event.body, event.refs[:1]))
    ((kind, where, detail),) = stale(ledger)
    assert (kind, where) == ("StaleSummary", forged)
    assert "its links do not name run" in detail


# -- comparisons --------------------------------------------------------------------------


def test_a_comparison_with_a_wrong_estimate_is_named(project: tuple[Path, Ledger]) -> None:
    root, ledger = project
    baseline = run(root, ledger)
    candidate = run(root, ledger)
    compared = compare_runs(ledger, candidate, baseline, policy_path=root / "compare.yaml")

    def inflate(body: dict[str, Any]) -> None:
        body["metrics"][0]["difference"]["estimate"] = 0.25

    forged = forge(ledger, compared.address, inflate)
    ((kind, where, detail),) = stale(ledger)
    assert (kind, where) == ("StaleSummary", forged)
    assert detail == "comparison: metrics[0].difference.estimate: stored 0.25, re-derived 0.0"


# -- helpers ------------------------------------------------------------------------------


def test_differences_name_the_path_of_each_change() -> None:
    stored = {"a": 1, "b": [{"c": 2}, {"c": 3}], "d": [1]}
    derived = {"a": 1, "b": [{"c": 2}, {"c": 4}], "d": [1, 2], "e": None}
    assert differences_between(stored, derived) == [
        "b[1].c: stored 3, re-derived 4",
        "d: stored [1], re-derived [1, 2]",
        "e: stored (absent), re-derived None",
    ]


def test_problems_print_the_way_verify_lists_them() -> None:
    problem = Problem("StaleSummary", "sha256:ab", "decision: gate.blocked: stored True")
    assert str(problem) == "StaleSummary sha256:ab: decision: gate.blocked: stored True"


def test_an_interval_a_run_end_stored_that_does_not_recompute_is_named(
    project: tuple[Path, Ledger],
) -> None:
    root, ledger = project
    run(root, ledger)
    end = first(ledger, ev.RUN_END)
    entries = ledger.get(end).body["intervals"]
    assert {entry[0] for entry in entries} == {"clopper-pearson", "betting"}
    assert not stale(ledger)
    at = next(i for i, entry in enumerate(entries) if entry[-2] > 0)

    def halve(body: dict[str, Any]) -> None:
        body["intervals"][at][-2] /= 2

    forged = forge(ledger, end, halve)
    ((kind, where, detail),) = stale(ledger)
    assert (kind, where) == ("StaleSummary", forged)
    assert detail.startswith(f"run_end: intervals: {entries[at][0]} ")
    assert f"stored ({entries[at][-2] / 2}, {entries[at][-1]})" in detail
