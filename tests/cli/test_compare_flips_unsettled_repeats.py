"""The head of a comparison's changed cases counts the repeated cases it does not list as moved.

The probe: both runs made with ``--repeats 3``. Case c0 passed one repeat of three in the
baseline; in the candidate it failed one, passed one and errored one: on its judged repeats it
moved from 0.333 to 0.500, but its errored repeat failing would leave it at 0.333. It was left
out of ``compare --cases`` without a word, under ``Changed cases: 1 improved, 0 regressed``, as
if only one case had moved. It is now listed apart and the head counts it, in the terminal,
the JSON, the Markdown summary and the viewer alike.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.support import oloproof, patterns_project

PATTERNS = [("pff", "fpe"), ("fff", "pee"), ("ppp", "ppp")]
HEAD = (
    "Changed cases: 1 improved, 0 regressed (counted neither way: 1 moved on its judged repeats "
    "alone, which its repeats without a verdict could undo)"
)
POLICY = "version: 1\nrules:\n  - {id: floor, metric: answer_correct, min: 0.05}\n"


def _run(root: Path, *args: str) -> str:
    done = oloproof("run", "--repeats", "3", *args, cwd=root)
    assert done.code in (0, 1, 3), done.out + done.err
    return done.lines[0].split()[1]


def test_the_head_counts_a_case_its_missing_repeats_could_undo(tmp_path: Path) -> None:
    root = patterns_project(tmp_path / "p", PATTERNS, policy=POLICY)
    base = _run(root, "--config", "baseline.yaml")
    cand = _run(root)
    done = oloproof("compare", cand, base, "--cases", "--summary", "s.md", cwd=root)
    assert done.code == 0, done.out + done.err
    at = done.lines.index(HEAD)

    def line(case: str, change: str, direction: str) -> str:
        return (
            f"  answer_correct  {case}  {change}  {direction}  oloproof inspect {cand} --case "
            f"{case} · oloproof inspect {base} --case {case}"
        )

    assert done.lines[at + 1 :] == [
        line("c1", "0.000 → 1.000 (1 of 3 repeats judged)", "improved"),
        line("c0", "0.333 → 0.500 (2 of 3 repeats judged)", "unsettled"),
    ]
    assert HEAD in (root / "s.md").read_text().splitlines()
    data = json.loads(oloproof("compare", cand, base, "--json", cwd=root).out)
    assert [(f["case_id"], f["direction"]) for f in data["flipped"]] == [
        ("c1", "improved"),
        ("c0", "unsettled"),
    ]

    site = tmp_path / "site"
    exported = oloproof("view", "--export", str(site), cand, base, cwd=root)
    assert exported.code == 0, exported.out + exported.err
    (page,) = (site / "comparisons").glob("*/index.html")
    text = page.read_text()
    assert f"<p>{HEAD}</p>" in text
    (row,) = re.findall(r'<tr class="flip apart">.*?</tr>', text)
    assert ">c0</a>" in row and "<td>unsettled</td>" in row
