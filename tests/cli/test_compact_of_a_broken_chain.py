"""``ledger compact`` of a ledger whose events no longer hash to their recorded chain is
refused and leaves the ledger as it was. It used to compact it (exit 0), print that the new
history "replaces the history whose head was" the recorded head, and leave a ledger that
verified clean: the evidence that the history had been changed was gone, and the head it
vouched for was one the events did not hash to."""

from __future__ import annotations

from pathlib import Path

from tests.ledger.raw import RECORD, SEQ, chain_records, tables
from tests.support import oloproof, toy_project


def test_a_history_that_no_longer_hashes_is_not_compacted(tmp_path: Path) -> None:
    root = toy_project(tmp_path / "p", cases=30)
    for _ in range(2):
        assert oloproof("run", cwd=root).code == 0
    commit, head, first, count = chain_records(root / ".oloproof")[0]
    changed = bytes([head[0] ^ 1]) + head[1:]  # one bit of the first commit's head flipped
    with tables(root / ".oloproof") as (txn, dbs):
        txn.put(SEQ.pack(commit), RECORD.pack(changed, first, count), db=dbs[b"chain"])
    before = (root / ".oloproof" / "ledger" / "data.mdb").read_bytes()
    recorded = "sha256:" + chain_records(root / ".oloproof")[-1][1].hex()

    done = oloproof("ledger", "compact", "--keep-last", "1", cwd=root)

    assert (done.code, done.out) == (2, ""), done.out + done.err
    *steps, last = done.err.splitlines()
    assert steps == ["compact: selecting"], done.err
    assert last.startswith(
        f"error: the ledger at {root / '.oloproof'} was not compacted: its history no longer "
        f"hashes to its recorded head {recorded} (broken chain: commit 1: its events hash to "
    ), last
    assert last.endswith("; verify the ledger before compacting it"), last
    assert (root / ".oloproof" / "ledger" / "data.mdb").read_bytes() == before
    assert oloproof("verify", cwd=root).code == 1
