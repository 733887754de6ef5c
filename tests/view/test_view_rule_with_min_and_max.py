"""A rule with both a ``min`` and a ``max`` shows both on the run page, as it decides on both.

The probe: ``{min: 0.5, max: 0.9}`` on a pass rate of 30 of 30 cases. The rule reads the upper
bound (100.0%) against the max, which it cannot clear, and is INSUFFICIENT_EVIDENCE. The run
page wrote ``[88.4%, 100.0%] vs min 50.0%`` beside it, with one threshold line at 50%: an
interval that clears the only threshold shown, beside a rule that did not pass. Now the page
writes ``vs min 50.0%, max 90.0%``, and the bar has a line at each.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from scipy.stats import binomtest
from tests.support import answered_project, oloproof

APP = "def answer(case):\n    return {'answer': case['q']}\n"
POLICY = "version: 1\nrules:\n  - {id: band, metric: answered, min: 0.5, max: 0.9}\n"


def test_both_thresholds_of_a_rule_are_shown(tmp_path: Path) -> None:
    root = answered_project(tmp_path / "p", APP, cases=30)
    (root / "policy.yaml").write_text(POLICY)
    done = oloproof("run", "--json", cwd=root)
    assert done.code == 3, done.out + done.err
    (rule,) = json.loads(done.out)["rules"]
    assert (rule["outcome"], rule["reason"]) == (
        "INSUFFICIENT_EVIDENCE",
        "interval_overlaps_threshold",
    )
    exact = binomtest(30, 30).proportion_ci(0.95, method="exact")  # the reference
    assert 0.5 < exact.low < 0.9 < exact.high
    run_id = json.loads(done.out)["run_id"]
    site = tmp_path / "site"
    exported = oloproof("view", "--export", str(site), run_id, cwd=root)
    assert exported.code == 0, exported.out + exported.err
    html = (site / "runs" / run_id / "index.html").read_text()
    (row,) = re.findall(r'<tr><th scope="row">band</th>.*?</tr>', html, re.DOTALL)
    assert "[88.4%, 100.0%] vs min 50.0%, max 90.0%</span>" in row, row
    lines = re.findall(r'<line class="threshold" x1="([0-9.]+)"', row)
    axis = re.findall(r'<line class="tick" x1="([0-9.]+)"', row)
    left, right = float(axis[0]), float(axis[-1])  # the scale's 0 and 1
    drawn = sorted(float(x) for x in lines)
    expected = [left + t * (right - left) for t in (0.5, 0.9)]
    assert len(drawn) == 2 and all(
        abs(a - b) < 0.1 for a, b in zip(drawn, expected, strict=True)
    ), row
