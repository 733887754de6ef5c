"""Ledger throughput beside same-run floors, for ~1.5 KB events.

    python -m benchmarks.ledger [--events N] [--repeat R] [--cpu]    (from the repository root)
    python benchmarks/ledger.py [--events N] [--repeat R] [--cpu]

Each figure is the best of R runs, printed beside a floor measured in the same process on the
same data: the least work a bare loop does for the same job. Ratios, not absolutes, are what
carry from one machine to another. Times are wall-clock; ``--cpu`` times this process's CPU use
instead, which holds steadier on a shared machine but leaves out waiting for the disk.

- appends: ``with ledger.batch(): ledger.put(event)`` for N events, against a bare loop of
  ``cbor2.dumps`` + ``hashlib.sha256`` + ``txn.put(digest, bytes)`` in one write transaction.
- reads: ``ledger.get(address)`` (re-hashes and decodes), ``ledger.get_bytes(address)``
  (re-hashes) and ``ledger.has(address)`` in random order, against a bare ``txn.get(digest)``
  loop in one read transaction on the floor's database; a second floor adds the re-hash and
  the decode to the bare get, which is the work ``get`` must do. ``get_many`` reads the same
  events 100 addresses at a time.
- cache lookups: for each event in random order, ``latest(index, key)`` then ``get`` (one
  event filed under each key), and the fused ``latest_event(index, key)``, against the same
  get + re-hash + decode floor.
- replay: every event filed under one key (a run of N cases) by ``lookup`` then ``get`` of
  each, by ``lookup_events``, and by ``events(type)``, against a bare cursor scan of the
  floor's database that re-hashes and decodes every value, in one read transaction.
- verify: ``ledger.verify()`` against a bare cursor scan that re-hashes every value.

The read ledger files every event under two application indexes, ``case`` (its own key)
and ``run`` (one key for all), as the application's indexer does; ``verify`` checks them.
"""

from __future__ import annotations

import sys
from pathlib import Path

# Run as a script, this file's folder comes first on sys.path and its name, ledger.py, would
# hide the ledger package; drop that folder so the import below finds the package.
if Path(sys.path[0]).resolve() == Path(__file__).resolve().parent:
    del sys.path[0]

import argparse
import hashlib
import random
import shutil
import tempfile
import time
from collections.abc import Callable, Iterable

import cbor2
import lmdb

from ledger import Event, open_ledger


def make_events(n: int, seed: int = 7) -> list[Event]:
    rng = random.Random(seed)
    words = ["refund", "annual", "plan", "issued", "within", "days", "approved", "request"]
    events = []
    for i in range(n):
        text = " ".join(rng.choice(words) for _ in range(90))
        body = {
            "case_id": f"case_{i:06d}",
            "input": {"question": " ".join(rng.choice(words) for _ in range(12))},
            "output": {"answer": text},
            "passages": [
                {"doc_id": f"kb-{j:02d}", "text": text[: 120 + j], "score": rng.random()}
                for j in range(4)
            ],
            "latency_ms": rng.random() * 500,
            "tokens": {"prompt": rng.randrange(2000), "completion": rng.randrange(300)},
            "ok": True,
            "score": 1.0 if i % 2 else 0.0,
        }
        events.append(Event("case.executed", 1, body))
    return events


