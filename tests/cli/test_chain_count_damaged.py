"""A commit record whose count was damaged on disk (one flipped bit of its 8-byte count makes a
commit of 4 events claim billions) is reported by ``verify`` at once, as a broken chain naming
the commit: it used to step through every sequence number the count claimed, one at a time,
and never ended."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.test_chain import plain_project
from tests.ledger.raw import RECORD, SEQ, chain_records, event_records, tables
from tests.support import oloproof, toy_project


def test_a_count_flipped_huge_is_a_broken_chain_not_a_hang(tmp_path: Path) -> None:
    root = plain_project(tmp_path)
    commit, head, first, count = chain_records(root / ".oloproof")[1]
    claimed = count | 1 << 34  # one bit of the count's fifth byte flipped
    with tables(root / ".oloproof") as (txn, dbs):
        txn.put(SEQ.pack(commit), RECORD.pack(head, first, claimed), db=dbs[b"chain"])
    done = oloproof("verify", "--json", cwd=root, timeout=60)
    assert done.code == 1 and done.err == "", done.err
    found = [p["message"] for p in json.loads(done.out)["problems"]]
    stored = len(event_records(root / ".oloproof")) - first + 1  # all from the commit's first on
    missing = claimed - stored
    assert f"broken chain: commit 2: {missing} of its {claimed} event(s) are missing" in found
    assert (
        f"broken chain: commit 3: it starts at event {first + count}, but the commit before it "
        f"ended at event {first + claimed - 1}"
    ) in found


def test_an_export_beside_a_commit_claiming_billions_is_written(tmp_path: Path) -> None:
    """The archive of a run the damaged commit did not add is whole: it used to end in a
    traceback (``IndexError``) while asking whether that commit added any of the run's
    events."""
    root = toy_project(tmp_path / "p", cases=30)
    for _ in range(2):
        assert oloproof("run", cwd=root).code == 0
    commit, head, first, count = chain_records(root / ".oloproof")[-1]  # the second run's end
    with tables(root / ".oloproof") as (txn, dbs):
        txn.put(SEQ.pack(commit), RECORD.pack(head, first, count | 1 << 34), db=dbs[b"chain"])
    listed = oloproof("runs", cwd=root).lines
    older = listed[-1].split()[0]
    archive = tmp_path / "run.oloarchive"

    done = oloproof("ledger", "export", older, "--to", str(archive), cwd=root, timeout=60)

    assert done.code == 0 and done.err == "", done.err
    elsewhere = toy_project(tmp_path / "q", cases=30)
    assert oloproof("ledger", "import", str(archive), cwd=elsewhere).code == 0
    assert oloproof("verify", cwd=elsewhere).code == 0
