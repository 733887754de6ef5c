"""A comparison's Markdown summary stays the size of a pull request comment.

``compare --summary`` listed every changed case, one table row each (about 100 characters):
some 650 of them exceed the 65,536 characters a GitHub comment holds, and the comment is
refused whole. The summary lists the first ``SUMMARY_FLIPS`` and then says how many more there
are and which command lists them all; the count above the table stays the whole count.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.support import oloproof, patterns_project

from oloproof.cli.ci_compare import SUMMARY_FLIPS


def test_the_summary_folds_changed_cases_past_its_limit(tmp_path: Path) -> None:
    improved, regressed = SUMMARY_FLIPS, 20
    patterns = [("f", "p")] * improved + [("p", "f")] * regressed + [("p", "p")] * 5
    root = patterns_project(
        tmp_path / "p",
        patterns,
        policy="version: 1\nrules:\n  - {id: floor, metric: answer_correct, min: 0.05}\n",
    )
    assert oloproof("run", "--config", "baseline.yaml", cwd=root).code == 0
    assert oloproof("run", cwd=root).code == 0
    cand, base = (r["run_id"] for r in json.loads(oloproof("runs", "--json", cwd=root).out))

    done = oloproof("compare", cand, base, "--summary", "s.md", "--json", cwd=root)
    data = json.loads(done.out)
    assert len(data["flipped"]) == improved + regressed
    lines = (root / "s.md").read_text().splitlines()
    assert f"Changed cases: {improved} improved, {regressed} regressed" in lines
    rows = [line for line in lines if line.startswith("| answer_correct | c")]
    assert len(rows) == SUMMARY_FLIPS
    assert rows[-1].startswith(f"| answer_correct | c{SUMMARY_FLIPS - 1} | fail | pass |")
    assert (
        f"and {regressed} more changed cases, not listed here: "
        f"`oloproof inspect {data['address']} --json` lists them all (`flipped`)"
    ) in lines
