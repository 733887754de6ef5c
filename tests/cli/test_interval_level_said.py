"""A run decided at a confidence level other than 95% says so beside its intervals, through the
real CLI: in the report `run` and `inspect` print, in the comparison `compare` prints, and in
their Markdown summaries, as the run's page does (``At confidence 0.5``).

The probe: 30 cases that all pass, under `confidence_level: 0.5` and `min: 0.95`, gave
`Gate: PASS (exit 0)` beside `echo │ 100.0% │ [95.4%, 100.0%]`, a 50% interval (at 95% it is
[88.4%, 100.0%], which does not clear 0.95). Nothing in the report or the summary named the
level, so a reader took the interval, and the PASS, for one at the usual 95%; nor did a
comparison's, whose intervals are at its policy's level.
Each now says `Intervals at 50% confidence (the policy's confidence_level: 0.5), not the usual
95%`. A run at 95% says nothing of it, as before.
"""

from __future__ import annotations

from pathlib import Path

from tests.support import TOY_POLICY, oloproof, toy_project

SAID = "Intervals at 50% confidence (the policy's confidence_level: 0.5), not the usual 95%"


def test_a_level_other_than_95_is_said(tmp_path: Path) -> None:
    root = toy_project(
        tmp_path / "p",
        policy="version: 1\nconfidence_level: 0.5\nrules:\n  - {id: floor, metric: echo, "
        "min: 0.95}\n",
        cases=30,
    )
    done = oloproof("run", "--summary", "summary.md", cwd=root)
    assert done.code == 0, done.out + done.err
    assert "│ echo   │ 100.0%   │ [95.4%, 100.0%] │" in done.out
    assert SAID in done.lines, done.out
    assert SAID in (root / "summary.md").read_text().splitlines()
    run_id = done.lines[0].split()[1]
    assert SAID in oloproof("inspect", run_id, cwd=root).lines


def test_the_usual_level_is_not_said(tmp_path: Path) -> None:
    root = toy_project(tmp_path / "p", policy=TOY_POLICY, cases=3)
    done = oloproof("run", "--summary", "summary.md", cwd=root)
    assert done.code in (0, 3), done.out + done.err
    assert "confidence" not in done.out
    assert "confidence" not in (root / "summary.md").read_text()


def test_a_comparison_at_another_level_says_so(tmp_path: Path) -> None:
    root = toy_project(tmp_path / "p", cases=30)
    ids = []
    for args in (("run",), ("run", "--no-cache")):
        done = oloproof(*args, cwd=root)
        assert done.code == 0, done.out + done.err
        ids.append(done.lines[0].split()[1])
    policy = root / "compare.yaml"
    policy.write_text(
        "version: 1\nconfidence_level: 0.5\nrules:\n"
        "  - {id: not-worse, metric: echo, non_inferiority: {margin: 5}}\n"
    )
    compared = oloproof(
        "compare", ids[1], ids[0], "--policy", str(policy), "--summary", "summary.md", cwd=root
    )
    assert compared.code in (0, 3), compared.out + compared.err
    assert SAID in compared.lines, compared.out
    assert SAID in (root / "summary.md").read_text().splitlines()
    unset = oloproof("compare", ids[1], ids[0], cwd=root)
    assert "confidence" not in unset.out
