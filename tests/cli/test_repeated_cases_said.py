"""A run whose cases repeat an earlier case's input and expected values says so under its
metrics, through the real CLI: in the report `run` and `inspect` print, in `--json`, in the
Markdown summary and on the viewer's run page.

The probe: 30 cases that all ask `x` and expect `x`, under `min: 0.85`, gave
`echo │ 100.0% │ [88.4%, 100.0%] │ 30 / 30 observed` and `Gate: PASS (exit 0)`, from one
execution and one judgment the other 29 shared (`Cache: execution 0 hit/1 miss/29 shared`); run
again, the cache line read `30 hit` and nothing at all showed the cases were one. Repeated cases
can be a sample drawn with replacement, so they are not refused; but the interval counts each as
an independent observation, and nothing said so.
Each report now says `29 of the 30 cases answered repeat an earlier case's input and the
expected values its evaluators read…`, on a first run and a cached one alike, and `--json`
carries the count (`repeated_cases`). Cases that differ in their expected values are not counted.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.support import oloproof, toy_project
from tests.view.support import fetch, page_text, serving

FLOOR = "version: 1\nrules:\n  - {id: floor, metric: echo, min: 0.85}\n"
SAID = (
    "29 of the 30 cases answered repeat an earlier case's input and the expected values its "
    "evaluators read, and share its execution and verdicts; the intervals count each as an "
    "independent observation"
)


def test_repeated_cases_are_said_on_a_first_run_and_a_cached_one(tmp_path: Path) -> None:
    root = toy_project(tmp_path / "p", policy=FLOOR, cases=30)
    first = oloproof("run", "--summary", "summary.md", cwd=root)
    assert first.code == 0, first.out + first.err
    assert "│ echo   │ 100.0%   │ [88.4%, 100.0%] │ 30 / 30 observed" in first.out
    assert SAID in first.lines, first.out
    assert SAID in (root / "summary.md").read_text().splitlines()
    run_id = first.lines[0].split()[1]
    assert SAID in oloproof("inspect", run_id, cwd=root).lines
    with serving(root) as url:
        status, page = fetch(f"{url}/runs/{run_id}")
    assert status == 200 and SAID in page_text(page)
    again = oloproof("run", "--json", cwd=root)
    assert again.code == 0, again.out + again.err
    report = json.loads(again.out)
    assert report["cache"]["execution"][:2] == [30, 0]
    assert report["repeated_cases"] == 29


def test_cases_that_expect_other_values_are_not_repeats(tmp_path: Path) -> None:
    root = toy_project(tmp_path / "p", policy=FLOOR, cases=4)
    cases = [
        {"id": f"c{i}", "input": {"q": "x"}, "expected": {"answer": answer}}
        for i, answer in enumerate(["x", "y", "x", "z"])
    ]
    (root / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases))
    done = oloproof("run", "--json", cwd=root)
    assert done.code == 3, done.out + done.err
    assert json.loads(done.out)["repeated_cases"] == 1  # c2 repeats c0; c1 and c3 expect others
    text = oloproof("inspect", "latest", cwd=root)
    said = [line for line in text.lines if "an earlier case's input" in line]
    assert said == [
        "1 of the 4 cases answered repeats an earlier case's input and the expected values its "
        "evaluators read, and shares its execution and verdicts; the intervals count each as an "
        "independent observation"
    ], text.out


def test_distinct_cases_say_nothing(tmp_path: Path) -> None:
    root = toy_project(tmp_path / "p", policy=FLOOR, cases=3)
    cases = [
        {"id": f"c{i}", "input": {"q": f"x{i}"}, "expected": {"answer": "x"}} for i in range(3)
    ]
    (root / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases))
    done = oloproof("run", "--json", cwd=root)
    assert json.loads(done.out)["repeated_cases"] == 0
    assert "repeat" not in oloproof("inspect", "latest", cwd=root).out
