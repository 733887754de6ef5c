"""Harness overhead per case, against a bare loop making the same calls, in one process.

    python -P benchmarks/overhead.py [N] [--heap]

(-P keeps benchmarks/ledger.py from shadowing the ledger package.)

Prints: execute + record per case (one evaluator) beside a bare Python loop; a full run with
five evaluators, report and gate; the metrics re-derived from the ledger alone; a run of a
system that sleeps 20 ms at concurrency 50, beside the ideal (cases x 20 ms / 50) and beside
the event loop alone making the same sleeps; and what the code fingerprint costs: its time for
the bundled examples and for a larger generated project, how many times a run computes it (once,
whatever the number of cases) and that time spread over the run's cases, beside the run's own
time per case. With --heap, also the Python heap's peak during full runs of N and 10 N cases
(under tracemalloc, which makes those runs slower).
"""

from __future__ import annotations

import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

from oloproof import aio
from oloproof.metrics import criteria_of, tally_run
from oloproof.runner import execute_run, plan_run
from oloproof.store import open_project_ledger
from oloproof.stored_runs import load_run

APP = """
import asyncio
from oloproof import Passage, Retrieval, current_case, system

@system(name="trivial", version="1", records=("retrieval/v1", "context/v1", "citations/v1"))
def answer(case):
    return {"answer": case["q"]}

@system(name="recorded", version="1", records=("retrieval/v1", "context/v1", "citations/v1"))
def recorded(case):
    rec = current_case()
    rec.retrieval({"candidates": [{"doc_id": "d1", "score": 2.0}, {"doc_id": "d2", "score": 1.0}]})
    rec.context({"items": [{"doc_id": "d1", "position": 1}]})
    rec.citations(["d1"])
    return {"answer": case["q"], "citations": ["d1"]}

@system(name="sleepy", version="1")
async def sleepy(case):
    await asyncio.sleep(0.02)
    return {"answer": case["q"]}
"""

ONE = "  - {type: contains, criterion: echo, field: answer, expected_field: answer}\n"
FIVE = ONE + (
    "  - {type: hit_rate, k: 2}\n  - {type: recall, k: 2}\n  - {type: ndcg, k: 2}\n"
    "  - {type: citation_validity, require_citations: true}\n"
)


def project(root: Path, n: int, fn: str, evaluators: str, concurrency: int) -> Path:
    root.mkdir(parents=True)
    (root / "app.py").write_text(APP)
    with (root / "cases.jsonl").open("w") as f:
        for i in range(n):
            case = {
                "id": f"c{i}",
                "input": {"q": f"q{i}"},
                "expected": {"answer": f"q{i}", "relevant": [{"doc_id": "d1"}]},
            }
            f.write(json.dumps(case) + "\n")
    (root / "policy.yaml").write_text("version: 1\nrules:\n  - {id: f, metric: echo, min: 0.5}\n")
    (root / "oloproof.yaml").write_text(
        f"system: {{name: b, version: '1', callable: 'app:{fn}'}}\n"
        f"concurrency: {concurrency}\npolicy: policy.yaml\nevaluators:\n{evaluators}"
    )
    return root


def timed_run(root: Path, heap: list[int] | None = None) -> tuple[float, str]:
    """Plan (untimed), then execute, judge, decide and report (timed).

    ``heap``, when given, receives RssAnon after planning (the cases loaded) and after the run.
    """
    plan = plan_run(root / "oloproof.yaml")
    ledger = open_project_ledger(root)
    if heap is not None:
        heap.append(_rss_kb("RssAnon"))
    start = time.perf_counter()
    outcome = aio.run(execute_run(ledger, plan))
    elapsed = time.perf_counter() - start
    if heap is not None:
        heap.append(_rss_kb("RssAnon"))
        heap.append(_rss_kb("RssFile"))
    ledger.close()
    return elapsed, outcome.run_id


def bare_loop(n: int) -> float:
    sys.path.insert(0, str(APP_DIR))
    from app import answer  # type: ignore[import-not-found]

    start = time.perf_counter()
    out = [answer({"q": f"q{i}"}) for i in range(n)]
    assert len(out) == n
    return time.perf_counter() - start


