"""The viewer's comparison page says what ``oloproof compare`` says, in the same order.

The probe: twelve cases c0…c11 in that line order; c2 improved, c10 regressed, under a
non-inferiority rule with a margin of half a point that no number of cases within the planning
limit would decide (such a margin is now refused as one written as a fraction: the test holds
a margin of one point to the same). ``compare --cases`` listed c2 then c10 (the candidate's order) and said
"more than 100,000 paired cases would be needed to decide it, if the difference holds"; the
viewer listed c10 then c2 (by case id) and said "more than 100000 paired cases would be needed
to decide it". Both now come from one piece of code (which now says "to show it non-inferior":
the projection searches for nothing else).
"""

from __future__ import annotations

import re
from pathlib import Path

from tests.support import oloproof, patterns_project

COMPARE = "version: 1\nrules:\n  - {id: nw, metric: answer_correct, non_inferiority: {margin: 1}}\n"
POLICY = "version: 1\nrules:\n  - {id: floor, metric: answer_correct, min: 0.05}\n"


def test_the_page_lists_flips_and_planning_as_the_cli(tmp_path: Path) -> None:
    patterns = [("p", "p")] * 12
    patterns[2], patterns[10] = ("f", "p"), ("p", "f")
    root = patterns_project(tmp_path / "p", patterns, policy=POLICY)
    (root / "compare.yaml").write_text(COMPARE)
    ids = []
    for args in (("--config", "baseline.yaml"), ()):
        done = oloproof("run", *args, cwd=root)
        assert done.code == 0, done.out + done.err
        ids.append(done.lines[0].split()[1])
    base, cand = ids
    done = oloproof("compare", cand, base, "--policy", "compare.yaml", "--cases", cwd=root)
    assert done.code == 3, done.out + done.err
    planning = (
        "about 22524 more paired cases would decide it, if the difference holds (22536 in "
        "total at 17% discordance)"
    )
    assert f"    {planning}" in done.lines
    listed = [line.split()[1] for line in done.lines if line.startswith("  answer_correct  ")]
    assert listed == ["c2", "c10"]

    site = tmp_path / "site"
    exported = oloproof("view", "--export", str(site), cand, base, cwd=root)
    assert exported.code == 0, exported.out + exported.err
    (page,) = (site / "comparisons").glob("*/index.html")
    text = page.read_text()
    assert planning in text
    shown = re.findall(r'<tr class="flip [a-z]+"><th scope="row"><a href="[^"]*">([^<]*)</a>', text)
    assert shown == listed
    assert "<p>Changed cases: 1 improved, 1 regressed</p>" in text
