"""How a project grows with its cases: store size, memory, time and bytes written, beside targets.

    python -P benchmarks/scale.py [--cases N] [--store-cases S] [--runs R] [--million]

(-P keeps benchmarks/ledger.py from shadowing the ledger package.)

Every figure is printed beside its target, as a ratio measured in this run where it can be.

1. Store growth of a staged case: a RAG system whose retriever returns 20 of a 5,000-passage
   corpus (60 words a passage), top_k 5, three evaluators, S cases (1,000 by default). Run R
   times (10 by default), each run a new system version so that every case is executed and
   stored again. Printed: stored event bytes and on-disk bytes (``data.mdb``) per executed case
   after the first run and after the last (the corpus seen once: the growth of runs 2..R over
   their cases), and how that growth splits between the tables and the pages LMDB keeps free
   for its next commits; bytes the run process wrote (``wchar``) per byte its store grew.
2. Every command at N and 10 N staged cases (10,000 and 100,000 by default), each in a fresh
   process: ``run`` (a first run, and a second of a new version to compare with), ``verify``,
   ``export`` (the bundle), ``tables`` (``export --format jsonl``), ``inspect``, ``compare``
   and ``diagnose`` (a top-k replay of the failed third of the cases: the half that declares
   gold context is re-executed twice and diagnosed, the other half excluded), ``ledger
   export --all`` (``archive``) and its ``ledger import`` into an empty project
   (``import``). Printed: peak anonymous memory (RSS
   without the mapped ledger) and peak RSS, the 10 N figure as a ratio of the N one (target at
   most 1.2); the run's time per case at N and 10 N (target 10 N within 1.1 of N), beside the floor:
   encoding, hashing and putting the same events into a bare LMDB table, measured on the
   events the run stored. The ratio to the floor is printed for the whole run and per case at
   a size (target at most 3), as in section 3: the time beyond a run a tenth the size (one more
   first run of N/10 cases is made for it), beside the floor's, so that the start-up cancels.
3. With --million: one run of 1,000,000 trivial cases (a callable echo, one evaluator): time,
   peak memory (target under 400 MB), store size, bytes written per byte stored; and its time
   per case beside the floor and beside a run of 10,000 of the same cases. The time per case
   at a size is what a run of that size takes beyond a run of a tenth of it, divided by the
   cases between (10,000 beyond 1,000; 1,000,000 beyond 100,000): the start-up, which a whole
   run of 10,000 spreads over fewer cases than one of 1,000,000, cancels out, as does the
   floor's. The CPU time per case is printed beside it, the same way. Whole-run figures are
   printed too. Runs of 1,000 and 10,000 cases: the median of three.

Start-up of ``runs`` and ``inspect`` beside ``--help`` is ``benchmarks/startup.py``.
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import sys
import tempfile
import time
from pathlib import Path

import cbor2
import lmdb

from ledger import decode, open_ledger
from oloproof.store import APPLICATION

sys.path.append(str(Path(__file__).resolve().parent))
from cli_process import Measured, oloproof

STAGED = """
import random
from oloproof import Passage, Retrieval, rag_system

WORDS = ("retrieval context budget passage answer question ranking index corpus model evidence "
         "label stage cache replay control intervention token cut order billing refund seat "
         "plan invoice owner admin review security audit report customer account").split()


def _passage(p):
    rng = random.Random(p)
    return " ".join(rng.choice(WORDS) for _ in range(60)) + "."


CORPUS = [_passage(p) for p in range(5000)]


@rag_system(name="scale", version="1", depth=20, top_k=5, token_budget=150)
class Scale:
    def retrieve(self, input, depth):
        picks = random.Random(input["n"]).sample(range(len(CORPUS)), depth)
        return Retrieval(query=input["q"], depth=depth, candidates=tuple(
            Passage(doc_id=f"p{p}", score=float(depth - i), text=CORPUS[p])
            for i, p in enumerate(picks)))

    def generate(self, input, context):
        first = context.items[0].doc_id if context.items else None
        return {"answer": "no" if input["n"] % 3 == 0 else "yes",
                "citations": [first] if first else []}

    def count_tokens(self, passage):
        return len((passage.text or "").split())
"""

STAGED_CONFIG = """system: {{name: scale, version: "{version}", rag: {{object: app:Scale}}}}
dataset: cases.jsonl
policy: policy.yaml
evaluators:
  - {{type: contains, criterion: answer_correct, field: answer, expected_field: answer}}
  - {{type: hit_rate, k: 5}}
  - {{type: citation_validity}}
