"""An archive that holds two run events of one run id is refused before anything is written,
a project with no ledger yet included: the real CLI.

The probe: a run's ledger copied into another with a second run event of the same run id
beside the first (its start time changed), exported whole and imported into a project that
had no ledger. It wrote all 124 events ("imported 124 new events"), then exited 1 naming the
summaries the twin left unsound, its events kept: the ledger held two run events of the run's
id. Now the import is refused as the archive is read (exit 2, one sentence
naming the archive, the run and both run events), and no ledger is made for it.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.test_import_of_forged_summaries import _project
from tests.support import oloproof


def test_two_run_events_of_one_run_are_refused_before_a_ledger_is_made(tmp_path: Path) -> None:
    from ledger import Event
    from oloproof.store import open_project_ledger

    source = _project(tmp_path / "source")
    assert oloproof("run", cwd=source).code == 1
    (row,) = json.loads(oloproof("runs", "--json", cwd=source).out)
    forged = _project(tmp_path / "forged")
    with open_project_ledger(source, create=False) as held, open_project_ledger(forged) as made:
        with made.batch():
            for _, event in held.events():
                made.put(event)
                if event.type == "oloproof.run":
                    first = made.put(event)
                    body = {**event.body, "created_at": "2026-01-01T00:00:00+00:00"}
                    second = made.put(Event(event.type, event.schema, body, event.refs))
        for name, address in held.refs():
            made.set_ref(name, address)
    archive = tmp_path / "forged.oloarchive"
    assert oloproof("ledger", "export", "--all", "--to", str(archive), cwd=forged).code == 0

    here = _project(tmp_path / "here")
    imported = oloproof("ledger", "import", str(archive), cwd=here)
    assert (imported.code, imported.out) == (2, ""), imported
    assert imported.err == (
        f"error: will not import {archive}: it holds run event {second} of {row['run_id']}, "
        f"and the archive already holds that run's run event {first}; a run has one run "
        "event, and the results linked to a second would be read as the run's; nothing was "
        "imported\n"
    )
    assert not (here / ".oloproof" / "ledger").exists()
