"""A printed interval holds the computed one, down to a bound a hair below a step: 910 of 1,553
has a Clopper-Pearson lower bound of 0.56099999986…, which prints 56.0%, not 56.1% (the rule
`min: 0.561` it cannot clear would otherwise read as cleared in the table beside it)."""

from __future__ import annotations

import json
import math
from pathlib import Path

from scipy.stats import binomtest
from tests.support import answered_project, oloproof

APP = "def answer(case):\n    return {'answer': case['q'] if int(case['q'][1:]) < 910 else 'no'}\n"


def test_a_bound_just_below_a_step_prints_below_it(tmp_path: Path) -> None:
    root = answered_project(tmp_path / "p", APP, cases=1553)
    (root / "policy.yaml").write_text(
        "version: 1\nrules:\n  - {id: floor, metric: answered, min: 0.561}\n"
    )
    done = oloproof("run", "--json", cwd=root)
    assert done.code == 3, done.err
    exact = binomtest(910, 1553).proportion_ci(0.95, method="exact")
    assert 0.561 - 1e-9 < exact.low < 0.561  # the reference: truly below the step
    report = json.loads(done.out)
    (metric,) = report["metrics"]
    assert math.isclose(metric["lower"], exact.low, rel_tol=1e-12)
    assert report["rules"][0]["reason"] == "interval_overlaps_threshold"
    text = oloproof("inspect", report["run_id"], cwd=root)
    (row,) = [line for line in text.lines if line.startswith("│ answered ")]
    floor = math.floor(exact.low * 1000) / 10  # rounded down, as a lower bound is
    ceiling = math.ceil(exact.high * 1000) / 10
    assert f"[{floor:.1f}%, {ceiling:.1f}%]" in row, row
    assert "[56.0%, 61.1%]" in row
