"""Sorted runs (``ledger._runs``): the address and index entries of many commits, merged.

Real LMDB throughout. The merge policy is run over the sizes a ledger's commits make; the
filters are checked against keys they hold and keys they do not; a ledger of a few hundred
commits is read back by every read (get, has, resolve, lookup, iter_lookup, latest, events)
and verified; what ``verify`` says of runs that a tool damaged, and how a rebuild mends them.
"""

from __future__ import annotations

import random
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import cbor2
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.ledger.raw import FILTER_KEY, INDEX_TAG, directory, tables
from tests.ledger.test_ledger_fixtures import copy_of

import ledger._filter as filter_module
import ledger._reads as reads
import ledger._runs as runs_module
from ledger import DamagedIndexesError, Event, Ledger, open_ledger
from ledger._filter import Filter, digest_hash, prefix_hash
from ledger._runs import _MAX_RUNS as MAX_RUNS
from ledger._runs import _TOP as TOP
from ledger._runs import (
    FANOUT,
    Merging,
    Run,
    _next_merge,
    size_class,
)
from ledger.address import parse_address
from ledger.format import RUN_TABLES


def by_case(address: str, event: Event) -> Iterable[tuple[str, str]]:
    if "case" in event.body:
        yield ("case", str(event.body["case"]))


def note(i: int, case: int) -> Event:
    return Event("note", 1, {"i": i, "case": f"c{case}"})


def fill(
    ledger: Ledger, commits: Iterable[int], cases: int = 7, start: int = 0
) -> list[tuple[str, Event]]:
    """Commit batches of the given sizes, of events numbered from ``start``; each event files
    under one of ``cases`` keys."""
    stored: list[tuple[str, Event]] = []
    i = start
    for size in commits:
        with ledger.batch():
            for _ in range(size):
                event = note(i, i % cases)
                stored.append((ledger.put(event), event))
                i += 1
    return stored


def listed(path: Path) -> list[list[int]]:
    with tables(path) as (txn, dbs):
        rows: list[list[int]] = directory(txn, dbs)["runs"]
        return rows


# -- the merge policy ------------------------------------------------------------------------


def _fake(entries: int, first: int) -> Run:
    return Run(first, 0, first, first + 1, entries, None, None)


def settle(runs: list[Run]) -> int:
    """Apply the policy as a commit does; return how many entries the merges rewrote."""
    rewritten = 0
    while (span := _next_merge(runs)) is not None:
        lo, hi = span
        group = runs[lo:hi]
        rewritten += sum(r.entries for r in group)
        runs[lo:hi] = [_fake(sum(r.entries for r in group), group[0].first)]
    return rewritten


@pytest.mark.parametrize("commit", [3, 700, 24_000, 90_000])
def test_runs_stay_few_and_each_entry_is_rewritten_once_a_class(commit: int) -> None:
    runs: list[Run] = []
    written = rewritten = 0
    for n in range(400):
        # A run's commits: two small ones around large ones, as `oloproof run` makes.
        size = commit if n % 6 not in (0, 5) else 2
        runs.append(_fake(size, n))
        written += size
        rewritten += settle(runs)
        classes = [size_class(r.entries) for r in runs]
        for level in set(classes) - {TOP}:
            assert classes.count(level) <= 2 * FANOUT
        assert len(runs) <= 3 * FANOUT + classes.count(TOP)
    # An entry is rewritten once for each class it passes; a small commit between large ones
    # is rewritten with them.
    assert rewritten / written <= TOP
    assert sum(r.entries for r in runs) == written
    assert [r.first for r in runs] == sorted(r.first for r in runs)


def test_past_the_tables_two_neighbours_merge() -> None:
    big = 1 << 20  # each run of the largest class: not merged by size
    runs = [_fake(big, n) for n in range(RUN_TABLES)]
    settle(runs)
    assert len(runs) == MAX_RUNS
    assert sum(r.entries for r in runs) == RUN_TABLES * big


