"""A comparison rule's margin on the comparison page is the policy's, as ``compare`` prints it.

The probe: a non-inferiority rule with a margin of two and a quarter points (``margin: 2.25``).
``compare`` printed ``non-inferiority, margin 2.25 points``; the viewer's comparison page,
which wrote every margin with ``%.1f``, printed ``margin 2.2 points``: a rule stricter than the
one that decided, beside its decision. Both now write it from one function: one decimal, more
when the policy gave more.
"""

from __future__ import annotations

from pathlib import Path

from tests.support import non_inferiority_compared, oloproof, patterns_project
from tests.view.support import ADDRESS

POLICY = "version: 1\nrules:\n  - {id: floor, metric: answer_correct, min: 0.05}\n"


def test_the_page_prints_the_margin_compare_prints(tmp_path: Path) -> None:
    root = patterns_project(tmp_path / "p", [("p", "p")] * 6, policy=POLICY)
    lines, cand, base = non_inferiority_compared(root, 2.25)
    (decision,) = [line for line in lines if line.startswith("  nw  ")]
    assert "non-inferiority, margin 2.25 points" in decision, lines
    address = ADDRESS.findall(lines[0])[0]
    site = tmp_path / "site"
    exported = oloproof("view", "--export", str(site), cand, base, cwd=root)
    assert exported.code == 0, exported.out + exported.err
    page = (site / "comparisons" / address.split(":")[1] / "index.html").read_text()
    # Was: "non-inferiority, margin 2.2 points".
    assert "non-inferiority, margin 2.25 points" in page
