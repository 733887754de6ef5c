"""Time and peak memory of ``oloproof diagnose`` over 200 and 2,000 failed cases, as ratios.

    python -P benchmarks/diagnose.py [SMALL LARGE]

(-P keeps benchmarks/ledger.py from shadowing the ledger package.)

A staged system (depth 20, top_k 5, a 150-word budget, passages of 60 words, gold context on
every case, every answer wrong) is run over SMALL and LARGE cases (200 and 2,000 by default);
each run is then diagnosed with a top-k replay, in a process of its own, twice:

- once plain, for its wall time and its peak resident memory (the process's own VmHWM).
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
import sys
import tempfile
from pathlib import Path

sys.path.append(str(Path(__file__).resolve().parent))
from cli_process import Measured, oloproof

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