async def bare_sleeps(n: int, concurrency: int) -> float:
    """``n`` sleeps of 20 ms, ``concurrency`` at a time, with nothing else: the loop's own cost."""
    todo = iter(range(n))

    async def worker() -> None:
        for _ in todo:
            await asyncio.sleep(0.02)

    start = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return time.perf_counter() - start


def _rss_kb(field: str) -> int:
    """A field of /proc/self/status in KB (RssAnon: the heap; RssFile: mapped ledger pages)."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def full_run(n: int) -> dict[str, float]:
    """Five evaluators, report and gate over n cases; then re-derive; memory of it all."""
    with tempfile.TemporaryDirectory() as tmp:
        root = project(Path(tmp) / "full", n, "recorded", FIVE, 8)
        heap: list[int] = []
        cold, run_id = timed_run(root, heap)
        before, after, mapped = heap
        ledger = open_project_ledger(root)
        start = time.perf_counter()
        body = load_run(ledger, run_id).body
        tally_run(ledger, run_id, criteria_of(body), [])
        rederive = time.perf_counter() - start
        ledger.close()
        warm, _ = timed_run(root)
    return {
        "cold": cold,
        "warm": warm,
        "rederive": rederive,
        "heap_before_mb": before / 1024,
        "heap_growth_mb": (after - before) / 1024,
        "mapped_mb": mapped / 1024,
    }


def python_heap(n: int) -> float:
    """The Python heap's peak during a full run of n cases, above where it stood before (MB).

    tracemalloc sees what Python allocates, not LMDB's own pages, and slows the run: it is
    measured in a run of its own.
    """
    with tempfile.TemporaryDirectory() as tmp:
        root = project(Path(tmp) / "heap", n, "recorded", FIVE, 8)
        plan = plan_run(root / "oloproof.yaml")
        ledger = open_project_ledger(root)
        tracemalloc.start()
        start, _ = tracemalloc.get_traced_memory()
        aio.run(execute_run(ledger, plan))
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        ledger.close()
    return (peak - start) / 2**20


def _generated_project(root: Path, modules: int, functions: int) -> Path:
    """``modules`` files of ``functions`` functions each, a call chain through all of them, each
    function reading a module constant and a shared table: a project larger than most."""
    root.mkdir(parents=True)
    for m in range(modules):
        lines = [f"import mod{m + 1}" if m + 1 < modules else "", f"K{m} = {m}"]
        lines.append(f"TABLE = {{f'k{m}_{{i}}': list(range(10)) for i in range(50)}}")
        for f in range(functions):
            if f + 1 < functions:
                call = f"f{f + 1}(x)"
            elif m + 1 < modules:
                call = f"mod{m + 1}.f0(x)"
            else:
                call = "x"
            lines.append(f"def f{f}(x):\n    return {call} + K{m} + len(TABLE)\n")
        (root / f"mod{m}.py").write_text("\n".join(lines) + "\n")
    return root


def fingerprint_costs(run_ms_per_case: float, n: int) -> None:
    """The fingerprint's time per run and per case, and how often a run computes it."""
    from oloproof.fingerprint import _walk, of_callable, of_method

    examples = Path(__file__).resolve().parents[1] / "examples"
    timings: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        big = _generated_project(Path(tmp) / "big", 20, 50)
        sys.path[:0] = [str(examples / "support_rag"), str(examples / "blackbox_rag"), str(big)]
        for name in ("app", "mod0"):
            sys.modules.pop(name, None)
        import app  # type: ignore[import-not-found]  # support_rag's, first on the path
        import mod0  # type: ignore[import-not-found]

        def support() -> None:
            for method in ("retrieve", "generate", "count_tokens"):
                of_method(app.SupportRag, method, base_dir=examples / "support_rag")

        cases = {
            "support_rag (retrieve, generate, count_tokens)": support,
            "generated project (1,000 functions in 20 modules)": lambda: of_callable(
                mod0.f0, base_dir=big
            ),
        }
        for label, compute in cases.items():
            compute()  # the first call also locates the stdlib and site-packages, once a process
            timings[label] = statistics.median(_timed(compute) for _ in range(5))
        walks = [0]
        original = _walk.Walk.run

        def counted(self: Any) -> None:
            walks[0] += 1
            original(self)

        _walk.Walk.run = counted  # type: ignore[method-assign]
        try:
            root = project(Path(tmp) / "count", n, "recorded", FIVE, 8)
            timed_run(root)
        finally:
            _walk.Walk.run = original  # type: ignore[method-assign]
    print(f"code fingerprint, computed {walks[0]} time(s) in a run of {n} cases:")
    for label, seconds in timings.items():
        per_case = seconds / n * 1e3
        print(
            f"  {label}: {seconds * 1e3:.2f} ms a run = {per_case:.5f} ms/case at {n} cases "
            f"({per_case / run_ms_per_case:.2%} of the run's {run_ms_per_case:.3f} ms/case)"
        )


