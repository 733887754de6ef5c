"""A value that is neither 0 nor 1 never prints as either, through the real CLI and viewer.

The probe: nDCG@3 on two cases, one at 0.99987 (the grade-1000 passage first, the grade-1
passage third instead of second) and one at 0.0001 (only a grade-1 passage of a grade-10000
one found). ``inspect --case`` printed them ``1.000`` and ``0.000``, a full score and none;
``compare --cases`` against a run where they are exactly 1 and 0 listed
``near_one  1.000 → 1.000  improved`` and ``near_zero  0.000 → 0.000  regressed``, a change
it printed as no change; the viewer's case page printed ``%.3f`` likewise. A run's estimate went
the same way (2,499 passes of 2,500 printed ``100.0%``). Each now gets as many more decimals as
keep it off both ends (``0.9999``, ``0.0001``, ``99.96%``), as ``fmt_share`` does for counts;
exact 0 and 1, and every other value, print as before.
"""

from __future__ import annotations

import re
from pathlib import Path

from tests.support import oloproof, write_project
from tests.view.support import RUN_ID, fetch, serving

from oloproof.display import fmt_mean, fmt_percent

APP = """
import os
from oloproof import Passage, Retrieval, current_case, system

@system(name="ranker", version="1", records=("retrieval/v1",))
def run(case):
    ranked = case["best" if os.environ.get("BEST") else "ranked"]
    passages = tuple(Passage(doc_id=d, text=d) for d in ranked)
    current_case().retrieval(Retrieval(query="q", depth=3, candidates=passages))
    return {"answer": "x"}
"""
CONFIG = """\
system: {name: ranker, version: "1", callable: app:run}
dataset: cases.jsonl
policy: policy.yaml
evaluators:
  - {type: ndcg, k: 3}
"""
# nDCG@3 of "ranked": (1000 + 1/2) / (1000 + 1/log2(3)) = 0.99987 and 1/10000 = 0.0001;
# of "best": exactly 1 and exactly 0.
CASES = [
    {
        "id": "near_one",
        "input": {"ranked": ["a", "x", "b"], "best": ["a", "b", "x"]},
        "expected": {"relevant": [{"doc_id": "a", "grade": 1000}, {"doc_id": "b"}]},
    },
    {
        "id": "near_zero",
        "input": {"ranked": ["a", "x", "y"], "best": ["x", "y", "z"]},
        "expected": {"relevant": [{"doc_id": "a"}, {"doc_id": "b", "grade": 10000}]},
    },
]

CASES_IDS = [case["id"] for case in CASES]


def _judged(text: str) -> str:
    found = re.search(r"ndcg_at_3: (\S+)", text)
    assert found, text
    return found[1]


def test_a_case_value_off_an_end_never_prints_on_it(tmp_path: Path) -> None:
    root = write_project(
        tmp_path / "p",
        app=APP,
        config=CONFIG,
        policy="version: 1\nrules:\n  - {id: floor, metric: ndcg_at_3, min: 0.3}\n",
        cases=CASES,
    )
    near = oloproof("run", cwd=root)
    exact = oloproof("run", "--no-cache", cwd=root, env={"BEST": "1"})
    near_id, exact_id = RUN_ID.findall(near.out)[0], RUN_ID.findall(exact.out)[0]

    # Was: 1.000 and 0.000.
    shown = {c: _judged(oloproof("inspect", near_id, "--case", c, cwd=root).out) for c in CASES_IDS}
    assert shown == {"near_one": "0.9999", "near_zero": "0.0001"}
    shown = {
        c: _judged(oloproof("inspect", exact_id, "--case", c, cwd=root).out) for c in CASES_IDS
    }
    assert shown == {"near_one": "1.000", "near_zero": "0.000"}

    # Was: "near_one  1.000 → 1.000  improved", "near_zero  0.000 → 0.000  regressed".
    compared = oloproof("compare", exact_id, near_id, "--cases", cwd=root)
    assert compared.code == 0, compared.out + compared.err
    assert "  ndcg_at_3  near_one  0.9999 → 1.000  improved  " in compared.out, compared.out
    assert "  ndcg_at_3  near_zero  0.0001 → 0.000  regressed  " in compared.out, compared.out

    with serving(root) as base:
        for case_id, value in (("near_one", "0.9999"), ("near_zero", "0.0001")):
            status, html = fetch(f"{base}/runs/{near_id}/cases/{case_id}")
            assert status == 200, html
            assert f'<span class="verdict v-value">{value}</span>' in html, html


def test_a_rate_or_mean_off_an_end_never_prints_on_it() -> None:
    assert (fmt_percent(2499 / 2500), fmt_percent(1 / 2500)) == ("99.96%", "0.04%")
    assert (fmt_mean(0.99995), fmt_mean(4e-5)) == ("0.99995", "0.00004")
    # On an end, or off both ends by the step: as before.
    assert (fmt_percent(1.0), fmt_percent(0.0), fmt_mean(1.0), fmt_mean(0.0)) == (
        "100.0%",
        "0.0%",
        "1.000",
        "0.000",
    )
    assert (fmt_percent(0.9985), fmt_mean(0.0005), fmt_mean(0.8665)) == ("99.9%", "0.001", "0.867")
