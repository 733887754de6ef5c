"""verify: every problem reported, each named, nothing changed; tamper with one byte."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.ledger.raw import ADDR_TAG, INDEX_TAG, run_table_of
from tests.ledger.tamper import flip_byte_of

from ledger import (
    CorruptEventError,
    Event,
    Ledger,
    Problem,
    address_of,
    open_ledger,
)
from ledger.store import index_prefix

MISSING = "sha256:" + "ab" * 32


def by_case(address: str, event: Event) -> Iterable[tuple[str, str]]:
    if "case" in event.body:
        yield ("case", str(event.body["case"]))


def build(path: Path) -> list[str]:
    """A small ledger: a root, cases linking to it, a ref; returns the addresses in order."""
    with open_ledger(path, indexer=by_case) as ledger, ledger.batch():
        root = ledger.put(Event("run.started", 1, {"run": "r1"}))
        cases = [
            ledger.put(Event("case", 1, {"case": f"c{i}", "text": "x" * 40 + str(i)}, [root]))
            for i in range(5)
        ]
        ledger.set_ref("latest", root)
    return [root, *cases]


def test_clean_ledger_verifies(tmp_path: Path) -> None:
    addresses = build(tmp_path / ".oloproof")
    calls: list[tuple[int, int]] = []
    with open_ledger(tmp_path / ".oloproof", indexer=by_case) as ledger:
        report = ledger.verify(lambda done, total: calls.append((done, total)))
    assert report.ok and report.problems == []
    assert report.events_checked == len(addresses)
    assert report.refs_checked == 1
    assert calls[-1] == (len(addresses), len(addresses))
    assert str(report).endswith(": ok")


def test_one_flipped_byte_is_found_and_named(tmp_path: Path) -> None:
    path = tmp_path / ".oloproof"
    addresses = build(path)
    victim = addresses[3]
    with open_ledger(path, indexer=by_case) as ledger:
        stored = ledger.get_bytes(victim)
    flip_byte_of(path, stored)
    with open_ledger(path, indexer=by_case) as ledger:
        report = ledger.verify()
        assert not report.ok
        assert [(p.kind, p.address) for p in report.problems] == [("CorruptEvent", victim)]
        assert str(report.problems[0]).startswith(f"corrupt event {victim}: its bytes hash to")
        with pytest.raises(CorruptEventError, match=victim):
            ledger.get(victim)
        with pytest.raises(CorruptEventError, match=victim):
            list(ledger.events())
        # Nothing was deleted or repaired: the evidence stays.
        assert len(ledger) == len(addresses)
        assert ledger.has(victim)
        assert ledger.get(addresses[2]) is not None
        # Rebuilding the indexes does not hide it either.
        ledger.rebuild_indexes()
        assert [p.kind for p in ledger.verify().problems] == ["CorruptEvent"]


def test_every_problem_is_reported(tmp_path: Path) -> None:
    path = tmp_path / ".oloproof"
    addresses = build(path)
    with open_ledger(path, indexer=by_case) as ledger:
        orphan = ledger.put(Event("case", 1, {"case": "c9"}, [MISSING, addresses[0]]))
        # A ref to an event that is not there, and a stale index entry, written behind the
        # ledger's back.
        ledger._write(lambda txn: txn.put(b"gone", bytes.fromhex(MISSING[7:]), db=ledger._refs))
        ledger._write(lambda txn: _delete_first_case_entry(txn, ledger))
        stored = ledger.get_bytes(addresses[2])  # not c0, whose index entry went above
    flip_byte_of(path, stored)
    with open_ledger(path, indexer=by_case) as ledger:
        report = ledger.verify()
    kinds = sorted(p.kind for p in report.problems)
    assert kinds == ["CorruptEvent", "DanglingName", "MissingRef", "StaleIndex", "StaleIndex"]
    text = [str(p) for p in report.problems]
    assert f"broken link from {orphan} to {MISSING}" in text
    assert f"dangling ref gone to missing event {MISSING}" in text
    assert any(t.startswith("stale index case: 1 entry missing") for t in text)
    assert any(t.startswith("stale index runs: run 1 (run00) is listed with") for t in text)
    assert report.events_checked == len(addresses) + 1


def test_a_missing_target_is_reported_for_every_event_that_links_to_it(tmp_path: Path) -> None:
    # Verify remembers what each ref target it asked about turned out to be: a second link to
    # the same missing event is a problem of its own, and links to present ones are none.
    path = tmp_path / ".oloproof"
    addresses = build(path)
    with open_ledger(path, indexer=by_case) as ledger:
        linking = [
            ledger.put(Event("note", 1, {"n": n}, [MISSING, addresses[0], addresses[1]]))
            for n in range(3)
        ]
        report = ledger.verify()
    assert [(p.kind, p.address, p.target) for p in report.problems] == [
        ("MissingRef", address, MISSING) for address in linking
    ]


def _delete_first_case_entry(txn: Any, ledger: Ledger) -> None:
    for table in ledger._run_dbs:  # type: ignore[attr-defined]
        for key, _ in txn.cursor(db=table):
            if key[:1] == INDEX_TAG and b"case" in key:
                txn.delete(key, db=table)
                return
    raise AssertionError("no case index entry")


def test_extra_index_entries_are_stale(tmp_path: Path) -> None:
    path = tmp_path / ".oloproof"
    build(path)
    with open_ledger(path, indexer=by_case) as ledger:
        key = index_prefix("z", "k") + b"\x00" * 8

        def extra(txn: Any) -> None:
            table = run_table_of(ledger, txn, 1)
            txn.put(INDEX_TAG + key, b"x" * 4, db=table)
            txn.put(ADDR_TAG + b"y" * 32, b"\x00" * 7 + b"\x09", db=table)

        ledger._write(extra)
        problems = ledger.verify().problems
        assert sorted(str(p) for p in problems) == [
            "stale index addr: 1 entry that a rebuild would drop; run rebuild_indexes()",
            "stale index runs: run 1 (run00) is listed with 17 entries but holds 19; "
            "run rebuild_indexes()",
            "stale index z: 1 entry that a rebuild would drop; run rebuild_indexes()",
        ]
        ledger.rebuild_indexes()
        assert ledger.verify().ok


def test_indexes_of_another_indexer_are_noted_not_judged(tmp_path: Path) -> None:
    path = tmp_path / ".oloproof"
    build(path)
    with open_ledger(path) as plain:  # no indexer: the case index cannot be checked
        report = plain.verify()
    assert report.ok
    assert report.notes == [
        "application indexes were not checked: the ledger was opened without its indexer"
    ]
    with open_ledger(path, indexer=lambda a, e: []) as other:  # an indexer that files nothing
        problems = other.verify().problems
    assert [str(p) for p in problems] == [
        "stale index case: 5 entries that a rebuild would drop; run rebuild_indexes()"
    ]


def test_extra_checks_add_their_problems(tmp_path: Path) -> None:
    path = tmp_path / ".oloproof"
    addresses = build(path)

    def summaries(ledger: Ledger) -> Iterable[Problem]:
        yield Problem("StaleSummary", addresses[0], "the stored pass rate is 0.5, replay gives 0.4")

    with open_ledger(path, indexer=by_case) as ledger:
        report = ledger.verify(extra_checks=[summaries])
    assert [p.kind for p in report.problems] == ["StaleSummary"]
    assert str(report.problems[0]) == (
        f"StaleSummary {addresses[0]}: the stored pass rate is 0.5, replay gives 0.4"
    )
    assert report.to_dict()["problems"][0]["kind"] == "StaleSummary"


def test_flipped_byte_in_every_event_position_is_caught(tmp_path: Path) -> None:
    path = tmp_path / ".oloproof"
    with open_ledger(path) as ledger:
        event = Event("note", 1, {"text": "abcdefgh"})
        address = ledger.put(event)
        size = len(ledger.get_bytes(address))
    for offset in range(size):
        flip_byte_of(path, event.to_bytes(), offset)
        with open_ledger(path) as ledger:
            assert [p.address for p in ledger.verify().problems] == [address], offset
        flip_byte_of(path, _flipped(event.to_bytes(), offset), offset)  # and back again
    with open_ledger(path) as ledger:
        assert ledger.verify().ok
        assert ledger.get(address) == event


def _flipped(data: bytes, offset: int) -> bytes:
    out = bytearray(data)
    out[offset] ^= 0x01
    return bytes(out)


def test_address_of_is_what_verify_checks(tmp_path: Path) -> None:
    with open_ledger(tmp_path / ".oloproof") as ledger:
        event = Event("note", 1, {"a": [1, 2]})
        assert ledger.put(event) == address_of(event)


def test_a_check_that_raises_is_a_problem_not_an_exception(tmp_path: Path) -> None:
    def broken(ledger: object) -> list[Problem]:
        raise KeyError("run_id")

    def half(ledger: object) -> Iterator[Problem]:
        yield Problem("StaleSummary", "sha256:" + "ab" * 32, "found before it broke")
        raise RuntimeError("boom")

    with open_ledger(tmp_path / ".oloproof") as ledger:
        ledger.put(Event("note", 1, {}))
        report = ledger.verify(extra_checks=[broken, half])
    assert [(p.kind, p.name, p.detail) for p in report.problems] == [
        ("CheckFailed", "broken", "KeyError: 'run_id'"),
        ("StaleSummary", None, "found before it broke"),
        ("CheckFailed", "half", "RuntimeError: boom"),
    ]