def _timed(compute: Any) -> float:
    start = time.perf_counter()
    compute()
    return time.perf_counter() - start


def main() -> None:
    global APP_DIR
    if len(sys.argv) > 2 and sys.argv[1] in ("--full", "--python-heap"):
        measure = full_run if sys.argv[1] == "--full" else python_heap
        print(json.dumps(measure(int(sys.argv[2]))))
        return
    sizes_given = [int(arg) for arg in sys.argv[1:] if arg.isdigit()]
    n = sizes_given[0] if sizes_given else 10_000
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        APP_DIR = project(base / "one", n, "answer", ONE, 8)
        bare = bare_loop(n)
        one, _ = timed_run(APP_DIR)
        print(
            f"{n} cases, trivial system, one evaluator: {one / n * 1e3:.3f} ms/case "
            f"(bare loop {bare / n * 1e3:.4f} ms/case; harness overhead "
            f"{(one - bare) / n * 1e3:.3f} ms/case)"
        )
        sleepers = min(n, 2_000)
        # The median of three runs each, the loop alone first: one run is too noisy a sample.
        bare_slept = statistics.median(aio.run(bare_sleeps(sleepers, 50)) for _ in range(3))
        slept = statistics.median(
            timed_run(project(base / f"sleep{i}", sleepers, "sleepy", ONE, 50))[0] for i in range(3)
        )
        ideal = sleepers * 0.02 / 50
        print(
            f"{sleepers} cases sleeping 20 ms at concurrency 50: {slept:.2f} s "
            f"(ideal {ideal:.2f} s, {slept / ideal:.2f}x; the event loop alone making the same "
            f"sleeps {bare_slept:.2f} s, {bare_slept / ideal:.2f}x); the run against the loop "
            f"alone x{slept / bare_slept:.3f} (target at most 1.1)"
        )
    fingerprint_costs(one / n * 1e3, n)
    sizes = [n, 10 * n]
    results = {}
    for size in sizes:
        # Each size in its own process, so peak memory is that run's alone.
        results[size] = _measure("--full", size)
        r = results[size]
        cold_ms, warm_ms = r["cold"] / size * 1e3, r["warm"] / size * 1e3
        print(f"{size} cases, five evaluators, report and gate: {cold_ms:.3f} ms/case")
        print(f"  warm re-run {warm_ms:.3f} ms/case ({r['cold'] / r['warm']:.1f}x faster)")
        print(f"  metrics re-derived from the ledger in {r['rederive']:.2f} s")
        print(
            f"  heap {r['heap_before_mb']:.0f} MB once the cases are loaded and checked, "
            f"+{r['heap_growth_mb']:.0f} MB during the run; "
            f"ledger pages mapped {r['mapped_mb']:.0f} MB (page cache)"
        )
    small, large = results[sizes[0]], results[sizes[1]]
    growth = large["heap_growth_mb"] - small["heap_growth_mb"]
    print(f"heap growth of the run itself from {sizes[0]} to {sizes[1]} cases: {growth:+.0f} MB")
    if "--heap" in sys.argv:
        peaks = [_measure("--python-heap", size) for size in sizes]
        print(
            "Python heap peak during the run (tracemalloc): "
            + ", ".join(
                f"+{p:.0f} MB at {size} cases" for p, size in zip(peaks, sizes, strict=True)
            )
        )


def _measure(mode: str, size: int) -> Any:
    """Run this script in ``mode`` for ``size`` cases in a process of its own; its JSON."""
    out = subprocess.run(
        [sys.executable, "-P", __file__, mode, str(size)],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


APP_DIR = Path()

if __name__ == "__main__":
    main()
