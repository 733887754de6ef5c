"""Start-up time of `oloproof --help`, `runs` and `inspect`, beside a bare interpreter.

    python -P benchmarks/startup.py [REPEATS]

Medians of REPEATS runs of each command in a subprocess, in a fresh project with one event.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ledger import Event
from oloproof.store import open_project_ledger


def median_seconds(args: list[str], cwd: Path, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        subprocess.run(args, cwd=cwd, check=True, capture_output=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    repeats = int(sys.argv[1]) if len(sys.argv) > 1 else 11
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        ledger = open_project_ledger(root)
        address = ledger.put(Event("note", 1, {"text": "hello"}))
        ledger.close()
        bare = median_seconds([sys.executable, "-c", "pass"], root, repeats)
        print(f"python -c pass: {bare:.3f} s")
        for label, args in (
            ("oloproof --help", ["--help"]),
            ("oloproof runs", ["runs"]),
            ("oloproof inspect ADDRESS", ["inspect", address[:15]]),
        ):
            took = median_seconds([sys.executable, "-m", "oloproof", *args], root, repeats)
            print(f"{label}: {took:.3f} s ({took / bare:.1f}x a bare interpreter; goal 0.3 s)")


if __name__ == "__main__":
    main()
