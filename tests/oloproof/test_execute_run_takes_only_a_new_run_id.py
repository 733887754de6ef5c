"""``execute_run(ledger, plan, run_id=...)`` takes only a new run's id, ``run_`` and a ULID, as
``oloproof run`` makes one: anything else is refused by name before anything is written.

Measured before: ``run_id="latest"`` recorded a run under the name of the ref that follows the
newest run, so that run could no longer be named (``oloproof inspect latest`` showed the next
run, and ``runs`` listed a run ``latest``); ``run_id="run_X"`` was recorded as a run id no
command makes; an id a recorded run already has raised the ledger's ``RefConflictError``, a
text that is no ref name its ``AddressError``, and ``run_id=5`` a ``TypeError``, none an
``OloproofError``. The calls run in a Python process of their own."""

from __future__ import annotations

from pathlib import Path

from tests.support import SAID, api_said, toy_project

SCRIPT = (
    SAID
    + """
import asyncio, json, oloproof
plan = oloproof.plan_run("oloproof.yaml")
with oloproof.open_project_ledger(plan.base_dir) as ledger:
    def run(run_id):
        return lambda: asyncio.run(oloproof.execute_run(ledger, plan, run_id=run_id))

    for run_id in ["latest", "run_X", "a\\nGate: PASS", 5]:  # "latest" into a new ledger
        print(json.dumps(said(run(run_id))))
    first = asyncio.run(oloproof.execute_run(ledger, plan)).run_id
    print(json.dumps(said(run(first))))
    print(json.dumps(len(list(ledger.events("oloproof.run")))))
"""
)


def test_a_run_id_that_is_no_new_run_id_is_refused(tmp_path: Path) -> None:
    root = toy_project(tmp_path / "toy")
    said = api_said(SCRIPT, root)
    what = "execute_run(): run_id is a new run's id, 'run_' and a ULID (f'run_{new_ulid()}'), not "
    assert said[:4] == [
        ["ConfigError", what + "'latest'"],
        ["ConfigError", what + "'run_X'"],
        ["ConfigError", what + "'a\\nGate: PASS'"],
        ["ConfigError", what + "5"],
    ]
    assert said[4][0] == "ConfigError"
    assert said[4][1].startswith("execute_run(): run_id names a run the ledger holds (run_")
    assert said[5] == 1  # the first run alone
