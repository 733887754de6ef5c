"""Archive sizes, export/import memory and time, and compaction, at two project sizes.

    python -P benchmarks/archive.py [N]

(-P keeps benchmarks/ledger.py from shadowing the ledger package.)

For N and 10 N cases: a project (the recorded system of benchmarks/overhead.py, five
evaluators) is run four times, each run a new system version, so each run stores its own
executions and judgments. Then, each in a fresh process so that its peak resident memory is its
own: export of the newest run, export of the whole ledger, import of each into an empty
ledger, and compaction to the newest run. Peak resident memory (VmHWM, which counts the pages
of the mapped ledger file a step reads) is printed above a floor measured the same way (a
process that opens the ledger and counts its events), and the peak of the Python heap
(tracemalloc, in a second run of the step); the 10 N figures as ratios of the N ones.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any


def _overhead() -> Any:
    """benchmarks/overhead.py, loaded by path (its folder holds a ledger.py of its own)."""
    import importlib.util

    path = Path(__file__).resolve().parent / "overhead.py"
    spec = importlib.util.spec_from_file_location("overhead", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


STEP = r"""
import sys, time
from pathlib import Path
from ledger import export_archive, import_archive, open_ledger
from ledger.compact import compact_ledger
from oloproof.archiving import LINKS
from oloproof.audit import application_checks
from oloproof.store import APPLICATION

op, source, target, heap = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3]), sys.argv[4]
if heap == "heap":
    import tracemalloc
    tracemalloc.start()
started = time.perf_counter()
if op == "floor":
    with open_ledger(source, app=APPLICATION, create=False) as ledger:
        len(ledger)
elif op in ("export-run", "export-all"):
    with open_ledger(source, app=APPLICATION, create=False) as ledger:
        ids = [] if op == "export-all" else ["latest"]
        export_archive(ledger, ids, target, links=LINKS, everything=op == "export-all")
elif op == "import":
    with open_ledger(target, app=APPLICATION) as ledger:
        import_archive(ledger, source)
elif op == "compact":
    def newest(ledger):
        return ["latest"]
    compact_ledger(source, newest, app=APPLICATION, links=LINKS,
                   checks=[lambda ledger: application_checks(ledger)])
# VmHWM is this process's own peak: ru_maxrss would also count the parent's pages the
# child shared between fork and exec.
peak = next(l for l in open("/proc/self/status") if l.startswith("VmHWM:")).split()[1]
if heap == "heap":
    peak = tracemalloc.get_traced_memory()[1] // 1024
print(time.perf_counter() - started, peak)
"""


def step(op: str, source: Path, target: Path, heap: bool = False) -> tuple[float, int]:
    """(seconds, peak resident KiB) of one step in a fresh process; with ``heap``, the peak
    of the Python heap instead (under tracemalloc, so the seconds are not comparable)."""
    proc = subprocess.Popen(
        [sys.executable, "-P", "-c", STEP, op, str(source), str(target), "heap" if heap else "-"],
        stdout=subprocess.PIPE,
        text=True,
    )
    out, _ = proc.communicate()
    assert proc.returncode == 0, (op, out)
    seconds, peak = out.split()
    return float(seconds), int(peak)


def measure(n: int, work: Path) -> dict[str, float]:
    from oloproof import aio
    from oloproof.runner import execute_run, plan_run
    from oloproof.store import open_project_ledger

    overhead: Any = _overhead()
    root = overhead.project(work / f"p{n}", n, "recorded", overhead.FIVE, 8)
    config = root / "oloproof.yaml"
    sizes = []
    text = config.read_text()
    for version in ("1", "2", "3", "4"):
        config.write_text(re.sub(r"version: '[^']*'", f"version: '{version}'", text, count=1))
        with open_project_ledger(root) as ledger:
            aio.run(execute_run(ledger, plan_run(config)))
        sizes.append((root / ".oloproof" / "ledger" / "data.mdb").stat().st_size)
    store = root / ".oloproof"
    figures: dict[str, float] = {"cases": n, "store_bytes": sizes[-1]}
    _, floor = step("floor", store, work / "unused")
    figures["floor_kib"] = floor
    for name, op, target in (
        ("run", "export-run", work / f"run{n}.arc"),
        ("all", "export-all", work / f"all{n}.arc"),
    ):
        seconds, peak = step(op, store, target)
        figures[f"export_{name}_s"] = seconds
        figures[f"export_{name}_rss_kib"] = peak - floor
        figures[f"export_{name}_heap_kib"] = step(op, store, target, heap=True)[1]
        figures[f"archive_{name}_bytes"] = target.stat().st_size
        seconds, peak = step("import", target, work / f"into_{name}{n}")
        figures[f"import_{name}_s"] = seconds
        figures[f"import_{name}_rss_kib"] = peak - floor
        shutil.rmtree(work / f"into_{name}{n}")
        figures[f"import_{name}_heap_kib"] = step(
            "import", target, work / f"into_{name}{n}", heap=True
        )[1]
    copy = work / f"compact{n}"
    shutil.copytree(store, copy)
    before = (copy / "ledger" / "data.mdb").stat().st_size
    seconds, peak = step("compact", copy, work / "unused")
    figures["compact_s"] = seconds
    figures["compact_rss_kib"] = peak - floor
    figures["compact_before_bytes"] = before
    figures["compact_after_bytes"] = (copy / "ledger" / "data.mdb").stat().st_size
    return figures


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    with tempfile.TemporaryDirectory() as tmp:
        small = measure(n, Path(tmp))
        large = measure(10 * n, Path(tmp))
    print(json.dumps({"N": small, "10N": large}, indent=2))
    print()
    print(f"{'figure':<22} {'N':>14} {'10 N':>14} {'10 N / N':>9}")
    for key in small:
        ratio = large[key] / small[key] if small[key] else float("nan")
        print(f"{key:<22} {small[key]:>14,.2f} {large[key]:>14,.2f} {ratio:>8.2f}x")
    per_case = large["archive_run_bytes"] / large["cases"]
    print(
        f"\nrun archive per case: {per_case:,.0f} bytes; whole-ledger archive / store: "
        f"{large['archive_all_bytes'] / large['store_bytes']:.2f}; compaction keeps "
        f"{large['compact_after_bytes'] / large['compact_before_bytes']:.0%} of the file"
    )


if __name__ == "__main__":
    main()
