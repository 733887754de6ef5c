"""A judge its calibration does not show better than chance decides no rule, through the CLI.

The probe: the judge_gate example's judge replaced by one that passes every answer, calibrated
(20 of 20 human passes passed, 0 of 20 human fails failed), and a rule `min: 0.60` without
`judge:` minimums: `Gate: PASS (exit 0)` on a metric of 100%, with the corrected row beside it
`— [0.0%, 100.0%]`. A rule without minimums asked only for one human pass and one human fail
among the labels. Now the lower bounds of sensitivity and specificity must add up to more than
1 (both hold together at the policy's level), whatever minimums the rule sets, in the release
gate and in the comparison gate; decisions and comparisons recorded before re-derive as made.
The bounds are checked against scipy's exact binomial interval.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from scipy.stats import binomtest
from tests.support import (
    Result,
    earlier_release,
    oloproof,
    serving_judge_gate,
    stored_event,
    verified_as_made,
)

from oloproof import events as ev
from oloproof.testing import ScriptedJudgeServer, answer

ENV = {"JUDGE_GATE_KEY": "test-key"}
NO_MINIMUMS = "version: 1\nrules:\n  - {id: grounded, metric: groundedness, min: 0.60}\n"
# A minimum this judge clears on its own: the rates together still show nothing.
ONE_MINIMUM = (
    "version: 1\nrules:\n  - {id: grounded, metric: groundedness, min: 0.60,\n"
    "     judge: {min_sensitivity: 0.80}}\n"
)
COMPARE = (
    "version: 1\nrules:\n"
    "  - {id: grounded-not-worse, metric: groundedness, non_inferiority: {margin: 50}}\n"
)

# An earlier release (decision schema 5, comparison schema 6): today's check switched off, each
# stored at its schema without the flag.
EARLIER_RELEASE = earlier_release({ev.DECISION: 5, ev.COMPARISON: 6})


def _always_pass(server: ScriptedJudgeServer) -> None:
    server.default = lambda request: answer(json.dumps({"verdict": "pass", "reason": "fine"}))


@pytest.fixture
def yes_judge(tmp_path: Path) -> Iterator[Path]:
    """The judge_gate example with a judge that passes everything, calibrated on its labels."""
    with serving_judge_gate(tmp_path) as (root, server):
        _always_pass(server)
        done = oloproof(
            "calibrate",
            "--evaluator",
            "groundedness",
            "--labels",
            "labels.jsonl",
            cwd=root,
            env=ENV,
        )
        assert done.code == 0, done.err
        yield root


def _exact_lower(k: int, n: int) -> float:
    return float(binomtest(k, n).proportion_ci(0.95, method="exact").low)


def _judge_line(done: Result) -> str:
    return next(line for line in done.lines if line.startswith("Judge of grounded"))


@pytest.mark.parametrize("policy", [NO_MINIMUMS, ONE_MINIMUM])
def test_a_judge_that_passes_everything_decides_no_rule(yes_judge: Path, policy: str) -> None:
    sensitivity, specificity = _exact_lower(20, 20), _exact_lower(0, 20)
    assert round(sensitivity, 4) == 0.8316 and specificity == 0.0  # together: not above 1
    (yes_judge / "policy.yaml").write_text(policy)
    done = oloproof("run", cwd=yes_judge, env=ENV)
    assert done.code == 3, done.out + done.err  # was 0: PASS on the judge's 100%
    assert done.lines[1] == "Gate: BLOCK (exit 3)"
    assert "│ grounded │ groundedness │ MANUAL_REVIEW │ judge_near_chance │" in done.out
    needs = ", needs 80.0%" if policy == ONE_MINIMUM else ""
    assert _judge_line(done).endswith(
        f": sensitivity ≥ 83.1% (20/20){needs}; specificity ≥ 0.0% (0/20); not shown better "
        "than chance (83.1% + 0.0% is not above 100%), so its verdicts may say nothing of the "
        "answers"
    )
    assert oloproof("verify", cwd=yes_judge).code == 0


def test_the_example_judge_still_decides(tmp_path: Path) -> None:
    # The example's own judge agrees with 19 of 20 human passes and 20 of 20 fails: shown
    # better than chance, the rule decides on the metric.
    with serving_judge_gate(tmp_path) as (root, _server):
        oloproof(
            "calibrate",
            "--evaluator",
            "groundedness",
            "--labels",
            "labels.jsonl",
            cwd=root,
            env=ENV,
        )
        (root / "policy.yaml").write_text(NO_MINIMUMS)
        done = oloproof("run", "--json", cwd=root, env=ENV)
    (rule,) = json.loads(done.out)["rules"]
    assert rule["outcome"] == "PASS", done.out
    judge = rule["detail"]["judge"]
    assert judge["beats_chance"] is True
    assert judge["sensitivity"]["lower"] + judge["specificity"]["lower"] > 1
    assert judge["sensitivity"]["lower"] == pytest.approx(_exact_lower(19, 20), abs=1e-12)


def test_a_comparison_rule_on_a_judge_at_chance_is_not_decided(yes_judge: Path) -> None:
    (yes_judge / "compare.yaml").write_text(COMPARE)
    first = json.loads(oloproof("run", "--json", cwd=yes_judge, env=ENV).out)["run_id"]
    second = json.loads(oloproof("run", "--json", cwd=yes_judge, env=ENV).out)["run_id"]
    done = oloproof("compare", second, first, "--policy", "compare.yaml", cwd=yes_judge, env=ENV)
    assert done.code == 3, done.out + done.err  # was 0: non-inferior on the judge's verdicts
    assert any(
        "grounded-not-worse" in line and "MANUAL_REVIEW" in line and "judge_near_chance" in line
        for line in done.lines
    ), done.out
    assert oloproof("verify", cwd=yes_judge).code == 0


def test_what_an_earlier_release_decided_verifies_as_it_was_made(yes_judge: Path) -> None:
    (yes_judge / "policy.yaml").write_text(NO_MINIMUMS)
    (yes_judge / "compare.yaml").write_text(COMPARE)
    first = oloproof("run", "--json", cwd=yes_judge, env=ENV, command=EARLIER_RELEASE)
    assert first.code == 0, first.out + first.err  # what it decided then
    verified_as_made(
        yes_judge,
        stored_event(yes_judge, ev.DECISION),
        "judge_beats_chance",
        5,
        "re-derived 1 decision(s)",
    )
    second = oloproof("run", "--json", cwd=yes_judge, env=ENV, command=EARLIER_RELEASE)
    ids = json.loads(second.out)["run_id"], json.loads(first.out)["run_id"]
    compared = oloproof(
        "compare", *ids, "--policy", "compare.yaml", cwd=yes_judge, env=ENV, command=EARLIER_RELEASE
    )
    assert compared.code == 0, compared.out + compared.err
    schema, body = stored_event(yes_judge, ev.COMPARISON)
    assert (schema, body["judge_beats_chance"]) == (6, False)
    verified = oloproof("verify", cwd=yes_judge)
    assert verified.code == 0 and "and 1 comparison(s);" in verified.out, verified.out
