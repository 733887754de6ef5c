"""A gate with nothing under it blocks whatever ``block_on`` lets through (decision schema 4).

The CLI tests (tests/cli/test_unanswered_runs_said.py) run the two ways a run shows nothing;
these pin the rule itself, including the case they do not reach: rules on an uncalibrated
judge (MANUAL_REVIEW, never ``no_observed_cases``) over a run whose every case errored.
"""

from __future__ import annotations

import pytest

from oloproof.policy import EXIT_BLOCKED, EXIT_FAIL, EXIT_PASS, RuleDecision, gate
from oloproof.results import NO_OBSERVED_CASES, stands_on_nothing


def _rule(outcome: str, reason: str) -> RuleDecision:
    return RuleDecision("r", "m", outcome, reason)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("reasons", "answered", "nothing"),
    [
        (["judge_not_calibrated"], 0, True),  # every case errored: no rule saw a case
        ([], 0, True),  # no case ran at all
        (["interval_above_threshold", NO_OBSERVED_CASES], 4, True),  # one rule saw none
        (["interval_above_threshold", "interval_overlaps_threshold"], 4, False),
    ],
)
def test_what_stands_on_nothing(reasons: list[str], answered: int, nothing: bool) -> None:
    assert stands_on_nothing(reasons, answered) is nothing


def test_a_gate_with_nothing_under_it_blocks_whatever_block_on_lists() -> None:
    manual = [_rule("MANUAL_REVIEW", "judge_not_calibrated")]
    assert gate(manual, ["FAIL"]).exit_code == EXIT_PASS  # schema 3 and before
    blocked = gate(manual, ["FAIL"], unevidenced=True)
    assert (blocked.label, blocked.exit_code) == ("BLOCK", EXIT_BLOCKED)


def test_a_failed_rule_still_says_exit_1() -> None:
    decisions = [
        _rule("FAIL", "interval_below_threshold"),
        _rule("INSUFFICIENT_EVIDENCE", NO_OBSERVED_CASES),
    ]
    assert gate(decisions, ["FAIL"], unevidenced=True).exit_code == EXIT_FAIL
