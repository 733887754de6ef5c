"""``oloproof verify`` is at least as strict as ``ledger import``.

Records that hash to their address but that import would refuse (bytes not in canonical form,
an event of the wrong shape, a ref that is not an address) are written straight into the
LMDB tables, each with its address table entry, type index entry and chain record, so that
only what is wrong with the bytes is left to find. ``verify`` must list every one of them,
name each by address, go on checking the rest, and never raise.
"""

from __future__ import annotations

import json
from pathlib import Path

import cbor2
from tests.ledger.raw import ADDR_TAG, INDEX_TAG, append_raw, directory, tables
from tests.support import oloproof

from ledger import Event, check_archive, encode, open_ledger
from oloproof.store import APPLICATION

GOOD = Event("test.note", 1, {"text": "a sound event"})

# Each hashes to its own address; each is refused by `ledger import`.
BAD = {
    "keys out of canonical order": cbor2.dumps(
        {"type": "test.note", "schema": 1, "body": {}, "refs": []}
    ),
    "an integer in a longer head": encode(
        {"type": "test.note", "schema": 1, "body": {"n": 1}, "refs": []}
    ).replace(b"\x61\x6e\x01", b"\x61\x6e\x18\x01"),
    "a list body": encode({"type": "test.note", "schema": 1, "body": [1, 2], "refs": []}),
    "a string schema": encode({"type": "test.note", "schema": "1", "body": {}, "refs": []}),
    "a ref that is not an address": encode(
        {"type": "test.note", "schema": 1, "body": {}, "refs": ["run_latest"]}
    ),
    "a missing field": encode({"type": "test.note", "schema": 1, "body": {}}),
    "bytes that are not CBOR": b"\xff\x00 not cbor at all",
}
EXPECTED = {
    "keys out of canonical order": "not in deterministic form",
    "an integer in a longer head": "not in deterministic form",
    "a list body": "its body is not a map",
    "a string schema": "schema must be an integer",
    "a ref that is not an address": "refs must be full addresses",
    "a missing field": "bytes are not an event",
    "bytes that are not CBOR": "not valid CBOR",
}


def project(tmp_path: Path) -> Path:
    with open_ledger(tmp_path / ".oloproof", app=APPLICATION) as ledger:
        ledger.put(GOOD)
    return tmp_path


def test_verify_lists_every_record_import_would_refuse(tmp_path: Path) -> None:
    root = project(tmp_path)
    written = {why: append_raw(root / ".oloproof", data, "test.note") for why, data in BAD.items()}
    done = oloproof("verify", cwd=root)
    assert done.code == 1, done.err
    assert done.err == ""  # listed, not raised
    lines = done.lines
    for why, address in written.items():
        line = next((ln for ln in lines if address in ln), None)
        assert line is not None, f"{why} was not reported:\n{done.out}"
        assert line.startswith(f"malformed event {address}: "), line
        assert EXPECTED[why] in line, (why, line)
    assert lines[-1] == f"checked {len(BAD) + 1} event(s) and 0 ref(s): {len(BAD)} problem(s)"

    report = json.loads(oloproof("verify", "--json", cwd=root).out)
    assert sorted(p["address"] for p in report["problems"]) == sorted(written.values())
    assert {p["kind"] for p in report["problems"]} == {"MalformedEvent"}


def test_import_refuses_what_verify_reports(tmp_path: Path) -> None:
    """The same bytes, in an archive: import refuses each one before writing anything."""
    from tests.ledger.test_ledger_archive import write_archive

    from oloproof.store import ARCHIVE_MAGIC

    for why, data in BAD.items():
        archive = tmp_path / f"{len(why)}.oloarchive"
        write_archive(archive, [data], {}, magic=ARCHIVE_MAGIC)
        try:
            check_archive(archive, APPLICATION)
        except Exception as exc:  # what import would say
            assert "corrupt" in str(exc), (why, exc)
        else:
            raise AssertionError(f"import accepted {why}")
        done = oloproof("ledger", "import", str(archive), cwd=tmp_path)
        assert done.code == 2 and done.err.startswith("error: event sha256:"), (why, done.err)
        assert "Traceback" not in done.err
    assert not (tmp_path / ".oloproof").exists()


def test_an_event_the_indexer_cannot_file_is_reported_not_raised(tmp_path: Path) -> None:
    """A well-formed Oloproof event whose body lacks what its index needs (a second tool
    wrote it): the indexer raises on it, and verify reports that instead."""
    root = project(tmp_path)
    data = Event("oloproof.execution", 1, {"no identity": True}).to_bytes()
    address = append_raw(root / ".oloproof", data, "oloproof.execution")
    done = oloproof("verify", cwd=root)
    assert done.code == 1 and done.err == "", done.err
    assert any(
        line.startswith(f"malformed event {address}: the application cannot index it")
        for line in done.lines
    ), done.out


def test_refs_import_would_refuse_are_reported(tmp_path: Path) -> None:
    root = project(tmp_path)
    with tables(root / ".oloproof") as (txn, dbs):
        txn.put(b"has space", b"\x01" * 32, db=dbs[b"refs"])
        txn.put(b"short", b"\x01" * 5, db=dbs[b"refs"])
        txn.put(b"\xff\xfe", b"\x01" * 32, db=dbs[b"refs"])
    done = oloproof("verify", cwd=root)
    assert done.code == 1 and done.err == "", done.err
    assert done.lines[:3] == [
        "malformed ref 'has space': 'has space' is not a valid ref name: use 1-200 letters, "
        "digits and _ . : @ + = / -",
        "malformed ref 'short': it holds 5 bytes, not a 32-byte digest",
        "malformed ref '\\\\xff\\\\xfe': '\\\\xff\\\\xfe' is not a valid ref name: use 1-200 "
        "letters, digits and _ . : @ + = / -",
    ], done.out


def test_table_entries_no_write_makes_are_reported_not_raised(tmp_path: Path) -> None:
    root = project(tmp_path)
    address = append_raw(
        root / ".oloproof", Event("test.note", 1, {"n": 2}).to_bytes(), "test.note"
    )
    with tables(root / ".oloproof") as (txn, dbs):
        run = directory(txn, dbs)["runs"][-1]  # the run append_raw made for it
        table = dbs[b"run%02d" % run[1]]
        txn.put(ADDR_TAG + bytes.fromhex(address[7:]), b"\x00", db=table)  # not a sequence key
        txn.put(INDEX_TAG + b"\x00", b"\x01" * 32, db=table)  # not an index key
    done = oloproof("verify", cwd=root)
    assert done.code == 1 and done.err == "", done.err
    assert done.lines[:2] == [
        f"stale index runs: run{run[1]:02d} holds 1 key(s) that are no entry; run "
        "rebuild_indexes()",
        "stale index addr: 1 entry missing, 1 entry that a rebuild would drop; run "
        "rebuild_indexes()",
    ], done.out
