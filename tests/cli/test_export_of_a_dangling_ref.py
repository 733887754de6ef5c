"""`ledger export --all` of a ledger holding a ref to an event it does not hold (a flipped bit
in the ref's value or its name's size, or a second tool's write; `verify` says `dangling ref`)
wrote the archive and exited 0 (`exported … events to all.oloarchive`), and every import of it
was then refused (`the archive … has ref 'release' to an event it lacks`). Export now refuses
it as it refuses an event or a commit that no longer hashes: one sentence naming the event and
the ref, exit 2, nothing written."""

from __future__ import annotations

import hashlib
from pathlib import Path

from tests.ledger.raw import tables
from tests.support import oloproof, toy_project


def test_an_archive_is_not_written_with_a_ref_to_an_event_it_lacks(tmp_path: Path) -> None:
    root = toy_project(tmp_path / "p", cases=2)
    assert oloproof("run", cwd=root).code in (0, 3)
    digest = hashlib.sha256(b"no such event").digest()
    with tables(root / ".oloproof") as (txn, dbs):
        txn.put(b"release", digest, db=dbs[b"refs"])
    assert "dangling ref release to missing event" in oloproof("verify", cwd=root).out

    target = tmp_path / "all.oloarchive"
    refused = oloproof("ledger", "export", "--all", "--to", str(target), cwd=root)

    assert (refused.code, refused.out, refused.err) == (
        2,
        "",
        f"error: event sha256:{digest.hex()} is not in the ledger (ref 'release' points at it, "
        "so an import would refuse the archive; verify the ledger before exporting it)\n",
    )
    assert not target.exists()
    assert oloproof("ledger", "export", "latest", "--to", str(target), cwd=root).code == 0
