"""Run the CLI in a process of its own and read what that process reports of itself.

Shared by the benchmarks that measure commands (``diagnose.py``, ``scale.py``); they add this
folder at the end of ``sys.path``, after the installed packages, so that ``benchmarks/ledger.py``
never shadows the ``ledger`` package.

Reported: wall time; the CPU time the process used, user and system (``process_time``); peak
resident memory (``VmHWM``), which counts the mapped ledger pages the command touched (LMDB
reads through a memory map; the kernel can drop them at will); the peak of its anonymous
resident memory (RssAnon, sampled every 10 ms), which leaves the mapped file out; the bytes it
wrote (``/proc/self/io``: ``wchar``, every byte handed to ``write``); and, when traced, the
Python heap's peak (tracemalloc). The command runs in the measured process itself, without the
child process that reading commands otherwise fork.

Not ``ru_maxrss``: Linux carries it over from the parent at fork, through exec, so every command
started by a benchmark that had just read a 1 GB ledger reported the benchmark's own 2.5 GB.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

WRAPPER = """
import json, sys, threading, time, tracemalloc
args, traced = json.loads(sys.argv[1]), sys.argv[2] == "1"
if traced:
    tracemalloc.start()
anon = [0]

def status(field):
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith(field))

def sample():
    while True:
        anon[0] = max(anon[0], status("RssAnon:"))
        time.sleep(0.01)

def written():
    with open("/proc/self/io") as io:
        return dict(line.split(": ") for line in io.read().splitlines())

threading.Thread(target=sample, daemon=True).start()
# The reading commands fork a child to survive LMDB stopping the process on a damaged page; here
# the command runs in this process, so that what it uses is what this process reports.
from oloproof.cli import guard
guard.run_guarded = lambda body, where: body()
from oloproof.cli.main import main
sys.argv = ["oloproof", *args]
before = int(written()["wchar"])
start, code = time.perf_counter(), 0
cpu = time.process_time()
try:
    main()
except SystemExit as exc:
    code = exc.code or 0
report = {
    "code": code,
    "seconds": time.perf_counter() - start,
    "cpu_seconds": time.process_time() - cpu,
    "rss_kb": status("VmHWM:"),
    "anon_kb": anon[0],
    "written": int(written()["wchar"]) - before,
    "heap": tracemalloc.get_traced_memory()[1] if traced else 0,
}
sys.stderr.write(json.dumps(report) + "\\n")
"""


@dataclass(frozen=True)
class Measured:
    seconds: float
    cpu_seconds: float
    rss_mb: float
    anon_mb: float
    heap_mb: float
    written: int
    out: str


def oloproof(root: Path, *args: str, traced: bool = False) -> Measured:
    """Run ``oloproof ARGS`` in ``root`` in a fresh process; exit 2 or worse stops the benchmark."""
    done = subprocess.run(
        [sys.executable, "-P", "-c", WRAPPER, json.dumps(args), "1" if traced else "0"],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
    )
    lines = done.stderr.strip().splitlines()
    try:
        report = json.loads(lines[-1])
    except (IndexError, json.JSONDecodeError):
        raise SystemExit(f"oloproof {' '.join(args)} died: {done.stderr}") from None
    if report["code"] not in (0, 1, 3):
        raise SystemExit(f"oloproof {' '.join(args)} exited {report['code']}: {done.stderr}")
    return Measured(
        report["seconds"],
        report["cpu_seconds"],
        report["rss_kb"] / 1024,
        report["anon_kb"] / 1024,
        report["heap"] / 2**20,
        report["written"],
        done.stdout,
    )
