"""The planning line under an undecided non-inferiority rule says what its search looked for.

The probe: 15 paired cases, 3 of them pass -> fail and none fail -> pass, under a 5-point
non-inferiority margin. ``compare`` printed "more than 100,000 paired cases would be needed to
decide it", yet with the same discordance held a FAIL is decided at 58 pairs in all (the
reference below). The projection (statistics.md D) searches only for a total that would show
the rule non-inferior, so that is what the line now says it did not find; and since the
difference seen is itself worse than the margin, it says more cases would rather make it a FAIL.
"""

from __future__ import annotations

from pathlib import Path

from tests.betting_reference import paired
from tests.support import non_inferiority_compared, patterns_project

POLICY = "version: 1\nrules:\n  - {id: floor, metric: answer_correct, min: 0.05}\n"


def test_a_rule_the_held_difference_would_fail_is_not_said_undecidable(tmp_path: Path) -> None:
    # The reference: on 58 pairs with the discordance held (12 pass -> fail, 46 agreeing), the
    # interval's upper bound is below -5 points, a FAIL, well within the search limit.
    upper = paired([-1.0] * 12 + [0.0] * 46)[1]
    assert upper < -0.05
    patterns = [("p", "f")] * 3 + [("p", "p")] * 12
    lines, _, _ = non_inferiority_compared(
        patterns_project(tmp_path / "p", patterns, policy=POLICY), 5
    )
    assert (
        "  nw  answer_correct  non-inferiority, margin 5.0 points  INSUFFICIENT_EVIDENCE  "
        "interval_overlaps_margin" in lines
    )
    planning = lines[lines.index("Decisions") + 2]
    assert planning == (
        "    more than 100,000 paired cases would be needed to show it non-inferior, if the "
        "difference holds; the difference seen is worse than the margin, so more cases would "
        "rather decide it as a FAIL"
    )


def test_a_difference_within_the_margin_past_the_limit(tmp_path: Path) -> None:
    # Three improved and three regressed of 12: no difference, which a margin of one point
    # would take more than 100,000 pairs to tell from one worse than the margin.
    patterns = [("f", "p")] * 3 + [("p", "f")] * 3 + [("p", "p")] * 6
    lines, _, _ = non_inferiority_compared(
        patterns_project(tmp_path / "p", patterns, policy=POLICY), 1
    )
    planning = lines[lines.index("Decisions") + 2]
    assert planning == (
        "    more than 100,000 paired cases would be needed to show it non-inferior, if the "
        "difference holds"
    )
