"""A comparison whose paired cases repeat an earlier pair says so under its pairing, through
the real CLI: in what `compare` and `inspect` print, in `--json`, in the Markdown summary and
on the viewer's comparison page; `verify` re-derives the count.

The probe: 200 cases that all ask `x` and expect `x`, run, run again with `--no-cache`, and
compared under `non_inferiority: {margin: 5}`, printed `echo: +0.0 points [-2.7, +2.7] ·
200 paired` and `Gate: PASS (exit 0)` with nothing saying the 200 pairs were one: every case
shared one execution and one judgment in each run. A run's report already says this of its
cases; the comparison read them as 200 independent pairs in silence. It is said, not refused:
repeated cases can be a sample drawn with replacement.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.support import (
    earlier_release,
    oloproof,
    stored_event,
    toy_project,
    verified_as_made,
)
from tests.view.support import fetch, page_text, serving

NOT_WORSE = "version: 1\nrules:\n  - {id: nw, metric: echo, non_inferiority: {margin: 5}}\n"
SAID = (
    "199 of the 200 paired cases repeat an earlier pair's input and the expected values its "
    "evaluators read in both runs, and share its executions and verdicts; the intervals count "
    "each as an independent pair"
)


def _two_runs(root: Path) -> list[str]:
    ids = []
    for args in (("run",), ("run", "--no-cache")):
        done = oloproof(*args, cwd=root)
        assert done.code in (0, 3), done.out + done.err  # 3 cases are too few for the floor
        ids.append(done.lines[0].split()[1])
    return ids


def test_repeated_pairs_are_said_and_verified(tmp_path: Path) -> None:
    root = toy_project(tmp_path / "p", cases=200)
    baseline, candidate = _two_runs(root)
    (root / "compare.yaml").write_text(NOT_WORSE)
    done = oloproof(
        "compare", candidate, baseline, "--policy", "compare.yaml", "--summary", "s.md", cwd=root
    )
    assert done.code == 0, done.out + done.err
    assert done.lines[1] == SAID, done.out
    assert done.lines[2].startswith("echo: +0.0 points [-2.7, +2.7] · 200 paired"), done.out
    assert SAID in (root / "s.md").read_text().splitlines()
    address = done.lines[0].split()[1]
    assert oloproof("inspect", address, cwd=root).out == done.out
    as_json = json.loads(oloproof("inspect", address, "--json", cwd=root).out)
    assert as_json["repeated_pairs"] == 199
    assert as_json["counts_repeated_pairs"] is True
    verified = oloproof("verify", cwd=root)
    assert verified.code == 0, verified.out + verified.err
    assert "1 comparison(s)" in verified.out
    with serving(root) as url:
        status, page = fetch(f"{url}/comparisons/{as_json['address']}")
    assert status == 200 and SAID in page_text(page)


def test_distinct_pairs_say_nothing_and_record_no_count(tmp_path: Path) -> None:
    root = toy_project(tmp_path / "p", cases=3)
    cases = [
        {"id": f"c{i}", "input": {"q": f"x{i}"}, "expected": {"answer": "x"}} for i in range(3)
    ]
    (root / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases))
    baseline, candidate = _two_runs(root)
    # The candidate reused nothing, but a comparison of a run with its cached twin pairs each
    # case with the same judgments on both sides: those are not repeats of one another either.
    cached = oloproof("run", cwd=root)
    assert cached.code == 3, cached.out + cached.err
    for pair in ((candidate, baseline), (cached.lines[0].split()[1], candidate)):
        done = oloproof("compare", *pair, "--json", cwd=root)
        assert done.code == 0, done.out + done.err
        body = json.loads(done.out)
        assert "repeated_pairs" not in body and body["counts_repeated_pairs"], done.out
        text = oloproof("compare", *pair, cwd=root)
        assert not [line for line in text.lines if "earlier pair" in line], text.out


def test_a_comparison_recorded_before_is_verified_as_made(tmp_path: Path) -> None:
    root = toy_project(tmp_path / "p", cases=200)
    baseline, candidate = _two_runs(root)
    (root / "compare.yaml").write_text(NOT_WORSE)
    command = earlier_release({"oloproof.comparison": 9})
    args = ("compare", candidate, baseline, "--policy", "compare.yaml")
    done = oloproof(*args, cwd=root, command=command)
    assert done.code == 0, done.out + done.err
    assert SAID not in done.lines
    stored = stored_event(root, "oloproof.comparison")
    assert "repeated_pairs" not in stored[1]
    verified_as_made(root, stored, "counts_repeated_pairs", 9, "1 comparison(s)")