# -- filters ---------------------------------------------------------------------------------


@settings(max_examples=50, deadline=None)
@given(st.lists(st.binary(min_size=1, max_size=60), min_size=1, max_size=300, unique=True))
def test_a_filter_holds_every_key_it_was_given(keys: list[bytes]) -> None:
    made = Filter.sized(len(keys))
    hashed = [digest_hash(k) if len(k) == 32 else prefix_hash(k) for k in keys]
    for h in hashed:
        made.add(h)
    again = Filter.from_bytes(made.to_bytes())
    assert again is not None
    assert all(again.holds(h) for h in hashed)


def test_a_filter_lets_about_one_key_in_a_hundred_through() -> None:
    rng = random.Random(7)
    made = Filter.sized(20_000)
    for _ in range(20_000):
        made.add(digest_hash(rng.randbytes(32)))
    others = [prefix_hash(rng.randbytes(40)) for _ in range(50_000)]
    passed = sum(made.holds(h) for h in others) / len(others)
    assert passed < 0.025, passed  # about two in a hundred, as docs/ledger.md says


@pytest.mark.parametrize("count", [0, 1, 511, 512, 3000])
@pytest.mark.parametrize(("width", "at"), [(16, 0), (33, 1), (40, 0)])
@pytest.mark.parametrize("words", [1, 7, 640])
def test_keys_added_in_bulk_set_the_bits_they_set_one_at_a_time(
    count: int, width: int, at: int, words: int
) -> None:
    rows = random.Random(count * width + words).randbytes(count * width)
    one_at_a_time = Filter.of_words(words)
    for start in range(0, len(rows), width):
        one_at_a_time.add(digest_hash(rows[start + at : start + at + 32]))
    in_bulk = Filter.of_words(words)  # with NumPy from 512 keys on
    in_bulk.add_rows(rows, width, at)
    assert in_bulk.to_bytes() == one_at_a_time.to_bytes()


def test_rows_that_do_not_divide_are_refused() -> None:
    with pytest.raises(ValueError, match="not rows of 40"):
        Filter.of_words(4).add_rows(b"x" * 41, 40)


def test_filter_bytes_that_cannot_be_one_are_none() -> None:
    assert Filter.from_bytes(None) is None
    assert Filter.from_bytes(b"") is None
    assert Filter.from_bytes(b"\x00" * 7) is None


# -- a ledger of many commits ----------------------------------------------------------------


@pytest.fixture
def small_scans(monkeypatch: pytest.MonkeyPatch) -> None:
    """Three entries per read transaction: scans go on across records, runs and chunks."""
    monkeypatch.setattr(reads, "_SCAN_CHUNK", 3)


