"""Ledger throughput beside same-run floors, for ~1.5 KB events.

    python -m benchmarks.ledger [--events N] [--repeat R]     (from the repository root)
    python benchmarks/ledger.py [--events N] [--repeat R]

Each figure is the best of R runs, printed beside a floor measured in the same process on the
same data: the least work a bare loop does for the same job. Ratios, not absolutes, are what
carry from one machine to another.

- appends: ``with ledger.batch(): ledger.put(event)`` for N events, against a bare loop of
  ``cbor2.dumps`` + ``hashlib.sha256`` + ``txn.put(digest, bytes)`` in one write transaction.
- reads: ``ledger.get(address)`` (re-hashes and decodes) and ``ledger.get_bytes(address)``
  (re-hashes) in random order, against a bare ``txn.get(digest)`` loop in one read transaction
  on the floor's database; a second floor adds the re-hash and the decode to the bare get.
- verify: ``ledger.verify()`` against a bare cursor scan that re-hashes every value.
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
from collections.abc import Callable

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
    args = parser.parse_args()
    n, repeat = args.events, args.repeat

    events = make_events(n)
    maps = [{"type": e.type, "schema": e.schema, "body": e.body, "refs": []} for e in events]
    size = sum(len(e.to_bytes()) for e in events) / n
    work = Path(tempfile.mkdtemp(prefix="ledger-bench-"))
    print(
        f"ledger benchmark: {n} events of {size:.0f} B on average, best of {repeat} "
        f"(Python {sys.version.split()[0]}, cbor2 {cbor2_version()}, lmdb {lmdb.__version__})"
    )

    def floor_append() -> float:
        path = work / f"floor-{time.monotonic_ns()}"
        env = lmdb.open(str(path), map_size=1 << 31, max_dbs=2)
        db = env.open_db(b"events")
        start = time.perf_counter()
        with env.begin(write=True, db=db) as txn:
            for m in maps:
                data = cbor2.dumps(m)
                txn.put(hashlib.sha256(data).digest(), data)
        elapsed = time.perf_counter() - start
        env.close()
        shutil.rmtree(path)
        return elapsed

    def ledger_append() -> float:
        path = work / f"ledger-{time.monotonic_ns()}"
        ledger = open_ledger(path)
        start = time.perf_counter()
        with ledger.batch():
            for event in events:
                ledger.put(event)
        elapsed = time.perf_counter() - start
        ledger.close()
        shutil.rmtree(path)
        return elapsed

    t_floor, t_ledger = best(repeat, floor_append, ledger_append)
    row("appends (batched)", n / t_ledger, n / t_floor, "cbor2.dumps + sha256 + put, one txn")

    # A ledger and a floor database with the same events, for reads and verify.
    ledger = open_ledger(work / "read")
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

    def floor_get() -> float:
        start = time.perf_counter()
        with env.begin(db=db) as txn:
            for digest in digests:
                txn.get(digest)
        return time.perf_counter() - start

    def floor_get_checked() -> float:
        start = time.perf_counter()
        with env.begin(db=db) as txn:
            for digest in digests:
                data = txn.get(digest)
                if data is None or hashlib.sha256(data).digest() != digest:
                    raise AssertionError("corrupt")
                cbor2.loads(data)
        return time.perf_counter() - start

    def timed(call: Callable[[str], object]) -> Callable[[], float]:
        def run() -> float:
            start = time.perf_counter()
            for address in order:
                call(address)
            return time.perf_counter() - start

        return run

    t_bare, t_checked, t_get, t_bytes, t_has = best(
        repeat,
        floor_get,
        floor_get_checked,
        timed(ledger.get),
        timed(ledger.get_bytes),
        timed(ledger.has),
    )
    row("random get()", n / t_get, n / t_bare, "bare txn.get loop, one txn")
    row("random get_bytes()", n / t_bytes, n / t_bare, "bare txn.get loop, one txn")
    row("random has()", n / t_has, n / t_bare, "bare txn.get loop, one txn")
    row("random get()", n / t_get, n / t_checked, "bare get + sha256 + cbor2.loads, one txn")

    def floor_verify() -> float:
        start = time.perf_counter()
        with env.begin(db=db) as txn:
            for key, value in txn.cursor():
                if hashlib.sha256(value).digest() != key:
                    raise AssertionError("corrupt")
        return time.perf_counter() - start

    def ledger_verify() -> float:
        start = time.perf_counter()
        report = ledger.verify()
        elapsed = time.perf_counter() - start
        if not report.ok:
            raise AssertionError(str(report))
        return elapsed

    t_vfloor, t_verify = best(repeat, floor_verify, ledger_verify)
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
