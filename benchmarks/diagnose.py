"""Time and peak memory of ``oloproof diagnose`` over 200 and 2,000 failed cases, as ratios.

    python -P benchmarks/diagnose.py [SMALL LARGE]

(-P keeps benchmarks/ledger.py from shadowing the ledger package.)

A staged system (depth 20, top_k 5, a 150-word budget, passages of 60 words, gold context on
every case, every answer wrong) is run over SMALL and LARGE cases (200 and 2,000 by default);
each run is then diagnosed with a top-k replay, in a process of its own, twice:

- once plain, for its wall time and its peak resident memory (the process's own ru_maxrss).
  Resident memory includes the ledger pages the process has mapped (LMDB reads through a
  memory map; the kernel can drop them at will) and LMDB's write buffers; the peak of its
  anonymous part (RssAnon) leaves the mapped file out;
- once under tracemalloc, for the peak of what Python itself holds: the part that grows when a
  command keeps cases, retrievals or results in memory.

Memory flat in the number of cases reads as a Python-heap ratio near 1 while the cases grow
tenfold; time should grow no faster than the cases.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

APP = """
from oloproof import Context, Passage, Retrieval, rag_system

WORDS = ("retrieval context budget passage answer question ranking index corpus model "
         "evidence label stage cache replay control intervention token cut order").split()


def text(seed, n=60):
    return " ".join(WORDS[(seed * 7 + i * 3) % len(WORDS)] for i in range(n)) + "."


@rag_system(name="bench", version="1", depth=20, top_k=5, token_budget=150)
class Bench:
    def retrieve(self, input, depth):
        q = input["n"]
        return Retrieval(
            query=str(q),
            depth=depth,
            candidates=tuple(
                Passage(doc_id=f"d{q}-{i}", score=float(depth - i), text=text(q + i))
                for i in range(depth)
            ),
        )

    def generate(self, input, context):
        first = context.items[0] if context.items else None
        return {"answer": "no", "citations": [first.doc_id] if first else []}

    def count_tokens(self, passage):
        return len((passage.text or "").split())
"""

CONFIG = """
system: {name: bench, version: "1", rag: {object: app:Bench}}
dataset: cases.jsonl
evaluators:
  - {type: contains, criterion: answer_correct, field: answer, expected_field: answer}
  - {type: hit_rate, k: 5}
  - {type: citation_validity}
"""


def project(root: Path, n: int) -> Path:
    root.mkdir(parents=True)
    (root / "app.py").write_text(APP)
    (root / "oloproof.yaml").write_text(CONFIG)
    with (root / "cases.jsonl").open("w") as f:
        for i in range(n):
            gold = [{"doc_id": f"d{i}-12", "text": "The answer is yes. " * 10}]
            expected = {"answer": "yes", "relevant": [{"doc_id": f"d{i}-12"}], "gold_context": gold}
            f.write(json.dumps({"id": f"c{i}", "input": {"n": i}, "expected": expected}) + "\n")
    return root


# Runs the CLI in this process, then reports its time, its own peak RSS (ru_maxrss, KB), the
# peak of its anonymous resident memory (RssAnon, sampled every 10 ms: RSS without the mapped
# ledger file's pages) and, under tracemalloc, the Python heap's peak (bytes).
WRAPPER = """
import json, resource, sys, threading, time, tracemalloc
args, traced = json.loads(sys.argv[1]), sys.argv[2] == "1"
if traced:
    tracemalloc.start()
anon = [0]

def sample():
    while True:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("RssAnon:"):
                    anon[0] = max(anon[0], int(line.split()[1]))
        time.sleep(0.01)

threading.Thread(target=sample, daemon=True).start()
from oloproof.cli.main import main
sys.argv = ["oloproof", *args]
start, code = time.perf_counter(), 0
try:
    main()
except SystemExit as exc:
    code = exc.code or 0
report = {
    "code": code,
    "seconds": time.perf_counter() - start,
    "rss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
    "anon_kb": anon[0],
    "heap": tracemalloc.get_traced_memory()[1] if traced else 0,
}
sys.stderr.write(json.dumps(report) + "\\n")
"""


@dataclass(frozen=True)
class Measured:
    seconds: float
    rss_mb: float
    anon_mb: float
    heap_mb: float
    out: str


def oloproof(root: Path, *args: str, traced: bool = False) -> Measured:
    """Run the CLI in a process of its own and read what it reports of itself."""
    done = subprocess.run(
        [sys.executable, "-P", "-c", WRAPPER, json.dumps(args), "1" if traced else "0"],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
    )
    report = json.loads(done.stderr.strip().splitlines()[-1])
    if report["code"] not in (0, 1, 3):
        raise SystemExit(f"oloproof {' '.join(args)} exited {report['code']}: {done.stderr}")
    return Measured(
        report["seconds"],
        report["rss_kb"] / 1024,
        report["anon_kb"] / 1024,
        report["heap"] / 2**20,
        done.stdout,
    )


def measure(base: Path, n: int) -> tuple[Measured, Measured]:
    """Diagnose n failed cases: (a plain run, a run under tracemalloc), of one parent run."""
    root = project(base / f"n{n}", n)
    run_id = oloproof(root, "run").out.split()[1]
    args = ("diagnose", run_id, "--intervention", "top-k", "--top-k", "10")
    plain = oloproof(root, *args, "--criterion", "answer_correct")
    assert f"Recovered under top-k 10: 0 of {n}" in plain.out, plain.out
    traced = oloproof(root, *args, "--criterion", "answer_correct", traced=True)
    return plain, traced


def main() -> None:
    sizes = [int(a) for a in sys.argv[1:] if a.isdigit()] or [200, 2_000]
    small, large = sizes[0], sizes[-1]
    with tempfile.TemporaryDirectory() as tmp:
        found = {n: measure(Path(tmp), n) for n in (small, large)}
    for n, (plain, traced) in found.items():
        print(
            f"diagnose top-k over {n} failed cases: {plain.seconds:.2f} s, peak RSS "
            f"{plain.rss_mb:.0f} MB (anonymous {plain.anon_mb:.0f} MB), Python heap peak "
            f"{traced.heap_mb:.1f} MB"
        )
    (p_small, t_small), (p_large, t_large) = found[small], found[large]
    time_ratio = p_large.seconds / p_small.seconds
    print(
        f"{large} / {small} cases (x{large / small:.0f}): time x{time_ratio:.2f} (per case "
        f"x{time_ratio * small / large:.2f}), peak RSS x{p_large.rss_mb / p_small.rss_mb:.2f}, "
        f"anonymous x{p_large.anon_mb / p_small.anon_mb:.2f}, "
        f"Python heap peak x{t_large.heap_mb / t_small.heap_mb:.2f}"
    )


if __name__ == "__main__":
    main()
