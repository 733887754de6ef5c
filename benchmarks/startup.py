"""Start-up time of `oloproof --help`, `runs` and `inspect RUN`, as ratios of `--help`.

    python -P benchmarks/startup.py [REPEATS]

Medians of REPEATS runs of each command in a subprocess, in a copy of the bundled blackbox_rag
example after one run (13 cases): the target is each command within 1.5 x `--help`.
"""

from __future__ import annotations

import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "blackbox_rag"


def median_seconds(args: list[str], cwd: Path, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        subprocess.run(args, cwd=cwd, check=False, capture_output=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    repeats = int(sys.argv[1]) if len(sys.argv) > 1 else 11
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(shutil.copytree(EXAMPLE, Path(tmp) / "project"))
        oloproof = [sys.executable, "-m", "oloproof"]
        done = subprocess.run([*oloproof, "run"], cwd=root, capture_output=True, text=True)
        run_id = done.stdout.split()[1]
        bare = median_seconds([sys.executable, "-c", "pass"], root, repeats)
        print(f"python -c pass: {bare:.3f} s")
        help_seconds = median_seconds([*oloproof, "--help"], root, repeats)
        print(f"oloproof --help: {help_seconds:.3f} s")
        for label, args in (
            ("oloproof runs", ["runs"]),
            ("oloproof inspect RUN", ["inspect", run_id]),
        ):
            took = median_seconds([*oloproof, *args], root, repeats)
            print(f"{label}: {took:.3f} s, x{took / help_seconds:.2f} --help (target at most 1.5)")


if __name__ == "__main__":
    main()
