"""The viewer at scale: time to first byte and full render of its pages at 10k and 100k cases.

    python -P benchmarks/view.py [N ...]      (default 10000 100000)

For each size, a run is made with the real runner (a callable system recording a retrieval, a
context and citations; three evaluators; one slice; one case in ten failing), then
`oloproof view` serves it in a subprocess and each page is fetched over HTTP twice: the first
time (cold: nothing cached in the viewer) and again (warm). Printed per page: time to first
byte and to the last byte, in ms, and as a ratio of the time the library takes to re-derive the
run's report from the ledger alone (`read_run_report`, measured in the same run), the replay a
page would cost if it read the whole run.
"""

from __future__ import annotations

import http.client
import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from oloproof import aio
from oloproof.runner import execute_run, plan_run
from oloproof.store import open_project_ledger
from oloproof.stored_runs import read_run_report

APP = """
from oloproof import current_case, system

@system(name="bench", version="1", records=("retrieval/v1", "context/v1", "citations/v1"))
def answer(case):
    rec = current_case()
    rec.retrieval({"candidates": [{"doc_id": "d1", "score": 2.0}, {"doc_id": "d2", "score": 1.0}]})
    rec.context({"items": [{"doc_id": "d1", "position": 1}]})
    rec.citations(["d1"])
    wrong = int(case["q"][1:]) % 10 == 0
    return {"answer": "no" if wrong else case["q"], "citations": ["d1"]}
"""

CONFIG = """system: {name: bench, version: '1', callable: 'app:answer'}
dataset: cases.jsonl
concurrency: 8
policy: policy.yaml
slices: [metadata.topic]
evaluators:
  - {type: contains, criterion: answer_correct, field: answer, expected_field: answer}
  - {type: hit_rate, k: 2}
  - {type: citation_validity}
"""


def make_run(root: Path, n: int) -> tuple[str, float]:
    root.mkdir(parents=True)
    (root / "app.py").write_text(APP)
    (root / "oloproof.yaml").write_text(CONFIG)
    (root / "policy.yaml").write_text(
        "version: 1\nrules:\n  - {id: floor, metric: answer_correct, min: 0.8}\n"
    )
    with (root / "cases.jsonl").open("w") as f:
        for i in range(n):
            case = {
                "id": f"c{i}",
                "input": {"q": f"q{i}"},
                "expected": {"answer": f"q{i}", "relevant": [{"doc_id": "d1"}]},
                "metadata": {"topic": f"t{i % 5}"},
            }
            f.write(json.dumps(case) + "\n")
    ledger = open_project_ledger(root)
    outcome = aio.run(execute_run(ledger, plan_run(root / "oloproof.yaml")))
    start = time.perf_counter()
    read_run_report(ledger, outcome.run_id)
    replay = time.perf_counter() - start
    ledger.close()
    return outcome.run_id, replay


def fetch(port: int, path: str) -> tuple[float, float, int]:
    """(seconds to the first byte of the body, seconds to the last, bytes) of one GET."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
    start = time.perf_counter()
    conn.request("GET", path)
    response = conn.getresponse()
    first = response.read(1)
    ttfb = time.perf_counter() - start
    rest = response.read()
    total = time.perf_counter() - start
    conn.close()
    assert response.status == 200, (path, response.status)
    return ttfb, total, len(first) + len(rest)


def measure(n: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "p"
        start = time.perf_counter()
        run_id, replay = make_run(root, n)
        made = time.perf_counter() - start
        print(f"{n} cases: run made in {made:.0f} s; read_run_report replays it in {replay:.2f} s")
        proc = subprocess.Popen(
            [sys.executable, "-m", "oloproof", "view", "--port", "0"],
            cwd=root,
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            assert proc.stdout is not None
            port = int(re.findall(r":(\d+)/", proc.stdout.readline())[0])
            pages = [
                ("runs page", "/"),
                ("run page", f"/runs/{run_id}"),
                ("failures, page 1", f"/runs/{run_id}/failures"),
                ("failures, one criterion", f"/runs/{run_id}/failures?criterion=answer_correct"),
                ("failures, page 40", f"/runs/{run_id}/failures?page=40"),
                ("failures, one slice value", f"/runs/{run_id}/failures?slice=metadata.topic%3Dt0"),
                ("a case", f"/runs/{run_id}/cases/c10"),
            ]  # fmt: skip
            for label, path in pages:
                for when in ("cold", "warm"):
                    ttfb, total, size = fetch(port, path)
                    print(
                        f"  {label:36s} {when}: first byte {ttfb * 1e3:7.1f} ms "
                        f"({ttfb / replay:.3f}x replay), all {total * 1e3:7.1f} ms "
                        f"({total / replay:.3f}x replay), {size / 1024:.0f} KB"
                    )
        finally:
            proc.terminate()
            proc.communicate(timeout=30)


def main() -> None:
    sizes = [int(a) for a in sys.argv[1:]] or [10_000, 100_000]
    for n in sizes:
        measure(n)


if __name__ == "__main__":
    main()
