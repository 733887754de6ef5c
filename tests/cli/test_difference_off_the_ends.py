"""A difference that is neither -1 nor 1 never prints as either, through the real CLI.

The probe: nDCG@3 on one case, exactly 1 in the baseline and 0.0000099997 in the candidate
(a grade-1 passage found, the grade-100000 one not). ``compare`` printed the difference as
``-100.0 points`` (and the runs the other way round ``+100.0 points``): every case from a
full score to none, which the ledger does not hold. A rate or mean already kept off 0 and 1
(``fmt_mean`` printed the candidate's value ``0.00001``); a difference now keeps off -1 and 1
the same way, with as many more decimals as it takes (``-99.999 points``).
"""

from __future__ import annotations

from pathlib import Path

from tests.cli.test_graded_values_off_the_ends import APP, CONFIG
from tests.support import oloproof, write_project
from tests.view.support import ADDRESS, RUN_ID, fetch, serving

from oloproof.display import fmt_points

CASE = {
    "id": "far",
    "input": {"ranked": ["a", "x", "y"], "best": ["b", "a", "x"]},
    "expected": {"relevant": [{"doc_id": "a"}, {"doc_id": "b", "grade": 100000}]},
}


def test_a_difference_off_an_end_never_prints_on_it(tmp_path: Path) -> None:
    root = write_project(
        tmp_path / "p",
        app=APP,
        config=CONFIG,
        policy="version: 1\nrules:\n  - {id: floor, metric: ndcg_at_3, min: 0.3}\n",
        cases=[CASE],
    )
    best = RUN_ID.findall(oloproof("run", cwd=root, env={"BEST": "1"}).out)[0]
    far = RUN_ID.findall(oloproof("run", "--no-cache", cwd=root).out)[0]

    addresses = {}
    for candidate, baseline, said in ((far, best, "-99.999"), (best, far, "+99.999")):
        compared = oloproof("compare", candidate, baseline, cwd=root)
        assert compared.code == 0, compared.out + compared.err
        # Was: "ndcg_at_3: -100.0 points [...]" (and "+100.0 points").
        row = next(line for line in compared.lines if line.startswith("ndcg_at_3: "))
        assert row.startswith(f"ndcg_at_3: {said} points ["), compared.out
        addresses[said] = ADDRESS.findall(compared.out)[0]

    with serving(root) as base:
        for said, address in addresses.items():
            status, html = fetch(f"{base}/comparisons/{address}")
            assert status == 200, html
            assert f'<td class="num">{said} points</td>' in html, html


def test_a_difference_keeps_off_both_ends_only() -> None:
    assert (fmt_points(-0.99996), fmt_points(0.9995)) == ("-99.996 points", "+99.95 points")
    # On an end, off both by the step, or rounding to zero: as before.
    assert (fmt_points(1.0), fmt_points(-1.0), fmt_points(0.99949)) == (
        "+100.0 points",
        "-100.0 points",
        "+99.9 points",
    )
    assert (fmt_points(-0.0004), fmt_points(-0.0675)) == ("+0.0 points", "-6.8 points")
