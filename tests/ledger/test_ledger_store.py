"""The LMDB ledger: writes, batches, refs, indexes, resolve, format records, map growth."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import lmdb
import pytest
from tests.ledger.contract import ambiguous_check
from tests.ledger.raw import ADDR_TAG, run_table_of

import ledger._writes as store_module
from ledger import (
    AddressError,
    AmbiguousAddressError,
    Application,
    CodecError,
    Event,
    FormatError,
    Indexer,
    Ledger,
    MissingEventError,
    RefConflictError,
    StoreError,
    UnknownAddressError,
    UnsupportedFormatError,
    address_of,
    encode,
    fold,
    new_ulid,
    open_ledger,
)


def note(i: int, **extra: object) -> Event:
    return Event("note", 1, {"i": i, **extra})


def by_case(address: str, event: Event) -> Iterable[tuple[str, str]]:
    if "case" in event.body:
        yield ("case", str(event.body["case"]))


@pytest.fixture
def ledger(tmp_path: Path) -> Iterator[Ledger]:
    with open_ledger(tmp_path / ".oloproof", indexer=by_case) as opened:
        yield opened


# -- events ----------------------------------------------------------------------------------


def test_put_returns_the_address_and_get_returns_the_event(ledger: Ledger) -> None:
    event = Event("note", 1, {"text": "hello", "n": [1, 2.5, None]})
    address = ledger.put(event)
    assert address == address_of(event)
    assert ledger.get(address) == event
    assert ledger.get_bytes(address) == event.to_bytes()
    assert ledger.has(address) and address in ledger


def test_put_is_idempotent(ledger: Ledger) -> None:
    first = ledger.put(note(1))
    with ledger.batch():
        assert ledger.put(note(1)) == first
        assert ledger.put(Event("note", 1, dict(reversed(list(note(1).body.items()))))) == first
    assert len(ledger) == 1
    assert ledger.lookup("type", "note") == [first]


def test_address_covers_type_schema_and_refs() -> None:
    base = Event("note", 1, {"a": 1})
    others = [
        Event("other", 1, {"a": 1}),
        Event("note", 2, {"a": 1}),
        Event("note", 1, {"a": 1}, [address_of(base)]),
    ]
    assert len({address_of(e) for e in [base, *others]}) == 4


def test_event_refuses_bad_fields() -> None:
    with pytest.raises(FormatError):
        Event("", 1, {})
    with pytest.raises(FormatError):
        Event("note", -1, {})
    with pytest.raises(FormatError):
        Event("note", True, {})
    with pytest.raises(FormatError):
        Event("note", 1, [])  # type: ignore[arg-type]
    with pytest.raises(AddressError):
        Event("note", 1, {}, ["sha256:abc"])
    with pytest.raises(FormatError):
        Event("note", 1, {}, "sha256:" + "0" * 64)
    with pytest.raises(CodecError):
        Event("note", 1, {"when": object()}).to_bytes()


def test_event_from_bytes_refuses_other_shapes() -> None:
    with pytest.raises(FormatError):
        Event.from_bytes(encode({"type": "x", "schema": 1, "body": {}}))
    with pytest.raises(FormatError):
        Event.from_bytes(encode([1, 2]))
    with pytest.raises(FormatError):
        Event.from_bytes(encode({"type": "x", "schema": 1, "body": [], "refs": []}))
    with pytest.raises(CodecError):
        Event.from_bytes(b"\xa4")


def test_events_in_append_order_and_fold(ledger: Ledger) -> None:
    addresses = [ledger.put(note(i)) for i in range(5)]
    with ledger.batch():
        addresses += [ledger.put(note(i)) for i in range(5, 2500)]  # more than one scan chunk
    assert [a for a, _ in ledger.events()] == addresses
    total = fold(ledger.events("note"), lambda s, pair: s + pair[1].body["i"], 0)
    assert total == sum(range(2500))


# -- batches ---------------------------------------------------------------------------------


def test_batch_commits_at_exit(tmp_path: Path, ledger: Ledger) -> None:
    with ledger.batch():
        address = ledger.put(note(1))
        other = open_ledger(tmp_path / ".oloproof")  # a second handle sees committed state
        assert not other.has(address)
    assert other.has(address)
    other.close()


def test_batch_aborts_on_exception(ledger: Ledger) -> None:
    kept = ledger.put(note(0))
    with pytest.raises(RuntimeError), ledger.batch():
        ledger.put(note(1))
        ledger.set_ref("latest", kept)
        raise RuntimeError("boom")
    assert len(ledger) == 1
    assert ledger.get_ref("latest") is None


def test_nested_batch_rolls_back_only_its_own_writes(ledger: Ledger) -> None:
    with ledger.batch():
        outer = ledger.put(note(1))
        try:
            with ledger.batch():
                inner = ledger.put(note(2))
                raise KeyError("inner")
        except KeyError:
            pass
        with ledger.batch():
            joined = ledger.put(note(3))
    assert ledger.has(outer) and ledger.has(joined)
    assert not ledger.has(inner)


def test_reads_inside_a_batch_see_its_writes(ledger: Ledger) -> None:
    before = ledger.put(note(0, case="c"))
    with ledger.batch():
        address = ledger.put(note(1, case="c"))
        ledger.put(note(0, case="c"))  # already committed: not counted twice
        assert ledger.has(address)
        assert ledger.get(address) == note(1, case="c")
        assert len(ledger) == 2
        assert ledger.lookup("case", "c") == [before, address]
        assert ledger.latest("case", "c") == address
        assert [a for a, _ in ledger.events()] == [before, address]
        assert [a for a, _ in ledger.events("note")] == [before, address]
        assert ledger.resolve(address[7:20]) == address
        ledger.set_ref("latest", address)
        assert ledger.get_ref("latest") == address
        assert ledger.refs() == [("latest", address)]
    assert ledger.get_ref("latest") == address


def test_long_batches_commit_in_chunks(ledger: Ledger, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(store_module, "CHUNK_EVENTS", 10)
    with pytest.raises(RuntimeError), ledger.batch():
        for i in range(25):
            ledger.put(note(i))
        raise RuntimeError("after two chunks")
    # The two full chunks were committed; the five events after them were dropped.
    assert len(ledger) == 20
    assert all(ledger.has(address_of(note(i))) for i in range(20))


def test_threads_can_share_one_ledger(ledger: Ledger) -> None:
    def work(start: int) -> None:
        for i in range(start, start + 50):
            ledger.put(note(i))

    threads = [threading.Thread(target=work, args=(k * 50,)) for k in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(ledger) == 150
    assert ledger.verify().ok


def test_map_grows_by_itself(tmp_path: Path) -> None:
    with open_ledger(tmp_path / ".oloproof", map_size=64 * 1024) as small:
        with small.batch():
            addresses = [small.put(note(i, pad="x" * 1000)) for i in range(400)]
        addresses.append(small.put(note(-1, pad="y" * 1000)))  # and outside a batch
        assert len(small) == 401
        assert all(small.has(a) for a in addresses)
        assert small.verify().ok


def test_map_grows_while_other_threads_read(tmp_path: Path) -> None:
    # LMDB may change the map size only while no transaction is open in the process: growing it
    # under a reader in another thread broke that reader (and later ones) until the gate.
    with open_ledger(tmp_path / ".oloproof", map_size=256 * 1024) as shared:
        first = [shared.put(note(i, pad="x" * 500)) for i in range(50)]
        start = shared._env.info()["map_size"]  # type: ignore[union-attr]
        errors: list[BaseException] = []
        reads = 0
        done = threading.Event()

        def read() -> None:
            nonlocal reads
            expected = [note(i, pad="x" * 500) for i in range(50)]
            while not done.is_set():
                try:
                    assert [shared.get(a) for a in first] == expected
                    assert shared.latest("type", "note") is not None
                    assert next(shared.lookup_events("type", "note"))[0] == first[0]
                except BaseException as exc:
                    errors.append(exc)
                    return
                reads += 1
                time.sleep(0.001)  # short reads with gaps: the writer gets the GIL too

        readers = [threading.Thread(target=read) for _ in range(2)]
        for thread in readers:
            thread.start()
        try:
            for chunk in range(30):
                with shared.batch():
                    for i in range(300):
                        shared.put(note(10_000 + chunk * 300 + i, pad=f"{chunk}-{i}" * 60))
        finally:
            done.set()
            for thread in readers:
                thread.join()
        assert errors == []
        assert reads > 0
        assert shared._env.info()["map_size"] >= 16 * start  # type: ignore[union-attr]
        assert len(shared) == 50 + 30 * 300
        assert shared.verify().ok


def test_a_snapshot_held_while_the_map_must_grow_is_refused_not_waited_on(tmp_path: Path) -> None:
    with open_ledger(tmp_path / ".oloproof", map_size=64 * 1024) as small:
        small.put(note(0))
        with small.snapshot():
            with pytest.raises(StoreError, match="holds a read transaction"):
                with small.batch():
                    for i in range(400):
                        small.put(note(i, pad="x" * 1000))
        assert len(small) == 1  # the batch was dropped whole
        small.put(note(1, pad="y" * 100_000))  # with the snapshot closed, the map grows
        assert len(small) == 2


# -- refs ------------------------------------------------------------------------------------


def test_set_ref_compare_and_swap(ledger: Ledger) -> None:
    a, b = ledger.put(note(1)), ledger.put(note(2))
    ledger.set_ref("latest", a, expected=None)
    with pytest.raises(RefConflictError, match="latest"):
        ledger.set_ref("latest", b, expected=None)
    with pytest.raises(RefConflictError):
        ledger.set_ref("latest", b, expected=b)
    ledger.set_ref("latest", b, expected=a)
    assert ledger.get_ref("latest") == b
    ledger.set_ref("latest", a)  # no expectation: always moves
    assert ledger.get_ref("latest") == a


def test_ref_swap_is_checked_again_at_commit(tmp_path: Path, ledger: Ledger) -> None:
    a, b = ledger.put(note(1)), ledger.put(note(2))
    with pytest.raises(RefConflictError), ledger.batch():
        new = ledger.put(note(3))
        ledger.set_ref("latest", a, expected=None)
        with open_ledger(tmp_path / ".oloproof") as rival:
            rival.set_ref("latest", b)  # another writer gets there first
    # The whole batch was refused: no event, and the rival's ref stands.
    assert not ledger.has(new)
    assert ledger.get_ref("latest") == b


def test_ref_target_must_be_stored(ledger: Ledger) -> None:
    with pytest.raises(MissingEventError):
        ledger.set_ref("latest", "sha256:" + "1" * 64)


@pytest.mark.parametrize(
    "name", ["", "has space", "deadbeef", "DEADBEEF00", "sha256:ab", "-x", "x" * 201]
)
def test_ref_names_are_checked(ledger: Ledger, name: str) -> None:
    address = ledger.put(note(1))
    with pytest.raises(AddressError):
        ledger.set_ref(name, address)


def test_ref_names_that_are_fine(ledger: Ledger) -> None:
    address = ledger.put(note(1))
    names = [f"run_{new_ulid()}", "latest", "runs/main/latest", "a.b-c@d+e=f:g", "beef"]
    for name in names:
        ledger.set_ref(name, address)
        assert ledger.resolve(name) == address
    assert [n for n, _ in ledger.refs()] == sorted(names)


# -- resolve ---------------------------------------------------------------------------------


def test_ambiguous_eight_digit_prefix(ledger: Ledger) -> None:
    # A real 8-hex-digit collision needs ~65,000 events; instead add an address entry whose
    # key shares a's first 8 digits (prefix search reads only the address entries).
    a, b = ledger.put(note(1)), ledger.put(note(2))
    twin = "sha256:" + a[7:15] + b[15:]

    def body(txn: Any) -> None:
        table = run_table_of(ledger, txn, 2)
        seq = txn.get(ADDR_TAG + bytes.fromhex(b[7:]), db=table)
        txn.put(ADDR_TAG + bytes.fromhex(twin[7:]), seq, db=table)

    ledger._write(body)
    ambiguous_check(ledger, [a, twin])
    with pytest.raises(AmbiguousAddressError, match="give more digits"):
        ledger.resolve("sha256:" + a[7:15])
    assert ledger.resolve(a[7:17]) == a


def test_ambiguity_in_a_batch(ledger: Ledger) -> None:
    events = [note(i) for i in range(40)]
    addresses = [address_of(e) for e in events]
    groups: dict[str, list[str]] = {}
    for address in addresses:
        groups.setdefault(address[7], []).append(address)
    shared = next(g for g in groups.values() if len(g) > 1)
    with ledger.batch():
        for event in events:
            ledger.put(event)
        assert sorted(ledger._by_prefix(shared[0][7], 100)) == sorted(shared)


def test_unknown_things_are_named_in_the_message(ledger: Ledger) -> None:
    ledger.put(note(1))
    with pytest.raises(UnknownAddressError, match="run_nothing"):
        ledger.resolve("run_nothing")
    with pytest.raises(UnknownAddressError, match="sha256:" + "0" * 64):
        ledger.get("sha256:" + "0" * 64)


# -- indexes ---------------------------------------------------------------------------------


def test_lookup_and_latest(ledger: Ledger) -> None:
    first = ledger.put(note(1, case="c1"))
    ledger.put(note(2, case="c2"))
    third = ledger.put(note(3, case="c1"))
    assert ledger.lookup("case", "c1") == [first, third]
    assert ledger.latest("case", "c1") == third
    assert ledger.latest("case", "nothing") is None
    assert ledger.lookup("case", "nothing") == []
    assert ledger.lookup("type", "note") == [
        first,
        ledger.resolve(address_of(note(2, case="c2"))),
        third,
    ]
    assert ledger.latest("nothing", "c1") is None


def test_long_index_keys_and_names(tmp_path: Path) -> None:
    long_key = "k" * 1000

    def indexer(address: str, event: Event) -> Iterable[tuple[str, str]]:
        yield ("n" * 300, long_key)
        yield ("plain", "é\x00x")

    with open_ledger(tmp_path / ".oloproof", indexer=indexer) as led:
        a = led.put(note(1))
        assert led.lookup("n" * 300, long_key) == [a]
        assert led.lookup("plain", "é\x00x") == [a]
        assert led.lookup("plain", "é") == []
        assert led.verify().ok


def recording_indexer(calls: list[str]) -> Indexer:
    """An indexer filing every event under ("all", "x") and noting each address it is given."""

    def indexer(address: str, event: Event) -> Iterable[tuple[str, str]]:
        calls.append(address)
        return [("all", "x")]

    return indexer


def test_indexer_runs_only_for_new_events(tmp_path: Path) -> None:
    calls: list[str] = []
    indexer = recording_indexer(calls)
    with open_ledger(tmp_path / ".oloproof", indexer=indexer) as led:
        a = led.put(note(1))
        led.put(note(1))
        assert calls == [a]
        assert led.lookup("all", "x") == [a]


def test_put_all_commits_apart_from_the_open_batch(ledger: Ledger) -> None:
    # The batch rolls back; what put_all stored while it was open stays, and is read at once.
    items = [ledger.prepare(note(i)) for i in range(3)]
    with pytest.raises(RuntimeError, match="boom"), ledger.batch():
        in_batch = ledger.put(note(99))
        assert ledger.put_all(items + items[:1]) == 3  # a repeat is stored once
        assert [ledger.get(item.address) for item in items] == [note(0), note(1), note(2)]
        raise RuntimeError("boom")
    assert not ledger.has(in_batch)
    assert all(ledger.has(item.address) for item in items)
    assert ledger.put_all(items) == 0  # all stored already
    assert len(ledger) == 3


def test_a_prepared_event_is_stored_only_when_put(tmp_path: Path) -> None:
    calls: list[str] = []
    indexer = recording_indexer(calls)
    with open_ledger(tmp_path / ".oloproof", indexer=indexer) as led:
        item = led.prepare(note(7))
        assert item.address == address_of(note(7))
        assert item.data == note(7).to_bytes()
        assert calls == [item.address]  # the index entries are worked out as it is prepared
        assert not led.has(item.address)
        assert led.lookup("all", "x") == []
        with led.batch():
            assert led.put_prepared(item) == item.address
            assert led.lookup("all", "x") == [item.address]  # the batch sees it
        assert led.put_prepared(item) == item.address  # already stored: a no-op
        assert led.get(item.address) == note(7)
        assert led.lookup("all", "x") == [item.address]
        assert len(led) == 1
        assert calls == [item.address]
        assert led.verify().ok


def test_type_index_name_is_reserved(tmp_path: Path) -> None:
    with open_ledger(tmp_path / ".oloproof", indexer=lambda a, e: [("type", "x")]) as led:
        with pytest.raises(ValueError, match="reserved"):
            led.put(note(1))


def test_rebuild_indexes_restores_them(ledger: Ledger) -> None:
    addresses = [ledger.put(note(i, case=f"c{i % 3}")) for i in range(30)]

    def wipe(txn: Any) -> None:
        for table in ledger._run_dbs:  # type: ignore[attr-defined]
            txn.drop(table, delete=False)

    ledger._write(wipe)
    assert ledger.lookup("case", "c0") == []
    assert not ledger.verify().ok
    ledger.rebuild_indexes()
    assert ledger.verify().ok
    assert ledger.lookup("case", "c0") == addresses[0::3]
    assert all(ledger.has(a) for a in addresses)


# -- opening, formats, closing ---------------------------------------------------------------


def test_missing_ledger_without_create(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="no ledger at"):
        open_ledger(tmp_path / "nowhere", create=False)
    with pytest.raises(StoreError, match="no ledger at"):
        open_ledger(tmp_path / "nowhere", readonly=True)
    assert not (tmp_path / "nowhere").exists()


def test_readonly_refuses_writes(tmp_path: Path) -> None:
    open_ledger(tmp_path / ".oloproof").close()
    with open_ledger(tmp_path / ".oloproof", readonly=True) as led:
        with pytest.raises(StoreError, match="read-only"):
            led.put(note(1))
        with pytest.raises(StoreError, match="read-only"), led.batch():
            pass


def test_closed_ledger_refuses_use(tmp_path: Path) -> None:
    led = open_ledger(tmp_path / ".oloproof")
    address = led.put(note(1))
    led.close()
    led.close()  # closing twice is fine
    with pytest.raises(StoreError, match="closed"):
        led.get(address)
    with open_ledger(tmp_path / ".oloproof") as again:  # and it reopens with everything there
        assert again.get(address) == note(1)


def _set_format(path: Path, record: bytes) -> None:
    env = lmdb.open(str(path / "ledger"), max_dbs=8)
    meta = env.open_db(b"meta")
    with env.begin(write=True) as txn:
        txn.put(b"format", record, db=meta)
    env.close()


def test_newer_format_is_refused(tmp_path: Path) -> None:
    open_ledger(tmp_path / ".oloproof").close()
    _set_format(tmp_path / ".oloproof", encode({"format": 3, "extensions": []}))
    with pytest.raises(
        UnsupportedFormatError, match="ledger format 3.*this ledger reads ≤2.*upgrade"
    ):
        open_ledger(tmp_path / ".oloproof")
    # The application names itself in the message; the ledger never names one.
    app = Application(name="evalkit")
    with pytest.raises(UnsupportedFormatError, match="this evalkit reads ≤2"):
        open_ledger(tmp_path / ".oloproof", app=app)


def test_unknown_extension_is_refused(tmp_path: Path) -> None:
    open_ledger(tmp_path / ".oloproof").close()
    _set_format(tmp_path / ".oloproof", encode({"format": 2, "extensions": ["zstd-bodies"]}))
    with pytest.raises(UnsupportedFormatError, match="zstd-bodies"):
        open_ledger(tmp_path / ".oloproof")


@pytest.mark.parametrize(
    "record", [b"\xff", encode({"format": "one"}), encode({"format": 0, "extensions": []})]
)
def test_unreadable_format_record(tmp_path: Path, record: bytes) -> None:
    open_ledger(tmp_path / ".oloproof").close()
    _set_format(tmp_path / ".oloproof", record)
    with pytest.raises(FormatError):
        open_ledger(tmp_path / ".oloproof")


def test_other_lmdb_environment_is_not_a_ledger(tmp_path: Path) -> None:
    (tmp_path / "x" / "ledger").mkdir(parents=True)
    env = lmdb.open(str(tmp_path / "x" / "ledger"), max_dbs=2)
    env.open_db(b"something")
    env.close()
    with pytest.raises(FormatError, match="is not a ledger: it has no format record"):
        open_ledger(tmp_path / "x")


def test_one_environment_per_process(tmp_path: Path) -> None:
    first = open_ledger(tmp_path / ".oloproof")
    second = open_ledger(tmp_path / ".oloproof")
    address = first.put(note(1))
    first.close()  # the shared environment stays open for the second handle
    assert second.get(address) == note(1)
    second.close()


def test_new_ulid_is_monotonic_and_well_formed() -> None:
    ids = [new_ulid() for _ in range(2000)]
    assert ids == sorted(ids) and len(set(ids)) == len(ids)
    assert all(len(i) == 26 and set(i) <= set("0123456789ABCDEFGHJKMNPQRSTVWXYZ") for i in ids)


OPEN_WHILE_WRITING = """
import sys, threading, time
import ledger._writes as writes
from ledger import Event, open_ledger

path = sys.argv[1]
inside = threading.Event()
tip = writes._chain_tip

def slow_tip(txn, chain_db):
    inside.set()  # the write transaction is open: the commit goes on after a pause
    time.sleep(0.3)
    return tip(txn, chain_db)

with open_ledger(path) as first:
    writes._chain_tip = slow_tip
    writer = threading.Thread(target=first.put, args=(Event("note", 1, {"i": 1}),))
    writer.start()
    inside.wait()
    with open_ledger(path) as second:  # the same file, opened again in this process
        pass
    writer.join()
    print(len(first))
"""


def test_a_ledger_opens_while_another_thread_of_the_process_commits(tmp_path: Path) -> None:
    # Opening its tables took LMDB's write lock while holding the GIL: with a commit running on
    # another thread (a run's writer while a system opens the project's ledger), both waited.
    path = tmp_path / ".oloproof"
    open_ledger(path).close()
    try:
        done = subprocess.run(
            [sys.executable, "-c", OPEN_WHILE_WRITING, str(path)],
            capture_output=True,
            text=True,
            timeout=60,
        )
    except subprocess.TimeoutExpired:
        pytest.fail("opening the ledger waited for a commit that waited for it")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["1"]