@pytest.fixture(params=["one at a time", "in bulk"])
def filling(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Filters filled a key at a time, as small commits fill them, or all in bulk (NumPy), as
    large commits and merges do."""
    if request.param == "in bulk":
        monkeypatch.setattr(filter_module, "BULK", 1)
        monkeypatch.setattr(runs_module, "BULK", 1)  # a commit's digests looked up at once


@pytest.mark.usefixtures("small_scans", "filling")
def test_every_read_finds_every_event_across_hundreds_of_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(runs_module, "_BASE", 16)  # small runs merge as large ones do
    monkeypatch.setattr(runs_module, "_POSTINGS", 5)  # a key's entries span several records
    path = tmp_path / "l"
    rng = random.Random(3)
    sizes = [rng.choice((1, 1, 2, 5, 13, 40)) for _ in range(300)]
    with open_ledger(path, indexer=by_case) as ledger:
        stored = fill(ledger, sizes)
        for address, event in rng.sample(stored, 200):
            assert ledger.get(address) == event
            assert ledger.has(address)
            assert ledger.resolve(address[:20]) == address
        assert not ledger.has("sha256:" + "ab" * 32)
        for case in range(7):
            mine = [a for a, e in stored if e.body["case"] == f"c{case}"]
            assert ledger.lookup("case", f"c{case}") == mine
            assert [a for a, _ in ledger.lookup_events("case", f"c{case}")] == mine
            assert ledger.latest("case", f"c{case}") == mine[-1]
            assert ledger.latest_event("case", f"c{case}") == (mine[-1], ledger.get(mine[-1]))
        assert [a for a, _ in ledger.events("note")] == [a for a, _ in stored]
        assert ledger.lookup("case", "c99") == []
        assert ledger.verify().ok
    rows = listed(path)
    assert len(rows) < 40  # 300 commits, merged
    assert [row[2] for row in rows] == [1, *(row[3] for row in rows[:-1])]  # they tile
    assert rows[-1][3] == len(stored) + 1


def test_a_batch_reads_its_pending_events_beside_the_runs(tmp_path: Path) -> None:
    with open_ledger(tmp_path / "l", indexer=by_case) as ledger:
        stored = fill(ledger, [3, 4])
        with ledger.batch():
            pending = ledger.put(note(100, 0))
            assert ledger.lookup("case", "c0")[-1] == pending
            assert ledger.latest("case", "c0") == pending
            assert len(ledger) == len(stored) + 1
        assert ledger.latest("case", "c0") == pending


def test_an_event_put_again_is_not_filed_again(tmp_path: Path) -> None:
    with open_ledger(tmp_path / "l", indexer=by_case) as ledger:
        stored = fill(ledger, [5, 5, 5])
        with ledger.batch():
            for address, event in stored:
                assert ledger.put(event) == address
        assert len(ledger) == 15
        assert ledger.verify().ok
    assert sum(row[4] for row in listed(tmp_path / "l")) == 15 * 3  # address, type, case


def test_a_commit_s_digests_looked_up_at_once_are_found_as_one_at_a_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(runs_module, "_BASE", 16)
    rng = random.Random(5)
    with open_ledger(tmp_path / "l", indexer=by_case) as ledger:
        stored = fill(ledger, [rng.choice((1, 3, 40)) for _ in range(120)])
        asked = [parse_address(a) for a, _ in stored] + [rng.randbytes(32) for _ in range(600)]
        rng.shuffle(asked)
        with ledger.snapshot() as snap:
            runs = snap.runs()
            assert len(runs.runs) > 5
            one_at_a_time = [runs.seq_of(snap._txn, digest) for digest in asked]
            assert sum(found is not None for found in one_at_a_time) == len(stored)
            assert runs.seqs_of(snap._txn, asked) == one_at_a_time  # NumPy: past BULK digests
            monkeypatch.setattr(runs_module, "BULK", 10**9)
            assert runs.seqs_of(snap._txn, asked) == one_at_a_time


# -- other processes -------------------------------------------------------------------------

WRITER = """
import sys
sys.path[:0] = {path!r}
from tests.ledger.test_ledger_runs import by_case, fill
from ledger import open_ledger
with open_ledger({ledger!r}, indexer=by_case) as ledger:
    fill(ledger, [{k} % 7 + 1 for _ in range(60)], start=1000 * ({k} + 1))
"""


def test_a_reader_sees_the_runs_other_processes_write_and_merge(tmp_path: Path) -> None:
    path = tmp_path / "l"
    with open_ledger(path, indexer=by_case) as reader:
        fill(reader, [2])
        assert len(reader.lookup("case", "c0")) == 1
        writers = [
            subprocess.Popen(
                [sys.executable, "-c", WRITER.format(path=sys.path, ledger=str(path), k=k)],
                stderr=subprocess.PIPE,
                text=True,
            )
            for k in range(2)
        ]
        for writer in writers:
            _, err = writer.communicate(timeout=120)
            assert writer.returncode == 0, err
        # Its run directory changed under it, merges included: read again, in full.
        total = 2 + sum((k % 7 + 1) * 60 for k in range(2))
        assert len(reader) == total
        everything = [a for a, _ in reader.events()]
        assert len(everything) == total
        assert all(reader.has(a) for a in everything)
        assert sum(len(reader.lookup("case", f"c{c}")) for c in range(7)) == total
        assert reader.verify().ok


# -- what verify finds, and a rebuild mends --------------------------------------------------


def damaged(tmp_path: Path, harm: Any) -> Ledger:
    """A ledger of a few runs, harmed through its tables by ``harm(txn, dbs)``, reopened."""
    path = tmp_path / "l"
    with open_ledger(path, indexer=by_case) as ledger:
        fill(ledger, [4, 4, 4])
    with tables(path) as (txn, dbs):
        harm(txn, dbs)
    return open_ledger(path, indexer=by_case)


def problems(ledger: Ledger) -> list[str]:
    return [str(p) for p in ledger.verify().problems]


def mended(ledger: Ledger) -> None:
    ledger.rebuild_indexes()
    assert ledger.verify().ok
    assert len(ledger.lookup("case", "c0")) == 2


def first_run_table(txn: Any, dbs: dict[bytes, Any]) -> Any:
    return dbs[b"run%02d" % directory(txn, dbs)["runs"][0][1]]


def test_a_filter_without_a_key_makes_its_entries_missing(tmp_path: Path) -> None:
    def blank(txn: Any, dbs: dict[bytes, Any]) -> None:
        table = first_run_table(txn, dbs)
        txn.put(FILTER_KEY, bytes(len(txn.get(FILTER_KEY, db=table))), db=table)

    with damaged(tmp_path, blank) as ledger:
        assert sorted(problems(ledger)) == [
            "stale index addr: 4 entries missing, 4 entries that a rebuild would drop; "
            "run rebuild_indexes()",
            "stale index case: 4 entries missing, 4 entries that a rebuild would drop; "
            "run rebuild_indexes()",
            "stale index type: 4 entries missing, 4 entries that a rebuild would drop; "
            "run rebuild_indexes()",
        ]
        mended(ledger)


def test_runs_a_tool_left_wrong_are_named(tmp_path: Path) -> None:
    def harm(txn: Any, dbs: dict[bytes, Any]) -> None:
        record = directory(txn, dbs)
        record["runs"] = record["runs"][1:]  # the first run's events are in no run
        txn.put(b"runs", cbor2.dumps(record, canonical=True), db=dbs[b"meta"])
        table = dbs[b"run%02d" % record["runs"][0][1]]
        txn.delete(FILTER_KEY, db=table)  # no filter: every key is looked for in it
        # A type record whose two entries go backwards, both past the run's events.
        prefix = bytes([5]) + b"\x00type" + bytes([5]) + b"\x00note"
        backwards = b"hdhd" + (999).to_bytes(8, "big") + b"hdhd"
        txn.put(INDEX_TAG + prefix + (1000).to_bytes(8, "big"), backwards, db=table)
        txn.put(INDEX_TAG + prefix + (999).to_bytes(8, "big"), b"bad", db=table)  # no record

    with damaged(tmp_path, harm) as ledger:
        assert problems(ledger) == [
            "stale index runs: events 1 to 4 are in no run; run rebuild_indexes()",
            "stale index runs: run 2 (run01) is listed with 12 entries but holds 14; run "
            "rebuild_indexes()",
            "stale index runs: run 2 (run01) has no filter that can be read; run rebuild_indexes()",
            "stale index runs: run01 holds 1 key(s) that are no entry; run rebuild_indexes()",
            "stale index runs: run 2 (run01) files 1 index entries out of order; run "
            "rebuild_indexes()",
            "stale index runs: run00 holds 10 entries of no run; run rebuild_indexes()",
            "stale index addr: 4 entries missing; run rebuild_indexes()",
            "stale index case: 4 entries missing; run rebuild_indexes()",
            "stale index type: 4 entries missing, 2 entries that a rebuild would drop; run "
            "rebuild_indexes()",
        ]
        mended(ledger)


def test_an_unreadable_directory_is_named_and_refused_in_one_sentence(tmp_path: Path) -> None:
    def garble(txn: Any, dbs: dict[bytes, Any]) -> None:
        txn.put(b"runs", b"\xa1\x64next\x00", db=dbs[b"meta"])

    with damaged(tmp_path, garble) as ledger:
        report = ledger.verify()
        assert [str(p) for p in report.problems] == [
            f"stale index runs: the indexes of the ledger at {ledger.path} cannot be read: its "
            "run directory is unreadable"
        ]
        assert report.notes == [
            "links, refs and index entries were not checked: the run directory is unreadable",
            "the program's own checks were not run: they read the indexes",
        ]
        with pytest.raises(DamagedIndexesError, match="its run directory is unreadable"):
            ledger.lookup("case", "c0")
        mended(ledger)


def test_runs_over_one_another_are_refused(tmp_path: Path) -> None:
    def overlap(txn: Any, dbs: dict[bytes, Any]) -> None:
        record = directory(txn, dbs)
        record["runs"][1][2] = 3  # begins inside the first run
        txn.put(b"runs", cbor2.dumps(record, canonical=True), db=dbs[b"meta"])

    with damaged(tmp_path, overlap) as ledger:
        with pytest.raises(DamagedIndexesError, match="out of order, over another or twice"):
            ledger.get(ledger.lookup("type", "note")[0])
        mended(ledger)


def test_rebuilding_a_large_ledger_files_it_in_merged_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("ledger._indexes._REBUILD_CHUNK", 50)
    monkeypatch.setattr(runs_module, "_BASE", 16)
    path = tmp_path / "l"
    with open_ledger(path, indexer=by_case) as ledger:
        stored = fill(ledger, [400, 400, 400])
        ledger.rebuild_indexes()
        assert ledger.verify().ok
        assert ledger.lookup("case", "c3") == [a for a, e in stored if e.body["case"] == "c3"]
    rows = listed(path)
    assert 1 < len(rows) < 24  # 1,200 events in runs of 50, merged
    assert rows[0][0] > 3  # numbers go on from the directory it replaced


def test_the_first_layout_is_read_as_one_run_without_a_filter(tmp_path: Path) -> None:
    # The fixture was written before runs existed: read-only, it is read in place.
    path = copy_of("v2", tmp_path)
    with open_ledger(path, readonly=True) as ledger:
        with ledger.snapshot() as snap:
            (only,) = snap.runs().runs
        assert only.table == -1 and only.cell is None
        assert ledger.verify().ok


# -- merges written a step at a time ----------------------------------------------------------


@pytest.fixture
def small_merges(monkeypatch: pytest.MonkeyPatch) -> None:
    """Runs of a few entries merge as large ones do; merges of more than 60 entries are
    written 7 records a commit (or four times what the commit filed)."""
    monkeypatch.setattr(runs_module, "_BASE", 4)
    monkeypatch.setattr(runs_module, "_AT_ONCE", 60)
    monkeypatch.setattr(runs_module, "_STEP", 7)


def under_way(ledger: Ledger) -> Merging | None:
    with ledger.snapshot() as snap:
        return snap.runs().merging


@pytest.mark.usefixtures("small_merges", "small_scans", "filling")
def test_a_large_merge_is_written_a_step_a_commit_and_reads_stay_whole(tmp_path: Path) -> None:
    path = tmp_path / "l"
    stored: list[tuple[str, Event]] = []
    seen_under_way = 0
    for commit in range(120):
        with open_ledger(path, indexer=by_case) as ledger:
            stored += fill(ledger, [3], start=len(stored))
            # Between any two commits, whatever a merge has written so far: every read whole.
            assert [a for a, _ in ledger.events("note")] == [a for a, _ in stored]
            assert ledger.lookup("case", "c2") == [a for a, e in stored if e.body["case"] == "c2"]
            assert all(ledger.has(a) for a, _ in stored[-5:])
            if commit % 15 == 0:
                assert ledger.verify().ok
            seen_under_way += under_way(ledger) is not None
    assert seen_under_way > 10  # merges were under way across commits
    with open_ledger(path, indexer=by_case) as ledger:
        assert ledger.verify().ok
    assert len(listed(path)) < 30


STEP_WRITER = """
import sys
sys.path[:0] = {path!r}
import ledger._runs as runs_module
runs_module._BASE, runs_module._AT_ONCE, runs_module._STEP = 4, 60, 7
from tests.ledger.test_ledger_runs import by_case, fill
from ledger import open_ledger
with open_ledger({ledger!r}, indexer=by_case) as ledger:
    fill(ledger, [3] * {commits}, start={start})
"""


@pytest.mark.usefixtures("small_merges")
def test_a_merge_one_process_began_another_finishes(tmp_path: Path) -> None:
    path = tmp_path / "l"
    with open_ledger(path, indexer=by_case) as ledger:
        commits = 0
        while (begun := under_way(ledger)) is None:
            fill(ledger, [3], start=3 * commits)
            commits += 1
    script = STEP_WRITER.format(path=sys.path, ledger=str(path), commits=40, start=10_000)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    with open_ledger(path, indexer=by_case) as ledger:
        assert under_way(ledger) != begun  # the other process carried it on and finished it
        assert ledger.verify().ok
        assert len(ledger) == 3 * commits + 3 * 40


@pytest.mark.usefixtures("small_merges")
def test_with_every_table_taken_the_merge_under_way_is_finished_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(runs_module, "_TOP", 2)  # runs of 64 entries and more never merge
    monkeypatch.setattr(runs_module, "_MAX_RUNS", 5)
    monkeypatch.setattr(runs_module, "RUN_TABLES", 7)
    path = tmp_path / "l"
    with open_ledger(path, indexer=by_case) as ledger:
        fill(ledger, [3] * 60)
        assert ledger.verify().ok
    assert len(listed(path)) <= 7


@pytest.mark.usefixtures("small_merges")
def test_a_rebuild_drops_the_merge_under_way(tmp_path: Path) -> None:
    path = tmp_path / "l"
    with open_ledger(path, indexer=by_case) as ledger:
        while under_way(ledger) is None:
            fill(ledger, [3], start=len(ledger))
        ledger.rebuild_indexes()
        assert under_way(ledger) is None
        assert ledger.verify().ok


@pytest.mark.parametrize(
    "merging", [[70, [1, 2]], [0, [1, 2]], [5, [2]], [5, [1, 3]], [5, "x"], "x"]
)
def test_a_merge_the_directory_cannot_mean_is_refused(tmp_path: Path, merging: Any) -> None:
    def name(txn: Any, dbs: dict[bytes, Any]) -> None:
        record = directory(txn, dbs)
        record["merging"] = merging
        txn.put(b"runs", cbor2.dumps(record, canonical=True), db=dbs[b"meta"])

    with damaged(tmp_path, name) as ledger:  # runs 1, 2, 3 in tables 0, 1, 2
        with pytest.raises(
            DamagedIndexesError,
            match="run directory names an impossible merge|names a merge it cannot describe",
        ):
            ledger.lookup("case", "c0")
        mended(ledger)


def test_scans_read_no_filter_and_a_lookup_reads_those_it_passes(tmp_path: Path) -> None:
    path = tmp_path / "l"
    with open_ledger(path, indexer=by_case) as ledger:
        stored = fill(ledger, [5, 5, 5, 5])
    with open_ledger(path, indexer=by_case, readonly=True) as ledger:

        def read() -> list[bool]:
            with ledger.snapshot() as snap:
                return [run.cell is not None and run.cell.read for run in snap.runs().runs]

        assert len(ledger.lookup("case", "c1")) == 3
        assert read() == [False] * 4  # a scan holds no filter
        assert ledger.get(stored[-1][0]) == stored[-1][1]
        assert read() == [False, False, False, True]  # the newest run held it
        assert not ledger.has("sha256:" + "0" * 64)
        assert read() == [True] * 4  # a miss asks every run
