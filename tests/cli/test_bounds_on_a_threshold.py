"""A bound a hair below a threshold prints below it, through the real CLI, so the table never
shows a rule's threshold reached beside a decision that says it was not.

At a ``confidence_level`` of 0.9, one case of one that passed has a Clopper-Pearson lower bound
of alpha / 2, where alpha = 1 - 0.9 = 0.09999999999999998 in binary: 0.04999999999999999. A
``min: 0.05`` rule compares that float and finds it below (INSUFFICIENT_EVIDENCE). The report
printed ``[5.0%, 100.0%]`` beside it, and a judge whose calibration has that lower bound read
``sensitivity ≥ 5.0% (1/1), needs 5.0%`` beside ``judge_below_requirement``.
"""

from __future__ import annotations

import json
from pathlib import Path

from scipy.stats import binomtest
from tests.support import answered_project, oloproof, serving_judge_gate

APP = "def answer(case):\n    return {'answer': case['q']}\n"
AT_0_9 = "version: 1\nconfidence_level: 0.9\n"


def test_a_lower_bound_below_the_min_prints_below_it(tmp_path: Path) -> None:
    root = answered_project(tmp_path / "p", APP, cases=1)
    (root / "policy.yaml").write_text(
        AT_0_9 + "rules:\n  - {id: floor, metric: answered, min: 0.05}\n"
    )
    exact = binomtest(1, 1).proportion_ci(0.9, method="exact").low
    assert exact < 0.05  # the reference: alpha = 1 - 0.9 is below 0.1 in binary
    done = oloproof("run", cwd=root)
    assert done.code == 3, done.err
    assert "│ floor │ answered │ INSUFFICIENT_EVIDENCE │ interval_overlaps_threshold │" in done.out
    (row,) = [line for line in done.lines if line.startswith("│ answered ")]
    assert "│ 100.0%   │ [4.9%, 100.0%] │" in row, row


def test_a_judge_rate_below_its_minimum_prints_below_it(tmp_path: Path) -> None:
    env = {"JUDGE_GATE_KEY": "sk-any"}
    with serving_judge_gate(tmp_path) as (root, _):
        labels = [json.loads(line) for line in (root / "labels.jsonl").read_text().splitlines()]
        one_each = [
            next(x for x in labels if x["label"]),
            next(x for x in labels if not x["label"]),
        ]
        (root / "labels.jsonl").write_text("".join(json.dumps(x) + "\n" for x in one_each))
        (root / "policy.yaml").write_text(
            AT_0_9
            + "rules:\n  - id: grounded\n    metric: groundedness\n    min: 0.05\n"
            + "    judge: {min_sensitivity: 0.05, min_specificity: 0.05}\n"
        )
        calibrated = oloproof(
            "calibrate",
            "--evaluator",
            "groundedness",
            "--labels",
            "labels.jsonl",
            cwd=root,
            env=env,
        )
        assert calibrated.code == 0, calibrated.err
        assert "sensitivity  100.0% [2.5%, 100.0%]  1 / 1" in calibrated.out  # at 0.95
        done = oloproof("run", cwd=root, env=env)
    assert done.code == 3, done.err
    assert "│ grounded │ groundedness │ MANUAL_REVIEW │ judge_below_requirement │" in done.out
    assert (
        "sensitivity ≥ 4.9% (1/1), needs 5.0%; specificity ≥ 4.9% (1/1), needs 5.0%" in done.out
    ), done.out
