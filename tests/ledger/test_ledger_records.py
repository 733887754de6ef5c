"""Compressed event records and the compact index layout, on the real LMDB store.

A commit that brings enough events trains the ledger's zstd dictionary; records written from
then on hold frames, and every read gives back the canonical bytes the address is the hash of.
Index keys spell addresses and hex digests as their bytes, and entries keep a digest's head.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import cbor2
import lmdb
import pytest
from tests.fixtures.ledger.make_fixtures import case_index

from ledger import (
    Application,
    CorruptEventError,
    Event,
    StaleIndexesError,
    export_archive,
    import_archive,
    open_ledger,
)
from ledger._records import ZSTD_MAGIC
from ledger.compact import compact_ledger
from ledger.format import index_prefix
from ledger.verify import CORRUPT_EVENT

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "ledger"
ENOUGH = 400  # events of about 600 bytes: past both of the dictionary's training thresholds


def note(i: int, run: str = "r1") -> Event:
    # Repetitive keys and values, as events are, and a part that differs in each.
    body = {
        "run_id": run,
        "case_id": f"c{i}",
        "status": "ok" if i % 3 else "errored",
        "verdicts": {"answer_correct": {"s": "pass" if i % 2 else "fail"}},
        "identity": hashlib.sha256(str(i).encode()).hexdigest(),
        "text": " ".join(f"word{(i * 7 + j) % 50}" for j in range(60)),
    }
    return Event("note", 1, body)


def by_run(address: str, event: Event) -> list[tuple[str, str]]:
    return [
        ("run", event.body["run_id"]),
        ("identity", event.body["identity"]),
        ("linked", address),
    ]


def raw_records(path: Path) -> list[tuple[bytes, bytes]]:
    env = lmdb.open(str(path / "ledger"), readonly=True, lock=False, max_dbs=8)
    try:
        with env.begin() as txn:
            db = env.open_db(b"events", txn=txn, create=False)
            return [(bytes(v[:32]), bytes(v[32:])) for _, v in txn.cursor(db=db)]
    finally:
        env.close()


def format_record(path: Path) -> dict[str, object]:
    env = lmdb.open(str(path / "ledger"), readonly=True, lock=False, max_dbs=8)
    try:
        with env.begin() as txn:
            meta = env.open_db(b"meta", txn=txn, create=False)
            raw = txn.get(b"format", db=meta)
            assert raw is not None
            record: dict[str, object] = cbor2.loads(raw)
            return record
    finally:
        env.close()


def rewrite_record(path: Path, digest: bytes, change: bytes) -> None:
    env = lmdb.open(str(path / "ledger"), max_dbs=8)
    try:
        with env.begin(write=True) as txn:
            db = env.open_db(b"events", txn=txn, create=False)
            for key, value in txn.cursor(db=db):
                if value[:32] == digest:
                    txn.put(key, digest + change, db=db)
                    return
    finally:
        env.close()
    raise AssertionError("no such record")


def filled(path: Path, n: int = ENOUGH) -> list[tuple[str, Event]]:
    events = [note(i) for i in range(n)]
    with open_ledger(path, indexer=by_run) as ledger, ledger.batch():
        return [(ledger.put(event), event) for event in events]


def test_a_big_commit_trains_a_dictionary_and_every_read_gives_the_canonical_bytes(
    tmp_path: Path,
) -> None:
    path = tmp_path / "l"
    with open_ledger(path, indexer=by_run) as ledger:
        small = ledger.put(note(-1))  # a commit too small to learn from: stored as it is
    put = filled(path)
    records = dict(raw_records(path))
    assert records[bytes.fromhex(small[7:])] == note(-1).to_bytes()
    frames = [stored for stored in records.values() if stored[:4] == ZSTD_MAGIC]
    assert len(frames) == ENOUGH  # every event of the big commit, none of the first
    assert sum(map(len, frames)) < 0.5 * sum(len(e.to_bytes()) for _, e in put)
    assert "zstd-records" in format_record(path)["extensions"]  # type: ignore[operator]

    with open_ledger(path, indexer=by_run, readonly=True) as ledger:
        for address, event in put[:50]:
            assert ledger.get_bytes(address) == event.to_bytes()
            assert hashlib.sha256(ledger.get_bytes(address)).hexdigest() == address[7:]
            assert ledger.get(address) == event
        assert ledger.get_many([a for a, _ in put]) == [e for _, e in put]
        assert [e for _, e in ledger.events()] == [note(-1)] + [e for _, e in put]
        assert list(ledger.lookup_events("run", "r1")) == [(small, note(-1)), *put]
        assert ledger.lookup("run", "r1") == [small] + [a for a, _ in put]
        address, event = put[7]
        assert ledger.latest_event("identity", event.body["identity"]) == (address, event)
        assert ledger.latest("linked", address) == address
        report = ledger.verify()
        assert report.ok, str(report)
        assert report.events_checked == ENOUGH + 1


def test_archives_and_compaction_carry_canonical_bytes(tmp_path: Path) -> None:
    path = tmp_path / "l"
    put = filled(path)
    with open_ledger(path, indexer=by_run) as ledger:
        ledger.set_ref("last", put[-1][0])
        export_archive(ledger, [a for a, _ in put], tmp_path / "all.archive")
    archive = (tmp_path / "all.archive").read_bytes()
    assert put[3][1].to_bytes() in archive  # the archive holds the events' own bytes
    with open_ledger(tmp_path / "copy", indexer=by_run) as copy:
        import_archive(copy, tmp_path / "all.archive")
        assert copy.get_many([a for a, _ in put]) == [e for _, e in put]
        assert copy.verify().ok
    # The importing ledger trained a dictionary of its own from the imported commit.
    assert all(stored[:4] == ZSTD_MAGIC for _, stored in raw_records(tmp_path / "copy"))

    compact_ledger(path, lambda ledger: ["last"], app=Application(indexer=by_run))
    with open_ledger(path, indexer=by_run, readonly=True) as ledger:
        assert ledger.get(put[-1][0]) == put[-1][1]
        assert ledger.verify().ok


def test_a_reader_opened_before_the_dictionary_existed_reads_what_another_process_wrote(
    tmp_path: Path,
) -> None:
    path = tmp_path / "l"
    open_ledger(path).close()
    child = f"""
