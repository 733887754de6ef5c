"""A bound printed beside a comparison rule never lands on the rule's margin unless it is on it.

The probe: 78 paired cases, 2 of them fail -> pass. The interval's lower bound is -4.9959
points (the reference below), above the -5-point margin of a non-inferiority rule, which
PASSes; rounded down to 0.1 it printed ``-5.0``, on the margin, where a bound decides nothing.
Its upper bound, +11.9056, printed ``+12.0`` beside an equivalence rule of margin 12 that
PASSes because it is below 12. Bounds are rounded outward as before, with more decimals where a
rounded bound would land on (or cross) a margin of a rule on its metric: ``[-4.996, +11.91]``,
in the terminal, the Markdown summary and the viewer alike.
"""

from __future__ import annotations

from pathlib import Path

from tests.betting_reference import paired
from tests.support import oloproof, patterns_project

from oloproof.display import fmt_points_interval
from oloproof.results import Interval

POLICY = "version: 1\nrules:\n  - {id: floor, metric: answer_correct, min: 0.05}\n"
COMPARE = """\
version: 1
rules:
  - {id: no-worse, metric: answer_correct, non_inferiority: {margin: 5}}
  - {id: same, metric: answer_correct, equivalence: {margin: 12}}
"""
INTERVAL = "[-4.996, +11.91]"


def test_bounds_beside_margins_print_on_their_side(tmp_path: Path) -> None:
    lower, upper = paired([1.0] * 2 + [0.0] * 76)
    assert -0.05 < lower < -0.0499 and 0.119 < upper < 0.12  # the reference
    root = patterns_project(tmp_path / "p", [("f", "p")] * 2 + [("p", "p")] * 76, policy=POLICY)
    (root / "compare.yaml").write_text(COMPARE)
    ids = []
    for args in (("--config", "baseline.yaml"), ()):
        done = oloproof("run", *args, cwd=root)
        assert done.code == 0, done.out + done.err
        ids.append(done.lines[0].split()[1])
    base, cand = ids
    args = ("compare", cand, base, "--policy", "compare.yaml", "--summary", "summary.md")
    done = oloproof(*args, cwd=root)
    assert done.code == 0, done.out + done.err
    assert f"answer_correct: +2.6 points {INTERVAL} · 78 paired · 0 missing · 0 excluded" in (
        done.lines
    ), done.out
    assert (
        "  no-worse  answer_correct  non-inferiority, margin 5.0 points  PASS  "
        "interval_above_margin" in done.lines
    )
    assert (
        "  same  answer_correct  equivalence, margin 12.0 points  PASS  interval_within_margins"
        in done.lines
    )
    assert (
        f"| answer_correct | +2.6 points | {INTERVAL} | 78 |" in (root / "summary.md").read_text()
    )
    site = tmp_path / "site"
    exported = oloproof("view", "--export", str(site), cand, base, cwd=root)
    assert exported.code == 0, exported.out + exported.err
    (page,) = (site / "comparisons").glob("*/index.html")
    assert f'<td class="num">{INTERVAL}</td>' in page.read_text()


def test_an_equivalence_interval_narrower_than_a_step() -> None:
    # 100,000 pairs: bounds of -0.070 and +0.029 points beside an equivalence margin of 0.1
    # points printed [-0.1, +0.1], both on the margins of a rule that PASSes within them.
    interval = Interval(-0.00070, 0.00029, 0.95, "paired-betting")
    assert fmt_points_interval(interval) == "[-0.1, +0.1]"  # no margin beside it: as before
    assert fmt_points_interval(interval, (-0.001, 0.001)) == "[-0.07, +0.03]"
    # A bound on a margin is shown on it; one past it, past it.
    on = Interval(-0.05, 0.0, 0.95, "paired-betting")
    assert fmt_points_interval(on, (-0.05,)) == "[-5.0, +0.0]"
    below = Interval(-0.06, -0.05001, 0.95, "paired-betting")
    assert fmt_points_interval(below, (-0.05,)) == "[-6.0, -5.001]"
