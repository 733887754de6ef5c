"""Reading many events at once: get_many, lookup_events, latest_event, chunked scans.

Each must give exactly what the one-at-a-time reads give (``get`` of each address from
``lookup`` / ``latest``), check every event against its address, and see a batch's pending
events.
"""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path

import pytest
from tests.ledger.raw import INDEX_TAG, run_table_of
from tests.ledger.tamper import flip_byte_of

import ledger._reads as store_module
from ledger import (
    AddressError,
    CorruptEventError,
    Event,
    Ledger,
    UnknownAddressError,
    address_of,
    open_ledger,
)
from ledger.store import index_prefix

MISSING = "sha256:" + "ab" * 32


def by_case(address: str, event: Event) -> Iterable[tuple[str, str]]:
    if "case" in event.body:
        yield ("case", str(event.body["case"]))
        yield ("run", "r1")


def case(i: int, attempt: int = 0) -> Event:
    return Event("case", 1, {"case": f"c{i % 3}", "i": i, "attempt": attempt, "pad": "p" * 50})


@pytest.fixture
def ledger(tmp_path: Path) -> Iterator[Ledger]:
    with open_ledger(tmp_path / ".oloproof", indexer=by_case) as opened:
        yield opened


@pytest.fixture
def small_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Read 4 records per read transaction, so a dozen events span several chunks."""
    monkeypatch.setattr(store_module, "_SCAN_CHUNK", 4)


def fill(ledger: Ledger, n: int = 13) -> list[str]:
    with ledger.batch():
        return [ledger.put(case(i)) for i in range(n)]


# -- get_many --------------------------------------------------------------------------------


@pytest.mark.usefixtures("small_chunks")
def test_get_many_is_get_of_each_in_order(ledger: Ledger) -> None:
    addresses = fill(ledger)
    wanted = [*reversed(addresses), addresses[0], addresses[0]]  # any order, repeats allowed
    assert ledger.get_many(wanted) == [ledger.get(a) for a in wanted]
    assert ledger.get_many(iter(addresses[:2])) == [case(0), case(1)]
    assert ledger.get_many([]) == []


def test_get_many_names_what_it_cannot_read(ledger: Ledger) -> None:
    addresses = fill(ledger, 3)
    with pytest.raises(UnknownAddressError, match=MISSING):
        ledger.get_many([addresses[0], MISSING, addresses[1]])
    with pytest.raises(AddressError):
        ledger.get_many([addresses[0], "sha256:abc"])
    with pytest.raises(TypeError, match="not one address"):
        ledger.get_many(addresses[0])


def test_get_many_sees_a_batch_pending_events(ledger: Ledger) -> None:
    committed = ledger.put(case(0))
    with ledger.batch():
        waiting = ledger.put(case(1))
        assert ledger.get_many([waiting, committed]) == [case(1), case(0)]


# -- lookup_events and events ------------------------------------------------------------------


@pytest.mark.usefixtures("small_chunks")
def test_lookup_events_is_lookup_then_get(ledger: Ledger) -> None:
    fill(ledger)
    for index, key in [("case", "c1"), ("run", "r1"), ("type", "case"), ("case", "none")]:
        expected = [(a, ledger.get(a)) for a in ledger.lookup(index, key)]
        assert list(ledger.lookup_events(index, key)) == expected
    assert len(list(ledger.lookup_events("run", "r1"))) == 13


@pytest.mark.usefixtures("small_chunks")
def test_scans_span_chunks_in_append_order(ledger: Ledger) -> None:
    addresses = fill(ledger)
    ledger.put(Event("other", 1, {}))
    assert [a for a, _ in ledger.events("case")] == addresses
    assert [a for a, _ in ledger.events()] == [*addresses, address_of(Event("other", 1, {}))]
    for n in (3, 4, 8):  # a last chunk that is full, exactly at the edge, or short
        with open_ledger(ledger.path.parent / f"n{n}") as other:
            written = fill(other, n)
            assert [a for a, _ in other.events()] == written
            assert [a for a, _ in other.events("case")] == written


@pytest.mark.usefixtures("small_chunks")
def test_iter_lookup_is_lookup_a_chunk_at_a_time(ledger: Ledger) -> None:
    """Chunks of 4 entries: a key's entries span several, and another key's entries sit right
    after them (the scan must stop at the key's last entry, not at a chunk's end)."""
    addresses = fill(ledger, 12)
    assert list(ledger.iter_lookup("run", "r1")) == addresses
    assert list(ledger.iter_lookup("case", "c0")) == addresses[::3]
    assert ledger.lookup("case", "c1") == addresses[1::3]
    assert list(ledger.iter_lookup("case", "c9")) == []
    with ledger.batch():
        waiting = ledger.put(case(12, attempt=1))
        assert list(ledger.iter_lookup("case", "c0")) == [*addresses[::3], waiting]


def test_lookup_events_sees_a_batch_pending_events(ledger: Ledger) -> None:
    first = ledger.put(case(0))
    with ledger.batch():
        again = ledger.put(case(0))  # already committed: listed once, where it was stored
        waiting = ledger.put(case(3))
        ledger.put(case(1))  # filed under another case
        assert again == first
        assert list(ledger.lookup_events("case", "c0")) == [(first, case(0)), (waiting, case(3))]
        assert ledger.lookup("case", "c0") == [first, waiting]


def test_a_corrupt_event_stops_the_scan_and_is_named(tmp_path: Path) -> None:
    path = tmp_path / ".oloproof"
    with open_ledger(path, indexer=by_case) as ledger:
        addresses = fill(ledger, 5)
        victim = addresses[2]
        stored = ledger.get_bytes(victim)
    flip_byte_of(path, stored)
    with open_ledger(path, indexer=by_case) as ledger:
        for read in (
            lambda: list(ledger.lookup_events("run", "r1")),
            lambda: list(ledger.events("case")),
            lambda: ledger.get_many(addresses),
            lambda: ledger.latest_event("case", "c2"),
        ):
            with pytest.raises(CorruptEventError, match=victim):
                read()


# -- latest_event ----------------------------------------------------------------------------


def test_latest_event_is_latest_then_get(ledger: Ledger) -> None:
    fill(ledger, 7)
    for key in ("c0", "c1", "c2"):
        address = ledger.latest("case", key)
        assert address is not None
        assert ledger.latest_event("case", key) == (address, ledger.get(address))
    assert ledger.latest_event("case", "none") is None
    assert ledger.latest_event("nothing", "c0") is None


def test_latest_event_inside_a_batch(ledger: Ledger) -> None:
    first = ledger.put(case(0))
    with ledger.batch():
        assert ledger.latest_event("case", "c0") == (first, case(0))
        waiting = ledger.put(case(0, attempt=1))
        assert ledger.latest_event("case", "c0") == (waiting, case(0, attempt=1))
        ledger.put(case(0))  # stored before the batch: not the latest again
        assert ledger.latest_event("case", "c0") == (waiting, case(0, attempt=1))
        assert ledger.latest("case", "c0") == waiting


def test_latest_passes_over_a_stale_entry(ledger: Ledger) -> None:
    addresses = fill(ledger, 3)
    # An entry filed after the real one of c1, whose sequence number holds another event (c2)
    # while its value is the head of c0's digest: no event it could name is filed under c1.
    entry = index_prefix("case", "c1") + (3).to_bytes(8, "big")
    head = bytes.fromhex(addresses[0][7:])[:4]
    ledger._write(lambda txn: txn.put(INDEX_TAG + entry, head, db=run_table_of(ledger, txn, 3)))
    assert ledger.latest("case", "c1") == addresses[1]
    assert ledger.latest_event("case", "c1") == (addresses[1], case(1))
    assert ledger.lookup("case", "c1") == [addresses[1]]
    assert [address for address, _ in ledger.lookup_events("case", "c1")] == [addresses[1]]
    assert not ledger.verify().ok  # and verify says the index is stale


# -- threads and other processes ----------------------------------------------------------


def test_threads_read_while_one_writes(ledger: Ledger) -> None:
    addresses = fill(ledger, 30)
    failures: list[BaseException] = []

    def read() -> None:
        try:
            for _ in range(20):
                assert ledger.get_many(addresses) == [case(i) for i in range(30)]
                assert len(list(ledger.lookup_events("run", "r1"))) >= 30
                assert ledger.latest_event("case", "c0") is not None
        except BaseException as exc:  # reported by the main thread
            failures.append(exc)

    readers = [threading.Thread(target=read) for _ in range(3)]
    for reader in readers:
        reader.start()
    for i in range(30, 230):
        ledger.put(case(i))
    for reader in readers:
        reader.join()
    assert failures == []
    assert ledger.verify().ok


GROWER = """
import sys
from ledger import Event, open_ledger

with open_ledger(sys.argv[1], map_size=256 * 1024) as ledger, ledger.batch():
    for i in range(3000):
        ledger.put(Event("grown", 1, {"i": i, "pad": "z" * 400}))
"""


def test_reads_after_another_process_grew_the_map(tmp_path: Path) -> None:
    path = tmp_path / ".oloproof"
    with open_ledger(path, map_size=256 * 1024) as ledger:
        first = ledger.put(Event("first", 1, {}))
        assert ledger.get(first) == Event("first", 1, {})  # leaves a read transaction to renew
        subprocess.run([sys.executable, "-c", GROWER, str(path)], check=True)
        assert ledger.get(first) == Event("first", 1, {})
        assert ledger.has(address_of(Event("grown", 1, {"i": 2999, "pad": "z" * 400})))
        assert sum(1 for _ in ledger.events("grown")) == 3000
        assert len(ledger) == 3001
        ledger.put(Event("after", 1, {}))
        assert ledger.verify().ok