import sys
sys.path[:0] = {sys.path!r}
from tests.ledger.test_ledger_records import filled
from pathlib import Path
filled(Path({str(path)!r}))
"""
    with open_ledger(path, readonly=True) as reader:  # no dictionary yet
        done = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        events = [event for _, event in reader.events()]
    assert events == [note(i) for i in range(ENOUGH)]


def test_a_damaged_frame_is_refused_and_verify_names_it(tmp_path: Path) -> None:
    path = tmp_path / "l"
    put = filled(path)
    records = dict(raw_records(path))
    cut, flipped = (bytes.fromhex(put[i][0][7:]) for i in (5, 9))
    rewrite_record(path, cut, records[cut][:-8])  # a frame that ends too soon
    frame = bytearray(records[flipped])
    frame[len(frame) // 2] ^= 0x55  # a frame that decompresses to other bytes
    rewrite_record(path, flipped, bytes(frame))

    with open_ledger(path, indexer=by_run, readonly=True) as ledger:
        for i in (5, 9):
            with pytest.raises(CorruptEventError, match=put[i][0]):
                ledger.get(put[i][0])
        assert ledger.get(put[6][0]) == put[6][1]  # its neighbours still read
        report = ledger.verify()
    found = {p.address: p for p in report.problems if p.kind == CORRUPT_EVENT}
    assert set(found) == {put[5][0], put[9][0]}
    assert "does not decompress" in str(found[put[5][0]])
    assert "does not decompress" not in str(found[put[9][0]])


def test_index_keys_spell_addresses_and_hex_digests_as_their_bytes() -> None:
    digest = hashlib.sha256(b"x").hexdigest()
    text = index_prefix("linked", "c1")
    assert len(index_prefix("linked", "sha256:" + digest)) == len(text) - 2 + 32
    assert len(index_prefix("exec", digest)) == len(index_prefix("exec", "c1")) - 2 + 32
    # Upper-case hex, or a 64-character key that is not hex, stays text: no two keys share one.
    keys = {"sha256:" + digest, digest, digest.upper(), "sha256:" + digest.upper(), "g" * 64}
    assert len({index_prefix("k", key) for key in keys}) == len(keys)


def test_hex_and_address_keys_look_up_exactly(tmp_path: Path) -> None:
    digest = hashlib.sha256(b"x").hexdigest()
    spellings = [digest, digest.upper(), "sha256:" + digest, "sha256:" + digest.upper()]

    def by_key(address: str, event: Event) -> list[tuple[str, str]]:
        return [("k", event.body["key"])]

    with open_ledger(tmp_path / "l", indexer=by_key) as ledger:
        filed = {key: ledger.put(Event("k", 1, {"key": key})) for key in spellings}
        for key, address in filed.items():
            assert ledger.lookup("k", key) == [address]
        assert ledger.verify().ok


WRITER = """
import sys
sys.path[:0] = {path!r}
from pathlib import Path
from ledger import open_ledger
from tests.ledger.test_ledger_records import by_run, note

