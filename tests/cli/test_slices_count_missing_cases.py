"""A slice row never reads as complete when cases are missing from it, through the real CLI.

The probe: 12 planned cases in two slices (``metadata.t`` a and b), interrupted at c8, with c1
errored and c3 answered wrong. The metrics table counted the 4 cases that never ran as missing,
but each slice row counted only the errored case: slice a read ``4 / 4 observed · 0 missing``
with the interval of a complete slice, although any of the 4 unrun cases could be in it. Now
every slice row counts them as missing (no run case tells which slice they are in), and a line
under the table says so. The bounds are checked against scipy's exact binomial interval.

A comparison's slice differences read the judged repeats of paired cases alone: with cases
missing from the comparison (3 errored in the candidate), or repeats without a verdict (a
second repeat errored in each case of slice b), the slice lines said nothing and read as the
whole slice. Now they say what they leave out.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from scipy.stats import binomtest
from tests.support import HOLDING_APP, interrupted_while_held, oloproof, write_project
from tests.view.support import fetch, serving

PLANNED = 12

APP = (
    HOLDING_APP
    + """

@system(name="toy", version=os.environ.get("TOY_VERSION", "1"))
def run(case):
    q = case["q"]
    if q == "q8" and os.environ.get("HOLD"):  # the run is interrupted here
        hold("sleeping")
    if q in os.environ.get("ERRORS", "q1").split(","):
        raise RuntimeError("boom")
    return {"answer": "wrong" if q == "q3" else q}
"""
)
CONFIG = """\
system: {name: toy, version: "1", callable: "app:run"}
dataset: cases.jsonl
concurrency: 1
evaluators:
  - {type: contains, criterion: echo, field: answer, expected_field: answer}
