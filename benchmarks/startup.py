"""Start-up time of `oloproof --help`, `runs` and `inspect RUN`, as ratios of `--help`.

    python -P benchmarks/startup.py [REPEATS]

Medians of REPEATS runs of each command in a subprocess, in a copy of the bundled blackbox_rag
example after one run (13 cases): the target is each command within 1.5 x `--help`.

The packages are compiled to bytecode first, as installing a wheel does and as the first
command after an editable install does, unless PYTHONDONTWRITEBYTECODE is set: then every
command compiles each module it imports again, which costs `inspect` (more modules) more than
`--help`.
"""

from __future__ import annotations

import compileall
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "blackbox_rag"


def medians(commands: list[list[str]], cwd: Path, repeats: int) -> list[float]:
    """The median time of each command, run in turn REPEATS times (interleaved, so that the
    machine's drift over the measurement weighs on every command alike)."""
    times: list[list[float]] = [[] for _ in commands]
    for _ in range(repeats):
        for args, took in zip(commands, times, strict=True):
            start = time.perf_counter()
            subprocess.run(args, cwd=cwd, check=False, capture_output=True)
            took.append(time.perf_counter() - start)
    return [statistics.median(took) for took in times]


def compile_packages() -> None:
    import ledger
    import oloproof

    for package in (oloproof, ledger):
        compileall.compile_dir(Path(package.__file__).parent, quiet=1)


def main() -> None:
    repeats = int(sys.argv[1]) if len(sys.argv) > 1 else 11
    compile_packages()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(shutil.copytree(EXAMPLE, Path(tmp) / "project"))
        oloproof = [sys.executable, "-m", "oloproof"]
        done = subprocess.run([*oloproof, "run"], cwd=root, capture_output=True, text=True)
        run_id = done.stdout.split()[1]
        commands = {
            "python -c pass": [sys.executable, "-c", "pass"],
            "oloproof --help": [*oloproof, "--help"],
            "oloproof runs": [*oloproof, "runs"],
            "oloproof inspect RUN": [*oloproof, "inspect", run_id],
        }
        found = dict(zip(commands, medians(list(commands.values()), root, repeats), strict=True))
        help_seconds = found["oloproof --help"]
        for label, took in found.items():
            line = f"{label}: {took:.3f} s"
            if label.startswith(("oloproof runs", "oloproof inspect")):
                line += f", x{took / help_seconds:.2f} --help (target at most 1.5)"
            print(line)


if __name__ == "__main__":
    main()