ledger = open_ledger(Path({ledger!r}), indexer=by_run)
for batch in range(3):
    with ledger.batch():
        for i in range({enough}):
            ledger.put(note({offset} + batch * {enough} + i, run={run!r}))
ledger.close()
"""


def test_two_writers_training_at_once_share_one_dictionary(tmp_path: Path) -> None:
    path = tmp_path / "l"
    open_ledger(path).close()
    writers = [
        subprocess.Popen(
            [
                sys.executable,
                "-c",
                WRITER.format(
                    path=sys.path, ledger=str(path), enough=ENOUGH, offset=k * 10_000, run=f"r{k}"
                ),
            ],
            stderr=subprocess.PIPE,
            text=True,
        )
        for k in range(2)
    ]
    for writer in writers:
        _, err = writer.communicate(timeout=120)
        assert writer.returncode == 0, err
    with open_ledger(path, indexer=by_run, readonly=True) as ledger:
        for k in range(2):
            got = [event for _, event in ledger.lookup_events("run", f"r{k}")]
            assert got == [note(k * 10_000 + i, run=f"r{k}") for i in range(3 * ENOUGH)]
        report = ledger.verify()
        assert report.ok, str(report)
    # Whichever trained first, every frame was made with the one dictionary the ledger keeps.
    assert sum(stored[:4] == ZSTD_MAGIC for _, stored in raw_records(path)) == 6 * ENOUGH


def test_a_reader_of_the_first_index_layout_stops_once_another_process_refiles_it(
    tmp_path: Path,
) -> None:
    path = Path(shutil.copytree(FIXTURES / "v2", tmp_path / "v2"))  # written in the first layout
    expected = json.loads((FIXTURES / "v2" / "expected.json").read_text())
    key, addresses = next(iter(expected["index"]["case"].items()))
    refile = f"""
import sys
sys.path[:0] = {sys.path!r}
from ledger import open_ledger
from tests.fixtures.ledger.make_fixtures import case_index
open_ledger({str(path)!r}, indexer=case_index).close()
"""
    with open_ledger(path, indexer=case_index, readonly=True) as reader:
        assert reader.lookup("case", key) == addresses  # read in the layout it was filed in
        done = subprocess.run([sys.executable, "-c", refile], capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        for look in (reader.lookup, reader.latest):
            with pytest.raises(StaleIndexesError, match="refiled by another process"):
                look("case", key)
    with open_ledger(path, indexer=case_index, readonly=True) as again:
        assert again.lookup("case", key) == addresses  # opened again: the compact layout


def test_threads_write_and_read_compressed_records_at_once(tmp_path: Path) -> None:
    # A run's writer thread commits while the owner commits events of its own and another
    # thread reads: each commit packs, each read unpacks, and zstd's contexts are not shareable.
    path = tmp_path / "l"
    put = filled(path)
    with open_ledger(path, indexer=by_run) as ledger:
        behind = [Event("note", 1, {**note(i).body, "n": i}) for i in range(2 * ENOUGH)]
        own = [Event("note", 1, {**note(i).body, "own": i}) for i in range(ENOUGH)]
        errors: list[BaseException] = []

        def guarded(work: Callable[[], object]) -> Callable[[], None]:
            def run() -> None:
                try:
                    work()
                except BaseException as exc:  # reported by the test below
                    errors.append(exc)

            return run

        def read() -> None:
            for _ in range(3):
                for address, event in put:
                    assert ledger.get(address) == event

        def commit_own() -> None:
            for event in own:
                ledger.put(event)

        works = (read, commit_own, lambda: ledger.put_all([ledger.prepare(e) for e in behind]))
        threads = [threading.Thread(target=guarded(work)) for work in works]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert errors == []
        assert all(ledger.get(ledger.prepare(e).address) == e for e in behind + own)
    frames = [stored for _, stored in raw_records(path) if stored[:4] == ZSTD_MAGIC]
    assert len(frames) == ENOUGH + 2 * ENOUGH + ENOUGH
    with open_ledger(path, indexer=by_run, readonly=True) as ledger:
        assert ledger.verify().ok