"""

TRIVIAL = """
from oloproof import system

@system(name="echo", version="1")
def echo(case):
    return {"answer": case["q"]}
"""

TRIVIAL_CONFIG = """system: {name: echo, version: "1", callable: app:echo}
dataset: cases.jsonl
policy: policy.yaml
evaluators:
  - {type: contains, criterion: answer_correct, field: answer, expected_field: answer}
"""

POLICY = "version: 1\nrules:\n  - {id: correct, metric: answer_correct, min: 0.5}\n"
COMPARE = """version: 1
rules:
  - {id: not-worse, metric: answer_correct, non_inferiority: {margin: 5}}
"""


def staged(root: Path, n: int, *, gold: bool = False) -> Path:
    """The staged project of n cases (section 1 and 2); with ``gold``, every odd case declares
    gold context, so a diagnosis selects half the failed cases and excludes the other half."""
    root.mkdir(parents=True)
    (root / "app.py").write_text(STAGED)
    (root / "oloproof.yaml").write_text(STAGED_CONFIG.format(version="1"))
    (root / "policy.yaml").write_text(POLICY)
    (root / "compare.yaml").write_text(COMPARE)
    with (root / "cases.jsonl").open("w") as f:
        for i in range(n):
            expected: dict[str, object] = {
                "answer": "yes",
                "relevant": [{"doc_id": f"p{(i * 7) % 5000}"}],
            }
            if gold and i % 2:
                expected["gold_context"] = [{"doc_id": f"p{(i * 7) % 5000}", "text": f"gold {i}"}]
            f.write(
                json.dumps({"id": f"c{i}", "input": {"n": i, "q": f"q{i}"}, "expected": expected})
            )
            f.write("\n")
    return root


def trivial(root: Path, n: int) -> Path:
    root.mkdir(parents=True)
    (root / "app.py").write_text(TRIVIAL)
    (root / "oloproof.yaml").write_text(TRIVIAL_CONFIG)
    (root / "policy.yaml").write_text(POLICY)
    with (root / "cases.jsonl").open("w") as f:
        for i in range(n):
            f.write(
                json.dumps(
                    {"id": f"c{i}", "input": {"q": f"q{i}"}, "expected": {"answer": f"q{i}"}}
                )
            )
            f.write("\n")
    return root


def new_version(root: Path, version: int) -> None:
    (root / "oloproof.yaml").write_text(STAGED_CONFIG.format(version=str(version)))


def disk(root: Path) -> int:
    """The bytes of the pages the ledger's file uses (its file may be longer: LMDB grows it in
    steps)."""
    env = lmdb.open(str(root / ".oloproof" / "ledger"), readonly=True, lock=False, max_dbs=80)
    try:
        pages: int = env.info()["last_pgno"] + 1
        return pages * int(env.stat()["psize"])
    finally:
        env.close()


def table_pages(root: Path) -> dict[str, int]:
    """The bytes of the pages the events and the runs of entries use (``runs``: the 64 run
    tables, with the first layout's ``addr`` and ``index``), and of those the file holds
    beyond them (pages LMDB freed and keeps for the next commits)."""
    env = lmdb.open(str(root / ".oloproof" / "ledger"), readonly=True, lock=False, max_dbs=80)
    try:
        size = int(env.stat()["psize"])
        found: dict[str, int] = {"events": 0, "runs": 0}
        with env.begin() as txn:
            names = [name for name, _ in txn.cursor()]
            for name in names:
                if name not in (b"events", b"addr", b"index") and not name.startswith(b"run"):
                    continue
                stat = txn.stat(env.open_db(name, txn=txn, create=False))
                used = stat["branch_pages"] + stat["leaf_pages"] + stat["overflow_pages"]
                found["events" if name == b"events" else "runs"] += used * size
        found["free and other"] = (env.info()["last_pgno"] + 1) * size - sum(found.values())
        return found
    finally:
        env.close()


def stored_bytes(root: Path) -> int:
    with open_ledger(root / ".oloproof", app=APPLICATION, readonly=True) as ledger:
        return sum(len(ledger.get_bytes(address)) for address, _ in ledger.events())


def run(root: Path) -> tuple[Measured, str]:
    done = oloproof(root, "run")
    return done, done.out.split()[1]


def store_growth(base: Path, n: int, runs: int) -> None:
    root = staged(base / "store", n)
    first, _ = run(root)
    after_one = (stored_bytes(root), disk(root))
    tables_one = table_pages(root)
    written = 0
    for version in range(2, runs + 1):
        new_version(root, version)
        written += run(root)[0].written
    after = (stored_bytes(root), disk(root))
    tables = table_pages(root)
    later = n * (runs - 1)
    print(
        f"1. store growth of a staged case (20 of a 5,000-passage corpus), {n} cases x {runs} runs"
    )
    print(
        f"   after 1 run: {after_one[0] / n / 1024:.1f} KB stored, "
        f"{after_one[1] / n / 1024:.1f} KB on disk per case (the corpus's texts included)"
    )
    grown_stored = (after[0] - after_one[0]) / later
    grown_disk = (after[1] - after_one[1]) / later
    print(
        f"   runs 2..{runs}: {grown_stored / 1024:.2f} KB stored, {grown_disk / 1024:.2f} KB on "
        f"disk per executed case (target at most 4 KB on disk)"
    )
    parts = ", ".join(
        f"{name} {(tables[name] - tables_one[name]) / later / 1024:.2f}" for name in tables
    )
    print(f"   of those, KB per case: {parts}")
    print(
        f"   bytes written per byte stored: first run {first.written / max(after_one[0], 1):.2f}, "
        f"runs 2..{runs} {written / max(after[0] - after_one[0], 1):.2f} (target at most 2)"
    )


def floor_seconds(root: Path) -> float:
    """Encode, hash and put every event the ledger holds into a bare LMDB table, in commits of
    10,000: the least the same events cost to store. Read (untimed) and stored a commit's worth
    at a time, so that the floor holds no more than one commit in memory."""
    took = 0.0
    with (
        open_ledger(root / ".oloproof", app=APPLICATION, readonly=True) as ledger,
        tempfile.TemporaryDirectory() as tmp,
    ):
        env = lmdb.open(tmp, map_size=1 << 38, writemap=False)
        addresses = (address for address, _ in ledger.events())
        while chunk := [decode(ledger.get_bytes(a)) for a in itertools.islice(addresses, 10_000)]:
            start = time.perf_counter()
            with env.begin(write=True) as txn:
                for value in chunk:
                    data = cbor2.dumps(value, canonical=True)
                    txn.put(hashlib.sha256(data).digest(), data)
            took += time.perf_counter() - start
        env.close()
    return took


def commands(base: Path, n: int) -> tuple[dict[str, Measured], float]:
    """Every command at n staged cases, and the floor of the first run's events."""
    root = staged(base / f"n{n}", n, gold=True)
    found: dict[str, Measured] = {}
    found["run"], baseline = run(root)
    new_version(root, 2)
    _, candidate = run(root)
    found["verify"] = oloproof(root, "verify")
    found["export"] = oloproof(root, "export", candidate)
    found["tables"] = oloproof(root, "export", candidate, "--format", "jsonl", "--output", "tables")
    found["inspect"] = oloproof(root, "inspect", candidate)
    found["compare"] = oloproof(root, "compare", candidate, baseline, "--policy", "compare.yaml")
    found["diagnose"] = oloproof(
        root,
        "diagnose",
        candidate,
        "--intervention",
        "top-k",
        "--top-k",
        "10",
        "--criterion",
        "answer_correct",
    )
    # The archive of the whole ledger, and its import into an empty project (which checks it,
    # re-derives its runs' summaries as verify does, and writes it).
    found["archive"] = oloproof(root, "ledger", "export", "--all", "--to", "all.oloarchive")
    (base / f"n{n}-imported").mkdir()
    found["import"] = oloproof(
        base / f"n{n}-imported", "ledger", "import", str(root / "all.oloarchive")
    )
    floor = floor_seconds(root) / 2  # the ledger holds two runs' events
    print(
        f"   {n} cases: run {found['run'].seconds / n * 1e6:.0f} us a case, floor (encode, hash, "
        f"put the same events) {floor / n * 1e6:.0f} us: x{found['run'].seconds / floor:.2f} "
        f"(whole run, start-up included)"
    )
    return found, floor


def first_run(base: Path, n: int) -> tuple[Measured, float]:
    """One run of n staged cases, and the floor of its events."""
    root = staged(base / f"first{n}", n, gold=True)
    return run(root)[0], floor_seconds(root)


def memory(base: Path, n: int) -> None:
    print(f"2. every command at {n} and {10 * n} staged cases")
    tenth = first_run(base, n // 10)
    (small, small_floor), (large, large_floor) = commands(base, n), commands(base, 10 * n)
    print("   per case at a size: the time a run of it takes beyond one a tenth its size:")
    for cases, (run_s, floor_s), (tenth_s, tenth_floor) in (
        (n, (small["run"], small_floor), tenth),
        (10 * n, (large["run"], large_floor), (small["run"], small_floor)),
    ):
        extra = cases - cases // 10
        per_case = (run_s.seconds - tenth_s.seconds) / extra
        per_floor = (floor_s - tenth_floor) / extra
        print(
            f"     {cases} cases: {per_case * 1e6:.0f} us a case, floor {per_floor * 1e6:.0f} us: "
            f"x{per_case / per_floor:.2f} (target at most 3); CPU "
            f"{(run_s.cpu_seconds - tenth_s.cpu_seconds) / extra * 1e6:.0f} us a case"
        )
    for name, one in small.items():
        big = large[name]
        print(
            f"   {name:8} anonymous {one.anon_mb:6.0f} -> {big.anon_mb:6.0f} MB "
            f"(x{big.anon_mb / one.anon_mb:.2f}; target at most 1.2), peak RSS {one.rss_mb:6.0f} "
            f"-> {big.rss_mb:6.0f} MB, time {one.seconds:7.1f} -> {big.seconds:7.1f} s"
        )
    per_small = small["run"].seconds / n
    per_large = large["run"].seconds / (10 * n)
    print(
        f"   run time per case, {10 * n} / {n}: x{per_large / per_small:.2f} (target at most 1.1)"
    )


def trivial_run(root: Path, cases: int) -> tuple[Measured, float, int]:
    root = trivial(root, cases)
    return run(root)[0], floor_seconds(root), disk(root)


def million(base: Path) -> None:
    n, small = 1_000_000, 10_000
    done: dict[int, tuple[Measured, float, int]] = {}
    for cases in (small // 10, small, n // 10, n):
        # A run of a few thousand cases takes seconds, so one sample swings by a fifth: the
        # median of three.
        tries = sorted(
            (
                trivial_run(base / f"trivial{cases}-{i}", cases)
                for i in range(3 if cases <= small else 1)
            ),
            key=lambda measured: measured[0].seconds,
        )
        done[cases] = tries[len(tries) // 2]
    big, _, size = done[n]
    print(f"3. one run of {n} trivial cases (a callable echo, one evaluator)")
    print(
        f"   {big.seconds:.0f} s, peak anonymous {big.anon_mb:.0f} MB (target under 400 MB), "
        f"peak RSS {big.rss_mb:.0f} MB (the mapped ledger included), store {size / 2**30:.2f} GB, "
        f"bytes written per byte on disk {big.written / size:.2f} (target at most 2)"
    )
    print("   whole runs (start-up included, which a run of 10,000 cases spreads over fewer):")
    for cases in (small, n):
        measured, floor_s, _ = done[cases]
        print(
            f"     {cases} cases: {measured.seconds / cases * 1e6:.0f} us a case, floor "
            f"{floor_s / cases * 1e6:.0f} us: x{measured.seconds / floor_s:.2f}"
        )
    print(
        f"     run time per case, {n} / {small}: "
        f"x{big.seconds / n / (done[small][0].seconds / small):.2f}"
    )
    print("   per case at a size: the time a run of it takes beyond one a tenth its size:")
    marginal, cpu = {}, {}
    for cases in (small, n):
        (run_s, floor_s, _), (tenth_s, tenth_floor, _) = done[cases], done[cases // 10]
        extra = cases - cases // 10
        per_case = (run_s.seconds - tenth_s.seconds) / extra
        per_floor = (floor_s - tenth_floor) / extra
        marginal[cases] = per_case
        cpu[cases] = (run_s.cpu_seconds - tenth_s.cpu_seconds) / extra
        print(
            f"     {cases} cases: {per_case * 1e6:.0f} us a case, floor {per_floor * 1e6:.0f} us: "
            f"x{per_case / per_floor:.2f} (target at most 3); CPU {cpu[cases] * 1e6:.0f} us a case"
        )
    print(
        f"     run time per case, {n} / {small}: x{marginal[n] / marginal[small]:.2f} "
        f"(target at most 1.1); in CPU time x{cpu[n] / cpu[small]:.2f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=10_000)
    parser.add_argument("--store-cases", type=int, default=1_000)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--million", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        store_growth(base, args.store_cases, args.runs)
        memory(base, args.cases)
        if args.million:
            million(base)


if __name__ == "__main__":
    main()
