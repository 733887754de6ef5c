"""Per-case cost of the ray engine against the local one, in one process.

    python -P benchmarks/ray_engine.py [N]

For a trivial system and for one that sleeps 20 ms, at 1, 2 and 4 replicas: a run of N cases
(N / 5 for the sleeping system) on a Ray instance started here with four logical CPUs, beside
a local run with as many cases in flight (each replica runs 4 cases at once, the local run
4 x replicas). Only the execution of the cases is timed: planning, and starting the replicas
(which a long run pays once), are not. Printed per case, and as the ratio ray / local.

(-P keeps benchmarks/ledger.py from shadowing the ledger package.)
"""

from __future__ import annotations

import json
import logging
import sys
import tempfile
import time
from pathlib import Path

from oloproof import aio
from oloproof.engines import open_engine
from oloproof.runner import execute_run, plan_run
from oloproof.store import open_project_ledger

APP = """
import time

def trivial(case):
    return {"answer": case["q"]}

def sleepy(case):
    time.sleep(0.02)
    return {"answer": case["q"]}
"""
PER_REPLICA = 4


def project(root: Path, n: int, fn: str, engine: str) -> Path:
    root.mkdir(parents=True)
    (root / "app.py").write_text(APP)
    with (root / "cases.jsonl").open("w") as f:
        for i in range(n):
            case = {"id": f"c{i}", "input": {"q": f"q{i}"}, "expected": {"answer": f"q{i}"}}
            f.write(json.dumps(case) + "\n")
    (root / "oloproof.yaml").write_text(
        f"system: {{name: b, version: '1', callable: 'app:{fn}'}}\n{engine}"
        "evaluators:\n"
        "  - {type: contains, criterion: echo, field: answer, expected_field: answer}\n"
    )
    return root


def timed(root: Path) -> float:
    """Seconds to execute, judge and record every case (the engine started beforehand)."""
    plan = plan_run(root / "oloproof.yaml")
    ledger = open_project_ledger(root)

    async def run() -> float:
        engine = await open_engine(plan.config, plan.config_path, plan.system)
        try:
            start = time.perf_counter()
            outcome = await execute_run(ledger, plan, engine=engine)
            elapsed = time.perf_counter() - start
        finally:
            await engine.aclose()
        # Every case executed (none cached, none errored): the run did the work timed.
        assert outcome.report.cache["execution"][:2] == [0, len(plan.dataset.cases)]
        assert outcome.report.execution_state == "COMPLETE", outcome.report
        return elapsed

    try:
        return aio.run(run())
    finally:
        ledger.close()


def main(n: int) -> None:
    import ray

    # Four logical CPUs whatever the machine has: room for four one-CPU replicas.
    ray.init(
        address="local",
        num_cpus=4,
        include_dashboard=False,
        log_to_driver=False,
        logging_level=logging.WARNING,
    )
    print(
        f"{'system':<8} {'replicas':>8} {'cases':>6} {'local ms/case':>14} "
        f"{'ray ms/case':>12} {'ray / local':>12}"
    )
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for fn, cases in (("trivial", n), ("sleepy", max(n // 5, 1))):
                for replicas in (1, 2, 4):
                    base = Path(tmp) / f"{fn}-{replicas}"
                    local = project(
                        base / "local", cases, fn, f"concurrency: {replicas * PER_REPLICA}\n"
                    )
                    engine = (
                        f"engine: {{kind: ray, replicas: {replicas}, concurrency: {PER_REPLICA}}}\n"
                    )
                    remote = project(base / "ray", cases, fn, engine)
                    here = timed(local) / cases * 1000
                    there = timed(remote) / cases * 1000
                    print(
                        f"{fn:<8} {replicas:>8} {cases:>6} {here:>14.3f} {there:>12.3f} "
                        f"{there / here:>11.2f}x",
                        flush=True,
                    )
    finally:
        ray.shutdown()


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 2000)
