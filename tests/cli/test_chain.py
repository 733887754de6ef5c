"""Tamper-evident history: every commit is chained, and ``oloproof verify`` re-derives the chain.

Events are deleted, reordered and rewritten straight in the LMDB tables, each time together
with their address and index entries, so that nothing but the chain can tell: the ledger's own
check must (no run_end count, no application check is involved: these are plain events). A
head published earlier is confirmed with ``verify --head``, and an attacker who rewrites the
chain too is caught by it.
"""

from __future__ import annotations

import hashlib
import json
import re
import struct
from pathlib import Path

from tests.ledger.raw import (
    RECORD,
    SEQ,
    add_run,
    chain_records,
    event_records,
    file_entries,
    tables,
    type_prefix,
    unfile_entries,
)
from tests.support import copy_example, oloproof

from ledger import Event, open_ledger
from oloproof.store import APPLICATION

HEAD = re.compile(r"^chain: (\d+) commit\(s\), head (sha256:[0-9a-f]{64})$")


def head_line(out: str) -> tuple[int, str]:
    for line in out.splitlines():
        found = HEAD.match(line)
        if found:
            return int(found.group(1)), found.group(2)
    raise AssertionError(f"no chain line in:\n{out}")


def plain_project(root: Path) -> Path:
    """Three commits of plain events (no Oloproof event, so no application check applies)."""
    with open_ledger(root / ".oloproof", app=APPLICATION) as ledger:
        ledger.put(Event("test.note", 1, {"n": 0}))
        with ledger.batch():
            for n in range(1, 5):
                ledger.put(Event("test.note", 1, {"n": n, "pad": "p" * 50}))
        ledger.put(Event("test.note", 1, {"n": 5}))
    return root


def problems(root: Path) -> list[dict[str, str]]:
    done = oloproof("verify", "--json", cwd=root)
    assert done.code in (0, 1) and done.err == "", done.err
    found: list[dict[str, str]] = json.loads(done.out)["problems"]
    return found


def expected_head(root: Path) -> str:
    """The head re-derived by hand from the events table (docs/ledger.md: the chain)."""
    head = bytes(32)
    records = {seq: digest for seq, digest, _ in event_records(root / ".oloproof")}
    for _, _, first, count in chain_records(root / ".oloproof"):
        h = hashlib.sha256(head)
        for seq in range(first, first + count):
            h.update(records[seq])
        head = h.digest()
    return "sha256:" + head.hex()


def test_verify_prints_the_head_and_confirms_a_published_one(tmp_path: Path) -> None:
    root = copy_example("blackbox_rag", tmp_path)
    assert oloproof("run", cwd=root).code in (1, 3)
    first = oloproof("verify", cwd=root)
    assert first.code == 0, first.out
    commits, published = head_line(first.out)
    assert published == expected_head(root)

    assert oloproof("run", "--no-cache", cwd=root).code in (1, 3)  # more history on top
    later, now = head_line(oloproof("verify", cwd=root).out)
    assert later > commits and now != published and now == expected_head(root)

    confirmed = oloproof("verify", "--head", published, cwd=root)
    assert confirmed.code == 0, confirmed.out
    assert f"head {published} is commit {commits} of {later} of this history" in confirmed.lines

    unknown = "sha256:" + "0" * 64
    refused = oloproof("verify", "--head", unknown, cwd=root)
    assert refused.code == 1 and refused.err == ""
    assert refused.lines[0] == (
        f"unknown head: {unknown} is not the head of any commit in this history"
    )
    # Not an address at all: a mistyped argument, refused before the ledger is read.
    garbled = oloproof("verify", "--head", "sha256:12345", cwd=root)
    assert (garbled.code, garbled.out) == (2, "")
    assert garbled.err == (
        "error: --head 'sha256:12345' is not a chain head: expected 'sha256:' and 64 hex digits\n"
    )


def test_deleting_an_event_and_its_entries_is_caught_by_the_chain_alone(tmp_path: Path) -> None:
    root = plain_project(tmp_path)
    seq, digest, _ = event_records(root / ".oloproof")[2]  # in the middle of commit 2
    with tables(root / ".oloproof") as (txn, dbs):
        txn.delete(SEQ.pack(seq), db=dbs[b"events"])
        unfile_entries(txn, dbs, seq, digest, [type_prefix("test.note")])
    found = problems(root)
    assert {p["kind"] for p in found} == {"BrokenChain"}, found
    missing, mismatch = (p["message"] for p in found)
    assert missing == "broken chain: commit 2: 1 of its 4 event(s) are missing"
    assert re.fullmatch(
        r"broken chain: commit 2: its events hash to sha256:[0-9a-f]{64}, not to its recorded "
        rf"head {_head_of(root, 2)} \(an event was deleted, reordered or rewritten\)",
        mismatch,
    ), mismatch