slices: [metadata.t]
min_slice_support: 2
"""
POLICY = "version: 1\nrules:\n  - {id: floor, metric: echo, min: 0.1}\n"


def _project(root: Path) -> Path:
    cases = [
        {
            "id": f"c{i}",
            "input": {"q": f"q{i}"},
            "expected": {"answer": f"q{i}"},
            "metadata": {"t": "a" if i % 2 == 0 else "b"},
        }
        for i in range(PLANNED)
    ]
    return write_project(root, app=APP, config=CONFIG, policy=POLICY, cases=cases)


def _exact(successes: int, cases: int) -> tuple[float, float]:
    ci = binomtest(successes, cases).proportion_ci(0.95, method="exact")
    return ci.low, ci.high


@pytest.fixture(scope="module")
def interrupted(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    root = _project(tmp_path_factory.mktemp("unrun") / "p")
    return root, interrupted_while_held(root, "sleeping\n", {"HOLD": "1"})


def test_every_slice_row_counts_the_unrun_cases_as_missing(
    interrupted: tuple[Path, str],
) -> None:
    root, run_id = interrupted
    shown = oloproof("inspect", run_id, "--json", cwd=root)
    assert shown.code == 0, shown.err
    report = json.loads(shown.out)
    assert (report["cases"], report["planned_cases"]) == (8, PLANNED)
    rows = {s["value"]: s["metric"] for s in report["slices"]}
    # Slice a ran c0, c2, c4, c6 (all pass); slice b c1 (errored), c3 (wrong), c5, c7. Each
    # could hold all 4 unrun cases: failing them for the lower bound, passing for the upper.
    a, b = rows["a"], rows["b"]
    assert (a["successes"], a["observed"], a["missing"]) == (4, 4, 4)
    assert a["missing_reasons"] == {"not_run": 4}
    assert (a["lower"], a["upper"]) == pytest.approx((_exact(4, 8)[0], 1.0))
    assert (b["successes"], b["observed"], b["missing"]) == (2, 3, 5)
    assert b["missing_reasons"] == {"execution_errored": 1, "not_run": 4}
    assert (b["lower"], b["upper"]) == pytest.approx((_exact(2, 8)[0], _exact(7, 8)[1]))
    # What the cases that ran show alone stays beside it.
    assert (a["observed_lower"], b["observed_upper"]) == pytest.approx(
        (_exact(4, 4)[0], _exact(2, 3)[1])
    )

    printed = oloproof("inspect", run_id, cwd=root)
    assert printed.code == 0, printed.err
    lines = printed.lines
    assert (
        "│ metadata.t │ a     │ echo   │ 100.0%   │ [15.7%, 100.0%] │ 4 / 4 observed · 4 missing · 0 excluded │"
        in lines
    )
    unrun = (
        "4 planned cases did not run, and which slice values they hold is not known: each row "
        "counts them as missing"
    )
    assert unrun in lines
    with serving(root) as url:  # the viewer says it too
        assert unrun in fetch(f"{url}/runs/{run_id}")[1]


def test_a_finished_run_says_nothing_of_unrun_cases(tmp_path: Path) -> None:
    root = _project(tmp_path / "p")
    done = oloproof("run", cwd=root)
    assert done.code == 0, done.out + done.err
    assert (
        "│ metadata.t │ a     │ echo   │ 100.0%   │ [54.0%, 100.0%] │ 6 / 6 observed · 0 missing · 0 excluded │"
        in done.lines
    )
    assert not [line for line in done.lines if "did not run" in line]


def test_compared_slices_say_they_read_the_paired_cases_alone(tmp_path: Path) -> None:
    root = _project(tmp_path / "p")
    base = oloproof("run", cwd=root, env={"ERRORS": "none"})
    cand = oloproof("run", cwd=root, env={"TOY_VERSION": "2", "ERRORS": "q5,q7,q9"})
    assert (base.code, cand.code) == (0, 0), base.err + cand.err
    base_id, cand_id = (r.lines[0].split()[1] for r in (base, cand))
    compared = oloproof("compare", cand_id, base_id, "--slices", cwd=root)
    assert compared.code == 0, compared.err
    assert (
        "2 exploratory slice differences (they never gate; of the paired cases alone: "
        "3 cases missing from the comparison are in none of them)"
    ) in compared.lines
    # Slice b paired c1, c3 and c11 alone: c5, c7 and c9 errored in the candidate.
    (b_row,) = (line for line in compared.lines if line.startswith("  metadata.t=b  echo: "))
    assert b_row.endswith(" · 3 paired")
    folded = oloproof("compare", cand_id, base_id, cwd=root)
    assert (
        "2 exploratory slice differences not shown (of the paired cases alone: 3 cases missing "
        "from the comparison are in none of them); add --slices to list them"
    ) in folded.lines
    address = json.loads(oloproof("compare", cand_id, base_id, "--json", cwd=root).out)["address"]
    with serving(root) as url:  # the viewer says it too
        page = fetch(f"{url}/comparisons/{address}")[1]
    said = "Of the paired cases alone: 3 cases missing from the comparison are in none of them."
    assert said in page


REPEATED_APP = """
import os
from collections import Counter

from oloproof import system

SEEN = Counter()


@system(name="toy", version=os.environ.get("TOY_VERSION", "1"))
def run(case):
    q = case["q"]
    SEEN[q] += 1
    if os.environ.get("TOY_VERSION") == "2" and SEEN[q] == 2 and int(q[1:]) % 2:
        raise RuntimeError("second repeat")
    return {"answer": q}
"""


def test_compared_slices_say_they_read_the_judged_repeats_alone(tmp_path: Path) -> None:
    # The candidate's second repeat errors on every case of slice b: each of its 6 pairs has
    # a repeat without a verdict, which the metric counts and the slice rows cannot.
    root = _project(tmp_path / "p")
    (root / "app.py").write_text(REPEATED_APP)
    base = oloproof("run", "--repeats", "2", cwd=root)
    cand = oloproof("run", "--repeats", "2", cwd=root, env={"TOY_VERSION": "2"})
    assert (base.code, cand.code) == (0, 0), base.err + cand.err
    base_id, cand_id = (r.lines[0].split()[1] for r in (base, cand))
    compared = oloproof("compare", cand_id, base_id, "--slices", cwd=root)
    assert compared.code == 0, compared.err
    assert (
        "  repeats without a verdict 6: 6 in the candidate, 0 in the baseline, of 6 paired cases"
    ) in compared.lines
    assert (
        "2 exploratory slice differences (they never gate; on the judged repeats alone: "
        "6 repeats without a verdict are in none of them)"
    ) in compared.lines
