"""`inspect RUN --case ID` of a case the run planned but never reached says it did not finish.

The probe: a run of 17 cases interrupted after 8. `inspect RUN --failures` listed `c16` with
`did not finish`, and `inspect RUN --case c16` then said `error: run run_… has no case 'c16'`,
as for an id no cases file holds: a reader took the case for one the run did not plan, or the id
for mistyped. Now it says the run holds no result for it, because the run did not finish it.
"""

from __future__ import annotations

from pathlib import Path

from tests.support import (
    HELD_TOY_APP,
    HELD_TOY_CONFIG,
    interrupted_while_held,
    oloproof,
    write_project,
)

POLICY = "version: 1\nrules:\n  - {id: floor, metric: echo, min: 0.05}\n"


def test_a_case_the_run_never_reached_is_said_to_be_unfinished(tmp_path: Path) -> None:
    cases = [
        {"id": f"c{i}", "input": {"q": f"q{i}"}, "expected": {"answer": f"q{i}"}} for i in range(5)
    ]
    root = write_project(
        tmp_path / "p", app=HELD_TOY_APP, config=HELD_TOY_CONFIG, policy=POLICY, cases=cases
    )
    run_id = interrupted_while_held(root, "holding\n", env={"HOLD": "q2"})
    listed = oloproof("inspect", run_id, "--failures", cwd=root)
    assert "\nc4\n  did not finish" in listed.out, listed.out

    unfinished = oloproof("inspect", run_id, "--case", "c4", cwd=root)
    assert unfinished.code == 2
    assert unfinished.err == (
        f"error: run {run_id} holds no result for case 'c4': the run did not finish it (it was "
        "interrupted, or is still running; `oloproof runs` says which)\n"
    )
    # A case the run finished is shown; an id the run never planned is still no case of it.
    assert oloproof("inspect", run_id, "--case", "c0", cwd=root).out.startswith("case c0 (ok)")
    unknown = oloproof("inspect", run_id, "--case", "c9", cwd=root)
    assert (unknown.code, unknown.err) == (2, f"error: run {run_id} has no case 'c9'\n")
