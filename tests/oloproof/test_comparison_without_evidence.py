"""A comparison gate with nothing under it blocks whatever ``block_on`` lets through
(comparison schema 5).

The CLI tests (tests/cli/test_unpaired_comparisons_said.py) run a candidate that paired no case
and a rule whose metric had no pair; these pin the rule itself on built comparisons, including
what they do not reach: a rule on a metric only one run measures (``metric_not_compared``), a
FAIL beside it, and a run that pairs cases but gives a judge's metric no verdict.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from oloproof.compare import build_comparison
from oloproof.config import ComparePolicy
from oloproof.pairing import (
    EVALUATOR_CHANGED,
    METRIC_NOT_COMPARED,
    NO_PAIRED_CASES,
    compared_on_nothing,
)
from oloproof.report import comparison_evidence_line
from oloproof.stored_runs import StoredRun

PASS, FAIL = {"s": "pass"}, {"s": "fail"}
ALONE = "that alone blocks the gate, whatever block_on lists"


def stored(run_id: str, criteria: Sequence[str]) -> StoredRun:
    body: Any = {
        "run_id": run_id,
        "evaluators": [
            {"criterion": c, "kind": "pass_fail", "spec": {"type": c}} for c in criteria
        ],
        "slices": [],
        "min_slice_support": 1,
    }
    return StoredRun(run_id, "sha256:" + "0" * 64, body)


def result(case_id: str, verdicts: Mapping[str, Any], status: str = "ok") -> dict[str, Any]:
    return {"case_id": case_id, "input_key": case_id, "status": status, "verdicts": verdicts}


def compared(
    cand: Sequence[dict[str, Any]],
    base: Sequence[dict[str, Any]],
    rules: Sequence[tuple[str, str, float]],
    *,
    criteria: tuple[Sequence[str], Sequence[str]] = (["a"], ["a"]),
    block_on: Sequence[str] = ("FAIL",),
) -> dict[str, Any]:
    """A comparison under ``rules`` (id, metric, non-inferiority margin in points)."""
    policy = ComparePolicy.model_validate(
        {
            "version": 1,
            "block_on": list(block_on),
            "rules": [
                {"id": i, "metric": m, "non_inferiority": {"margin": margin}}
                for i, m, margin in rules
            ],
        }
    )
    return build_comparison(
        stored("run_c", criteria[0]),
        cand,
        stored("run_b", criteria[1]),
        base,
        policy=policy,
        policy_path=None,
    )


@pytest.mark.parametrize(
    ("reasons", "paired", "nothing"),
    [
        (["interval_overlaps_margin"], 0, True),  # no case paired: no rule saw a pair
        ([], 0, True),
        (["interval_above_margin", NO_PAIRED_CASES], 4, True),  # one rule saw none
        ([METRIC_NOT_COMPARED], 4, True),  # its metric is in one run only
        (["judge_not_calibrated"], 4, False),  # decided by the judge's standing, as a run's
        (["interval_above_margin", EVALUATOR_CHANGED], 4, True),  # no pair measured alike
    ],
)
def test_what_compares_on_nothing(reasons: list[str], paired: int, nothing: bool) -> None:
    assert compared_on_nothing(reasons, paired) is nothing


def test_a_rule_on_a_metric_one_run_lacks_blocks_whatever_block_on_lists() -> None:
    cases = [result(f"c{i}", {"a": PASS, "b": PASS}) for i in range(300)]
    body = compared(
        cases,
        cases,
        [("a-not-worse", "a", 5), ("b-not-worse", "b", 5)],
        criteria=(["a"], ["a", "b"]),
    )
    assert [(d["outcome"], d["reason"]) for d in body["decisions"]] == [
        ("PASS", "interval_above_margin"),
        ("INSUFFICIENT_EVIDENCE", METRIC_NOT_COMPARED),
    ]
    assert body["gate"] == {"blocked": True, "exit_code": 3}
    assert comparison_evidence_line(body) == (
        f"Rule b-not-worse observed no pair, so nothing decided it; {ALONE}"
    )


def test_a_failed_rule_still_says_exit_1() -> None:
    base = [result(f"c{i}", {"a": PASS}) for i in range(300)]
    cand = [result(f"c{i}", {"a": FAIL}) for i in range(300)]
    body = compared(
        cand, base, [("a-not-worse", "a", 5), ("b-not-worse", "b", 5)], criteria=(["a"], ["a", "b"])
    )
    assert body["gate"] == {"blocked": True, "exit_code": 1}
    # The FAIL blocks on its own: the line names the rule with nothing under it, no more.
    assert (
        comparison_evidence_line(body) == "Rule b-not-worse observed no pair, so nothing decided it"
    )


def test_unpaired_cases_are_counted_in_the_line() -> None:
    base = [result("c0", {"a": PASS}), result("c1", {"a": PASS}, status="errored")]
    cand = [result("c1", {"a": PASS}), result("c2", {"a": PASS})]
    body = compared(cand, base, [("a-not-worse", "a", 5)])
    assert body["paired_cases"] == 0
    assert body["gate"] == {"blocked": True, "exit_code": 3}
    assert comparison_evidence_line(body) == (
        "No case was paired: 1 only in candidate, 1 only in baseline and 1 errored in baseline, "
        f"so no rule had a pair to decide on; {ALONE}"
    )

    nothing = compared([], [], [("a-not-worse", "a", 5)])
    assert comparison_evidence_line(nothing) == (
        f"No case was paired: neither run holds a case, so no rule had a pair to decide on; {ALONE}"
    )


def test_an_ordinary_comparison_says_nothing_more() -> None:
    cases = [result(f"c{i}", {"a": PASS}) for i in range(300)]
    body = compared(cases, cases, [("a-not-worse", "a", 5)])
    assert body["gate"] == {"blocked": False, "exit_code": 0}
    assert comparison_evidence_line(body) is None
