"""``oloproof runs`` lists runs newest first by when they ran, an imported run included, and
every run it lists can be named by its id.

A run made in one project and imported (``ledger export`` / ``ledger import``) into another
after that project's own, later run, takes its place by its start time: it used to be listed
first, as the newest, because it was the last to arrive.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.support import copy_example, oloproof

from oloproof.store import open_project_ledger


def test_an_imported_older_run_is_listed_below_a_newer_local_one(tmp_path: Path) -> None:
    older = copy_example("blackbox_rag", tmp_path / "a")
    assert oloproof("run", cwd=older).code in (1, 3)
    (old,) = json.loads(oloproof("runs", "--json", cwd=older).out)
    newer = copy_example("blackbox_rag", tmp_path / "b")
    assert oloproof("run", cwd=newer).code in (1, 3)
    (new,) = json.loads(oloproof("runs", "--json", cwd=newer).out)
    # Both may start within one second (created_at's precision): the run id then says which.
    assert (new["created_at"], new["run_id"]) > (old["created_at"], old["run_id"])
    archive = tmp_path / "old.oloarchive"
    done = oloproof("ledger", "export", old["run_id"], "--to", str(archive), cwd=older)
    assert done.code == 0, done.err
    done = oloproof("ledger", "import", str(archive), cwd=newer)
    assert done.code == 0, done.err
    listed = json.loads(oloproof("runs", "--json", cwd=newer).out)
    assert [r["run_id"] for r in listed] == [new["run_id"], old["run_id"]]
    lines = oloproof("runs", cwd=newer).lines
    assert lines[0].startswith(new["run_id"]) and lines[1].startswith(old["run_id"])


def test_a_listed_run_whose_ref_never_arrived_is_found_by_its_id(tmp_path: Path) -> None:
    # An import cut short has written events but not yet the refs, which come last: `runs`
    # listed the run, and `inspect RUN_ID` said there was no such run.
    source = copy_example("blackbox_rag", tmp_path / "a")
    assert oloproof("run", cwd=source).code in (1, 3)
    (run,) = json.loads(oloproof("runs", "--json", cwd=source).out)
    target = tmp_path / "b"
    target.mkdir()
    with open_project_ledger(source, create=False) as src, open_project_ledger(target) as dst:
        with dst.batch():
            for _, event in src.events():
                dst.put(event)
    assert [r["run_id"] for r in json.loads(oloproof("runs", "--json", cwd=target).out)] == [
        run["run_id"]
    ]
    shown = oloproof("inspect", run["run_id"], cwd=target)
    assert shown.code == 0, shown.err
    assert shown.lines[0].startswith(f"Run {run['run_id']} ")
    assert shown.out == oloproof("inspect", run["run_id"], cwd=source).out
