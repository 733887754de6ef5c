"""A judge's required rate prints as the policy wrote it, through the real CLI, so the line
under a rule never shows the requirement met beside a decision that says it was not.

At a ``confidence_level`` of 0.8998, one calibration example of one that the judge agreed on
has a Clopper-Pearson lower bound of (1 - 0.8998) / 2 = 0.0501: at least 5.0%, printed
``5.0%``. A ``min_sensitivity: 0.0504`` is above it, and the rule is MANUAL_REVIEW
(``judge_below_requirement``). The requirement was printed rounded to the nearest 0.1%, so
the report read ``sensitivity ≥ 5.0% (1/1), needs 5.0%``: met, by what it printed.
"""

from __future__ import annotations

import json
from pathlib import Path

from scipy.stats import binomtest
from tests.support import oloproof, serving_judge_gate

LEVEL = 0.8998
MINIMUM = 0.0504


def test_a_judge_minimum_prints_as_written(tmp_path: Path) -> None:
    exact = binomtest(1, 1).proportion_ci(LEVEL, method="exact").low
    assert 0.05 <= exact < MINIMUM  # the reference: printed 5.0%, below the requirement
    env = {"JUDGE_GATE_KEY": "sk-any"}
    with serving_judge_gate(tmp_path) as (root, _):
        labels = [json.loads(line) for line in (root / "labels.jsonl").read_text().splitlines()]
        one_each = [
            next(x for x in labels if x["label"]),
            next(x for x in labels if not x["label"]),
        ]
        (root / "labels.jsonl").write_text("".join(json.dumps(x) + "\n" for x in one_each))
        (root / "policy.yaml").write_text(
            f"version: 1\nconfidence_level: {LEVEL}\n"
            "rules:\n  - id: grounded\n    metric: groundedness\n    min: 0.05\n"
            f"    judge: {{min_sensitivity: {MINIMUM}, min_specificity: {MINIMUM}}}\n"
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
        done = oloproof("run", cwd=root, env=env)
        shown = oloproof("inspect", "latest", cwd=root)
    assert done.code == 3, done.err
    assert "│ grounded │ groundedness │ MANUAL_REVIEW │ judge_below_requirement │" in done.out
    said = "sensitivity ≥ 5.0% (1/1), needs 5.04%; specificity ≥ 5.0% (1/1), needs 5.04%"
    assert said in done.out, done.out
    assert said in shown.out, shown.out
