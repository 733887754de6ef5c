"""A count that allows as many failures as its metric can judge cases is refused, through the real
CLI, as one that allows as many as the run has cases is.

The probe: 30 cases, 2 of them with an expected answer (the other 28 are excluded from the
metric by their own expected values, ``no_expected_value``, whatever the system answers), a
system that answers every case wrong, and ``kind: observed_count, max_failures: 2``. The run gave
``Gate: PASS (exit 0)`` with ``0 / 2 observed``: the rule allowed as many failures as there were
cases it could count, so it could not fail, however the system answered. The refusal of such a
count compared its limit with the run's 30 cases alone. It now compares it with the cases the
metric can judge too, and refuses before anything is written (exit 2, the policy's file and
line); a limit below them still runs, and fails.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.support import oloproof, toy_project

WRONG_APP = """
from oloproof import system

@system(name="toy", version="1")
def run(case):
    return {"answer": "wrong"}
"""


def _project(root: Path, limit: int, labelled: frozenset[int] = frozenset({0, 1})) -> Path:
    """30 cases c0…c29 of which only those ``labelled`` have an expected answer."""
    policy = (
        "version: 1\nrules:\n"
        f"  - {{id: few, metric: echo, kind: observed_count, max_failures: {limit}}}\n"
    )
    toy_project(root, policy=policy)
    (root / "app.py").write_text(WRONG_APP)
    lines = (
        json.dumps(
            {"id": f"c{i}", "input": {"q": "x"}}
            | ({"expected": {"answer": "x"}} if i in labelled else {})
        )
        + "\n"
        for i in range(30)
    )
    (root / "cases.jsonl").write_text("".join(lines))
    return root


def test_a_count_the_judged_cases_cannot_exceed_is_refused(tmp_path: Path) -> None:
    root = _project(tmp_path / "p", 2)
    done = oloproof("run", cwd=root)
    assert (done.code, done.out) == (2, ""), done.out  # was 0: PASS on 0 of 2 passing
    assert done.err == (
        f"error: {root}/policy.yaml, line 3: rule 'few' allows 2 failures of echo "
        "(max_failures: 2), and only 2 of the run's 30 cases can be judged on echo (the others' "
        "expected values exclude them from it): however many fail, the rule passes; give "
        "max_failures below 2 (max_failures: 0 allows none)\n"
    )
    assert not (root / ".oloproof").exists()


def test_the_same_of_the_cases_a_limit_chose(tmp_path: Path) -> None:
    # Two cases of the file can be judged, one of the three the limit keeps.
    root = _project(tmp_path / "p", 1, labelled=frozenset({0, 29}))
    done = oloproof("run", "--limit", "3", cwd=root)
    assert (done.code, done.out) == (2, ""), done.out
    assert done.err == (
        f"error: {root}/policy.yaml, line 3: rule 'few' allows 1 failures of echo "
        "(max_failures: 1), and only 1 of the run's 3 cases of the 30 the cases file holds can "
        "be judged on echo (the others' expected values exclude them from it): however many "
        "fail, the rule passes; give max_failures below 1 (max_failures: 0 allows none)\n"
    )
    assert not (root / ".oloproof").exists()


def test_a_count_below_the_judged_cases_runs_and_fails(tmp_path: Path) -> None:
    root = _project(tmp_path / "p", 1)
    done = oloproof("run", cwd=root)
    assert done.code == 1, done.out + done.err
    assert "│ few  │ echo   │ FAIL     │ observed_failures_exceed_limit │" in done.out
    assert "0 / 2 observed · 0 missing · 28 excluded" in done.out
