"""``execute_run(ledger, plan, cases=...)`` given one case twice refuses it by name before
anything is written. Measured before: ``cases=[c1, c1, c1]`` executed that one case three
times and recorded a complete run of "3 of 3 answered" (its gate decided on 3 cases), whose
index then disagreed with its end record: ``oloproof verify`` exited 1 with "its end record
counts 3 cases (0 errored), its index finds 1". The call runs in a Python process of its own;
``verify`` through the real CLI."""

from __future__ import annotations

from pathlib import Path

from tests.support import SAID, api_said, oloproof, toy_project

SCRIPT = (
    SAID
    + """
import asyncio, json, oloproof
plan = oloproof.plan_run("oloproof.yaml")
with oloproof.open_project_ledger(plan.base_dir) as ledger:
    once = list(plan.cases[:1])
    print(json.dumps(said(lambda: asyncio.run(oloproof.execute_run(ledger, plan, cases=once * 3)))))
    print(json.dumps(len(list(ledger.events("oloproof.run")))))
    print(json.dumps(said(lambda: asyncio.run(oloproof.execute_run(ledger, plan, cases=once)))))
"""
)


def test_a_case_given_twice_is_refused(tmp_path: Path) -> None:
    root = toy_project(tmp_path / "toy", cases=4)
    assert api_said(SCRIPT, root) == [
        [
            "ConfigError",
            "execute_run(): cases holds the case 'c1' twice; a run executes each case once "
            "(repeats: plan.restrict(selection, repeats))",
        ],
        0,
        ["returned", "RunOutcome"],
    ]
    verified = oloproof("verify", cwd=root)
    assert verified.code == 0, verified.out + verified.err


# Some of the plan's cases: measured before, `cases=[c1]` of a plan of 4 recorded a run of 1
# case, COMPLETE, "1 of 1 answered", nothing saying the other 3 were left out.
SOME = (
    SAID
    + """
import asyncio, dataclasses, json, oloproof
plan = oloproof.plan_run("oloproof.yaml")
with oloproof.open_project_ledger(plan.base_dir) as ledger:
    stranger = dataclasses.replace(plan.cases[0], id="c9")
    print(json.dumps(said(lambda: asyncio.run(oloproof.execute_run(ledger, plan, cases=[stranger])))))
    outcome = asyncio.run(oloproof.execute_run(ledger, plan, cases=plan.cases[:1]))
    print(json.dumps(outcome.report.execution_state))
"""
)


def test_some_of_the_plans_cases_make_a_run_of_the_plan_left_to_resume(tmp_path: Path) -> None:
    root = toy_project(tmp_path / "toy", cases=4)
    assert api_said(SOME, root) == [
        [
            "ConfigError",
            "execute_run(): cases holds 'c9', which is not one of the plan's cases; a run "
            "executes some of its plan's cases (a subset of the cases file: "
            "plan.restrict(selection))",
        ],
        "INTERRUPTED",
    ]
    (row,) = oloproof("runs", cwd=root).lines
    assert "INTERRUPTED" in row and "1 of 4 answered · 3 missing (3 not run)" in row, row
    run_id = row.split()[0]
    resumed = oloproof("run", "--resume", run_id, cwd=root)
    assert resumed.lines[0] == f"Run {run_id} [DECIDED/COMPLETE]", resumed.out + resumed.err
    assert "4 of 4 answered" in oloproof("runs", cwd=root).out