def best(repeat: int, *runs: Callable[[], float]) -> list[float]:
    """The best time of each run, taking turns so that noise on a shared machine hits all."""
    times: list[list[float]] = [[] for _ in runs]
    for _ in range(repeat):
        for i, run in enumerate(runs):
            times[i].append(run())
    return [min(t) for t in times]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--cpu",
        action="store_true",
        help="time this process's CPU use instead of the wall clock: steadier while other "
        "work loads the machine, but it leaves out waiting for the disk (appends' commits)",
    )
    args = parser.parse_args()
    n, repeat = args.events, args.repeat
    clock = time.process_time if args.cpu else time.perf_counter

    events = make_events(n)
    maps = [{"type": e.type, "schema": e.schema, "body": e.body, "refs": []} for e in events]
    size = sum(len(e.to_bytes()) for e in events) / n
    work = Path(tempfile.mkdtemp(prefix="ledger-bench-"))
    print(
        f"ledger benchmark: {n} events of {size:.0f} B on average, best of {repeat}, "
        f"{'CPU' if args.cpu else 'wall'} time "
        f"(Python {sys.version.split()[0]}, cbor2 {cbor2_version()}, lmdb {lmdb.__version__})"
    )

    def floor_append() -> float:
        path = work / f"floor-{time.monotonic_ns()}"
        env = lmdb.open(str(path), map_size=1 << 31, max_dbs=2)
        db = env.open_db(b"events")
        start = clock()
        with env.begin(write=True, db=db) as txn:
            for m in maps:
                data = cbor2.dumps(m)
                txn.put(hashlib.sha256(data).digest(), data)
        elapsed = clock() - start
        env.close()
        shutil.rmtree(path)
        return elapsed

    def ledger_append() -> float:
        path = work / f"ledger-{time.monotonic_ns()}"
        ledger = open_ledger(path)
        start = clock()
        with ledger.batch():
            for event in events:
                ledger.put(event)
        elapsed = clock() - start
        ledger.close()
        shutil.rmtree(path)
        return elapsed

    t_floor, t_ledger = best(repeat, floor_append, ledger_append)
    row("appends (batched)", n / t_ledger, n / t_floor, "cbor2.dumps + sha256 + put, one txn")

    # A ledger and a floor database with the same events, for reads and verify.
    def indexer(address: str, event: Event) -> list[tuple[str, str]]:
        return [("case", event.body["case_id"]), ("run", "run_1")]

    ledger = open_ledger(work / "read", indexer=indexer)
    with ledger.batch():
        addresses = [ledger.put(event) for event in events]
    env = lmdb.open(str(work / "floor-read"), map_size=1 << 31, max_dbs=2)
    db = env.open_db(b"events")
    with env.begin(write=True, db=db) as txn:
        for event in events:
            data = event.to_bytes()
            txn.put(hashlib.sha256(data).digest(), data)
    order = addresses[:]
    random.Random(3).shuffle(order)
    digests = [bytes.fromhex(a[7:]) for a in order]
    case_ids = [e.body["case_id"] for e in events]
    random.Random(5).shuffle(case_ids)

    def floor_get() -> float:
        start = clock()
        with env.begin(db=db) as txn:
            for digest in digests:
                txn.get(digest)
        return clock() - start

    def floor_get_checked() -> float:
        start = clock()
        with env.begin(db=db) as txn:
            for digest in digests:
                data = txn.get(digest)
                if data is None or hashlib.sha256(data).digest() != digest:
                    raise AssertionError("corrupt")
                cbor2.loads(data)
        return clock() - start

    def timed(call: Callable[[str], object], args: list[str]) -> Callable[[], float]:
        def run() -> float:
            start = clock()
            for arg in args:
                call(arg)
            return clock() - start

        return run

    def get_many() -> float:
        start = clock()
        for i in range(0, n, 100):
            ledger.get_many(order[i : i + 100])
        return clock() - start

    def latest_then_get(case_id: str) -> object:
        address = ledger.latest("case", case_id)
        return None if address is None else ledger.get(address)

    t_bare, t_checked, t_get, t_bytes, t_has, t_many, t_latest_get, t_latest_event = best(
        repeat,
        floor_get,
        floor_get_checked,
        timed(ledger.get, order),
        timed(ledger.get_bytes, order),
        timed(ledger.has, order),
        get_many,
        timed(latest_then_get, case_ids),
        timed(lambda case_id: ledger.latest_event("case", case_id), case_ids),
    )
    bare, checked = "bare txn.get loop, one txn", "bare get + sha256 + cbor2.loads, one txn"
    row("random get()", n / t_get, n / t_bare, bare)
    row("random get_bytes()", n / t_bytes, n / t_bare, bare)
    row("random has()", n / t_has, n / t_bare, bare)
    row("random get()", n / t_get, n / t_checked, checked)
    row("get_many() by 100", n / t_many, n / t_checked, checked)
    row("latest() + get()", n / t_latest_get, n / t_checked, checked)
    row("latest_event()", n / t_latest_event, n / t_checked, checked)

    def floor_scan(decode: bool) -> Callable[[], float]:
        """A cursor scan of the floor's database that re-hashes (and decodes) every value."""

        def run() -> float:
            start = clock()
            with env.begin(db=db) as txn:
                for key, value in txn.cursor():
                    if hashlib.sha256(value).digest() != key:
                        raise AssertionError("corrupt")
                    if decode:
                        cbor2.loads(value)
            return clock() - start

        return run

    def replay(read: Callable[[], Iterable[object]]) -> Callable[[], float]:
        def run() -> float:
            start = clock()
            count = sum(1 for _ in read())
            elapsed = clock() - start
            if count != n:
                raise AssertionError(f"replayed {count} events, not {n}")
            return elapsed

        return run

    t_scan, t_lookup_get, t_lookup_events, t_events = best(
        repeat,
        floor_scan(decode=True),
        replay(lambda: (ledger.get(a) for a in ledger.lookup("run", "run_1"))),
        replay(lambda: ledger.lookup_events("run", "run_1")),
        replay(lambda: ledger.events("case.executed")),
    )
    scan = "cursor scan + sha256 + cbor2.loads, one txn"
    row("lookup() + get()", n / t_lookup_get, n / t_scan, scan)
    row("lookup_events()", n / t_lookup_events, n / t_scan, scan)
    row("events(type)", n / t_events, n / t_scan, scan)

    def ledger_verify() -> float:
        start = clock()
        report = ledger.verify()
        elapsed = clock() - start
        if not report.ok:
            raise AssertionError(str(report))
        return elapsed

    t_vfloor, t_verify = best(repeat, floor_scan(decode=False), ledger_verify)
    row("verify", n / t_verify, n / t_vfloor, "cursor scan + sha256 of every value")

    ledger.close()
    env.close()
    shutil.rmtree(work)


def cbor2_version() -> str:
    from importlib.metadata import version

    return version("cbor2")


def row(label: str, rate: float, floor: float, what: str) -> None:
    ratio = rate / floor
    print(f"{label:<20} {rate:>10,.0f} ev/s   floor {floor:>10,.0f} ev/s   {ratio:5.2f}×  ({what})")


if __name__ == "__main__":
    main()
