"""The judge-corrected interval covers the true pass rate at least as often as it says.

It drew the judge's observed pass rate, its sensitivity and its specificity from their Jeffreys
posteriors. Jeffreys intervals do not hold their level near 0 and 1: with a judge that agreed
with people on all 40 labels, the corrected interval of 11 of 12 judged passes was
[67.8%, 100.0%], narrower than the metric's own exact interval [61.5%, 99.8%], though it claims
to carry more uncertainty (the calibration's as well). Over the true rates a flawless judge
could meet, the 95% interval covered the truth only 87-89% of the time at worst.

The references here are scipy's: Clopper-Pearson (``binomtest``) and the binomial law, not
Oloproof's own functions.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import binom, binomtest
from tests.support import oloproof, serving_judge_gate

from oloproof.calibration import Calibration, corrected_rate

ENV = {"JUDGE_GATE_KEY": "sk-judge-gate-0123456789"}


def test_a_flawless_judge_is_corrected_no_narrower_than_the_metric(tmp_path: Path) -> None:
    with serving_judge_gate(tmp_path) as (root, _):
        labels = root / "labels.jsonl"
        # The example's judge disagrees with people on grounded-20 alone: without it, the
        # judge agreed on every label.
        lines = labels.read_text().splitlines()
        kept = [line for line in lines if json.loads(line)["id"] != "grounded-20"]
        labels.write_text("\n".join(kept) + "\n")
        calibrated = oloproof(
            "calibrate", "--evaluator", "groundedness", "--labels", "labels.jsonl", "--json",
            cwd=root, env=ENV,
        )  # fmt: skip
        assert calibrated.code == 0, calibrated.err
        assert json.loads(calibrated.out)["disagreements"] == []
        reported = oloproof("run", "--json", cwd=root, env=ENV)
    report = json.loads(reported.out)
    [row] = report["corrected"]
    assert (row["successes"], row["observed"], row["missing"]) == (11, 12, 0)
    assert (row["sensitivity"], row["specificity"]) == ([19, 19], [20, 20])
    exact = binomtest(11, 12).proportion_ci(0.95, method="exact")
    # Before: [0.678, 1.0] against the metric's [0.615, 0.998].
    assert row["lower"] <= exact.low and row["upper"] >= exact.high, row
    assert row["method"] == "rogan-gladen-clopper-pearson-mc"


@pytest.mark.parametrize(("n", "labels"), [(12, 20), (40, 20), (100, 50)])
def test_the_interval_of_a_flawless_judge_covers_every_true_rate(n: int, labels: int) -> None:
    """A judge that is always right is always measured ``labels`` of ``labels`` on each side,
    so the coverage at a true rate is exact: the binomial probability of the suites whose
    interval holds it."""
    flawless = Calibration("judge", {}, 0.95, labels, 0, 0, labels)
    bounds = [corrected_rate(k, n, flawless, 0.95)[1] for k in range(n + 1)]
    worst = min(
        sum(binom.pmf(k, n, rate) for k, b in enumerate(bounds) if b.lower <= rate <= b.upper)
        for rate in np.linspace(0.001, 0.999, 999)
    )
    # Before: 0.890, 0.871 and 0.880.
    assert worst >= 0.95, worst
