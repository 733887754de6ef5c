"""An archive whose ref named by a run id names another run's run event is refused before
anything is written: the real CLI.

The probe: a run's ledger, copied, given a second ref `run_01M98N0000…` naming that run's run
event (as a ref pointed at the wrong run, or a bit of its name flipped), exported whole and
imported into a project with no ledger and into one with a run of its own. Each import exited 0,
and `inspect run_01M98N0000…` then refused the run ("the ledger's ref … names
the run event of run_…, not of run_01M98N0000…"), `verify` naming the ref `MisnamedRef`: a
forged archive landed without a word. Now the import is refused in one sentence naming the
archive, the ref, what it names and its address (exit 2), and nothing is written: no ledger
is made for it, and a project's own ledger keeps what it held.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests.cli.test_import_of_forged_summaries import _project
from tests.support import oloproof

OTHER = "run_01M98N0000000000000000000Z"


def test_an_archive_with_a_misnamed_run_ref_is_refused(tmp_path: Path) -> None:
    from oloproof.store import open_project_ledger

    source = _project(tmp_path / "source")
    oloproof("run", cwd=source)
    (row,) = json.loads(oloproof("runs", "--json", cwd=source).out)
    forged = tmp_path / "forged"
    shutil.copytree(source, forged)
    with open_project_ledger(forged, create=False) as ledger:
        address = ledger.get_ref(row["run_id"])
        assert address is not None
        ledger.set_ref(OTHER, address)
    archive = tmp_path / "misnamed.oloarchive"
    assert oloproof("ledger", "export", "--all", "--to", str(archive), cwd=forged).code == 0
    refused = (
        f"error: will not import {archive}: its ref {OTHER!r} names the run event of "
        f"{row['run_id']}, not of {OTHER} ({address}); nothing was imported\n"
    )

    fresh = _project(tmp_path / "fresh")
    imported = oloproof("ledger", "import", str(archive), cwd=fresh)
    assert (imported.code, imported.out, imported.err) == (2, "", refused), imported
    assert not (fresh / ".oloproof" / "ledger").exists()

    own = _project(tmp_path / "own")
    oloproof("run", cwd=own)
    with open_project_ledger(own, create=False) as ledger:
        size, refs = len(ledger), ledger.refs()
    imported = oloproof("ledger", "import", str(archive), cwd=own)
    assert (imported.code, imported.out, imported.err) == (2, "", refused), imported
    with open_project_ledger(own, create=False) as ledger:
        assert (len(ledger), ledger.refs()) == (size, refs)
