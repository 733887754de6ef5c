"""An archive holding a run's end record but not the decision written with it lands with its
problem named, by the import and by `verify`: the real CLI.

The probe: a run under a policy (its gate blocks), copied event by event into another ledger
without its decision, exported whole and imported into a new project. The import exited 0,
`verify` then said the ledger was ok, and `runs` refused the run with exit 2, blaming the
indexes ("its index finds its end record but not the decision written with it; rebuild them
... (if they still disagree, the ledger lacks some of the run's events: oloproof verify lists
them)"), though rebuilding changed nothing and `verify` listed nothing. Now `verify` names the
run's end record that has no decision beside it (exit 1), and the import says the same as it
does of any summary the run's events do not give, exit 1.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.test_import_of_forged_summaries import _project
from tests.support import oloproof


def test_an_import_names_a_run_end_without_its_decision(tmp_path: Path) -> None:
    from oloproof.store import open_project_ledger

    source = _project(tmp_path / "source")
    assert oloproof("run", cwd=source).code == 1
    (row,) = json.loads(oloproof("runs", "--json", cwd=source).out)
    cut = _project(tmp_path / "cut")
    with open_project_ledger(source, create=False) as held, open_project_ledger(cut) as made:
        with made.batch():
            for address, event in held.events():
                if event.type == "oloproof.run_end":
                    end = address
                if event.type != "oloproof.decision":
                    made.put(event)
        for name, address in held.refs():
            made.set_ref(name, address)
    archive = tmp_path / "undecided.oloarchive"
    assert oloproof("ledger", "export", "--all", "--to", str(archive), cwd=cut).code == 0

    here = _project(tmp_path / "here")
    imported = oloproof("ledger", "import", str(archive), cwd=here)
    assert imported.code == 1, imported
    problem = (
        f"StaleSummary {end}: run_end: {row['run_id']} has a policy and this end record "
        "(complete), but no decision, which a run writes with its end: the ledger lacks it, and "
        "the run's gate cannot be read"
    )
    *problems, last = imported.err.splitlines()
    assert problems == [problem]
    assert last.startswith(f"error: 1 run this archive holds ({row['run_id']}) carries 1 ")
    checked = oloproof("verify", cwd=here)
    assert checked.code == 1 and problem in checked.lines, checked
