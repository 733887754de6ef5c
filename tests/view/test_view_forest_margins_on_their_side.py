"""The comparison page's chart draws each rule's margin where the rule compares the interval.

The probe: two rules on one metric, non-inferiority by 5 points and superiority by 10. The
chart drew one dashed margin line per metric (the last rule's), always at minus its margin: the
superiority rule's +10, which the interval's lower bound must clear, was drawn at -10, left of
zero, where the whole interval lay to its right, beside a rule that did not pass. Now each
rule's margin is drawn where ``stats.decide_*`` compares it: -5 for non-inferiority, +10 for
superiority (and both -m and +m for equivalence).

The reference: the chart's own scale (the zero line and the two end labels) maps a value in
points to an x coordinate; each margin line must stand at its value's x.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.support import oloproof, patterns_project, patterns_runs
from tests.view.support import ADDRESS

POLICY = "version: 1\nrules:\n  - {id: floor, metric: answer_correct, min: 0.05}\n"
COMPARE = (
    "version: 1\nrules:\n"
    "  - {id: nw, metric: answer_correct, non_inferiority: {margin: 5}}\n"
    "  - {id: better, metric: answer_correct, superiority: {margin: 10}}\n"
    "  - {id: same, metric: answer_correct, equivalence: {margin: 40}}\n"
)
_X = r'x1="([-0-9.]+)" x2="\1"'


def test_each_margin_is_drawn_where_its_rule_compares(tmp_path: Path) -> None:
    root = patterns_project(tmp_path / "p", [("f", "p")] * 4 + [("p", "p")] * 8, policy=POLICY)
    (root / "compare.yaml").write_text(COMPARE)
    cand, base = patterns_runs(root)
    compared = oloproof("compare", cand, base, "--policy", "compare.yaml", cwd=root)
    assert "better  answer_correct  superiority, margin 10.0 points  INSUFFICIENT" in compared.out
    site = tmp_path / "site"
    exported = oloproof("view", "--export", str(site), cand, base, cwd=root)
    assert exported.code == 0, exported.out + exported.err
    address = ADDRESS.findall(compared.lines[0])[0]
    page = (site / "comparisons" / address.split(":")[1] / "index.html").read_text()
    (chart,) = re.findall(r'<svg class="forest".*?</svg>', page, re.S)
    # The reference: the interval line runs from the lower to the upper bound --json gives,
    # which fixes the chart's scale; each margin line must stand at its margin's x.
    as_json = oloproof("compare", cand, base, "--policy", "compare.yaml", "--json", cwd=root)
    (row,) = json.loads(as_json.out)["metrics"]
    lower, upper = row["difference"]["lower"] * 100, row["difference"]["upper"] * 100
    ((left, right),) = [
        (float(a), float(b))
        for a, b in re.findall(r'<line class="diff" x1="([-0-9.]+)" x2="([-0-9.]+)"', chart)
    ]

    def at(points: float) -> float:
        return left + (points - lower) * (right - left) / (upper - lower)

    drawn = sorted(float(x) for x in re.findall(r'<line class="margin" ' + _X, chart))
    expected = sorted(at(p) for p in (-5, 10, -40, 40))
    assert len(drawn) == len(expected), chart
    for got, want in zip(drawn, expected, strict=True):
        assert abs(got - want) < 0.1, (drawn, expected)