def _head_of(root: Path, commit: int) -> str:
    return "sha256:" + chain_records(root / ".oloproof")[commit - 1][1].hex()


def _swap_records(root: Path, a: int, b: int) -> None:
    """Swap two event records, and repoint their address and index entries to match."""
    records = {seq: (digest, data) for seq, digest, data in event_records(root / ".oloproof")}
    prefixes = [type_prefix("test.note")]
    with tables(root / ".oloproof") as (txn, dbs):
        for here in (a, b):
            unfile_entries(txn, dbs, here, records[here][0], prefixes)
        for here, there in ((a, b), (b, a)):
            digest, data = records[there]
            txn.put(SEQ.pack(here), digest + data, db=dbs[b"events"])
            file_entries(txn, dbs, here, digest, prefixes)


def test_reordering_committed_events_is_caught(tmp_path: Path) -> None:
    root = plain_project(tmp_path)
    _swap_records(root, 2, 3)
    found = problems(root)
    assert [p["kind"] for p in found] == ["BrokenChain"], found
    assert found[0]["message"].startswith("broken chain: commit 2: its events hash to ")


def test_rewriting_a_committed_event_is_caught(tmp_path: Path) -> None:
    root = plain_project(tmp_path)
    seq, old, _ = event_records(root / ".oloproof")[5]  # commit 3, alone
    forged = Event("test.note", 1, {"n": 500}).to_bytes()
    digest = hashlib.sha256(forged).digest()
    with tables(root / ".oloproof") as (txn, dbs):
        txn.put(SEQ.pack(seq), digest + forged, db=dbs[b"events"])
        unfile_entries(txn, dbs, seq, old, [type_prefix("test.note")])
        file_entries(txn, dbs, seq, digest, [type_prefix("test.note")])
    found = problems(root)
    assert [(p["kind"], p["message"].split(":")[1].strip()) for p in found] == [
        ("BrokenChain", "commit 3")
    ], found


def test_an_event_added_behind_the_chains_back_is_caught(tmp_path: Path) -> None:
    root = plain_project(tmp_path)
    extra = Event("test.note", 1, {"n": 99}).to_bytes()
    digest = hashlib.sha256(extra).digest()
    with tables(root / ".oloproof") as (txn, dbs):
        txn.put(SEQ.pack(7), digest + extra, db=dbs[b"events"])
        add_run(txn, dbs, 7, digest, [type_prefix("test.note")])
    found = problems(root)
    assert [p["message"] for p in found] == [
        "broken chain: 1 event(s) from event 7 on were added by no commit (the chain ends at "
        "event 6)"
    ]


def test_a_history_rewritten_with_its_chain_is_caught_by_a_published_head(
    tmp_path: Path,
) -> None:
    root = plain_project(tmp_path)
    _, published = head_line(oloproof("verify", cwd=root).out)
    _swap_records(root, 2, 3)
    # Re-derive every head after the change, as a careful forger would.
    records = {seq: digest for seq, digest, _ in event_records(root / ".oloproof")}
    with tables(root / ".oloproof") as (txn, dbs):
        head = bytes(32)
        for key, value in list(txn.cursor(db=dbs[b"chain"])):
            _, first, count = RECORD.unpack(value)
            h = hashlib.sha256(head)
            for seq in range(first, first + count):
                h.update(records[seq])
            head = h.digest()
            txn.put(key, RECORD.pack(head, first, count), db=dbs[b"chain"])
    assert problems(root) == []  # consistent on its own ...
    done = oloproof("verify", "--head", published, cwd=root)
    assert done.code == 1  # ... but not the history that was published
    assert done.lines[0] == (
        f"unknown head: {published} is not the head of any commit in this history"
    )


def test_commit_records_are_the_documented_bytes(tmp_path: Path) -> None:
    root = plain_project(tmp_path)
    records = chain_records(root / ".oloproof")
    assert [(commit, first, count) for commit, _, first, count in records] == [
        (1, 1, 1),
        (2, 2, 4),
        (3, 6, 1),
    ]
    assert struct.calcsize(">32sQQ") == 48
    assert head_line(oloproof("verify", cwd=root).out) == (3, expected_head(root))
