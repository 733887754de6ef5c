"""A case listed as improved or regressed never prints the same value on both sides.

The probe: nDCG@3 on a case with two relevant passages of grades 1000 and 1001, ranked second
and third; the baseline ranks the grade-1000 one first of the two (0.69331), the candidate the
grade-1001 one (0.69339). ``compare --cases`` listed ``close  0.693 → 0.693  improved``: a
change it printed as none. Two values that differ now get as many more decimals as set them
apart (``0.6933 → 0.6934``); values apart at 0.001 print as before.
"""

from __future__ import annotations

from pathlib import Path

from tests.cli.test_graded_values_off_the_ends import APP, CONFIG
from tests.support import oloproof, write_project
from tests.view.support import RUN_ID

RELEVANT = [{"doc_id": "a", "grade": 1000}, {"doc_id": "b", "grade": 1001}]
CASES = [
    {
        "id": "close",
        "input": {"ranked": ["x", "a", "b"], "best": ["x", "b", "a"]},
        "expected": {"relevant": RELEVANT},
    },
    {
        "id": "apart",
        "input": {"ranked": ["x", "y", "a"], "best": ["x", "b", "a"]},
        "expected": {"relevant": RELEVANT},
    },
]


def test_a_changed_case_prints_two_values_apart(tmp_path: Path) -> None:
    root = write_project(
        tmp_path / "p",
        app=APP,
        config=CONFIG,
        policy="version: 1\nrules:\n  - {id: floor, metric: ndcg_at_3, min: 0.3}\n",
        cases=CASES,
    )
    baseline = RUN_ID.findall(oloproof("run", cwd=root).out)[0]
    candidate = RUN_ID.findall(oloproof("run", "--no-cache", cwd=root, env={"BEST": "1"}).out)[0]
    compared = oloproof("compare", candidate, baseline, "--cases", cwd=root)
    assert compared.code == 0, compared.out + compared.err
    listed = [
        line.split("  oloproof inspect")[0] for line in compared.lines if "  ndcg_at_3  " in line
    ]
    # Was: "close  0.693 → 0.693  improved".
    assert listed == [
        "  ndcg_at_3  close  0.6933 → 0.6934  improved",
        "  ndcg_at_3  apart  0.306 → 0.693  improved",
    ], compared.out


def test_values_get_decimals_only_to_differ() -> None:
    # Imported here: the test above runs on a release without it.
    from oloproof.display import fmt_means_apart

    assert fmt_means_apart(0.8664, 0.866) == ("0.8664", "0.8660")
    assert fmt_means_apart(0.5, 0.5) == ("0.500", "0.500")
    assert fmt_means_apart(0.25, 0.75) == ("0.250", "0.750")
    # Off the ends as fmt_mean keeps them, and apart from each other.
    assert fmt_means_apart(0.99996, 0.99994) == ("0.99996", "0.9999")
