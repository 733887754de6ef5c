"""``oloproof runs`` lists runs newest first by when they ran, an imported run included.

A run made in one project and imported (``ledger export`` / ``ledger import``) into another
after that project's own, later run, takes its place by its start time: it used to be listed
first, as the newest, because it was the last to arrive.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.support import copy_example, oloproof


def test_an_imported_older_run_is_listed_below_a_newer_local_one(tmp_path: Path) -> None:
    older = copy_example("blackbox_rag", tmp_path / "a")
    assert oloproof("run", cwd=older).code in (1, 3)
    (old,) = json.loads(oloproof("runs", "--json", cwd=older).out)
    newer = copy_example("blackbox_rag", tmp_path / "b")
    assert oloproof("run", cwd=newer).code in (1, 3)
    (new,) = json.loads(oloproof("runs", "--json", cwd=newer).out)
    assert new["created_at"] > old["created_at"]
    archive = tmp_path / "old.oloarchive"
    done = oloproof("ledger", "export", old["run_id"], "--to", str(archive), cwd=older)
    assert done.code == 0, done.err
    done = oloproof("ledger", "import", str(archive), cwd=newer)
    assert done.code == 0, done.err
    listed = json.loads(oloproof("runs", "--json", cwd=newer).out)
    assert [r["run_id"] for r in listed] == [new["run_id"], old["run_id"]]
    lines = oloproof("runs", cwd=newer).lines
    assert lines[0].startswith(new["run_id"]) and lines[1].startswith(old["run_id"])
