"""What checking an installed distribution's files for edits in place costs, as a ratio of
`oloproof --help`'s start-up.

    python -P benchmarks/installed_files.py [DIST ...]

For each distribution (by default the largest of numpy, pandas, pyarrow and ray installed here),
the median time of ``oloproof.fingerprint._places._as_installed`` (read its ``RECORD`` and stat
every file it lists: what each run pays once per distribution its systems reach), and of the
worst case, every file hashed again (each one modified after its ``RECORD``), and of what a
distribution installed without a ``RECORD`` costs (``_module_files_digest``: every module file
in its folder hashed).
"""

from __future__ import annotations

import importlib.metadata
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from functools import partial

from oloproof.fingerprint._places import _as_installed, _module_files_digest, _unless_edited

CANDIDATES = ("numpy", "pandas", "pyarrow", "ray")


def median_ms(task: Callable[[], object], repeats: int) -> float:
    took = []
    for _ in range(repeats):
        start = time.perf_counter()
        task()
        took.append(time.perf_counter() - start)
    return statistics.median(took) * 1e3


def every_file_hashed(dist: importlib.metadata.Distribution) -> None:
    for file in dist.files or ():
        if file.hash is not None:
            digest = f"{file.hash.mode}={file.hash.value}"
            _unless_edited(str(file.locate()), digest, str(file.size), 0)


def main() -> None:
    names = sys.argv[1:] or [n for n in CANDIDATES if _present(n)]
    start_up = median_ms(
        lambda: subprocess.run([sys.executable, "-m", "oloproof", "--help"], capture_output=True),
        7,
    )
    print(f"oloproof --help start-up: {start_up:.0f} ms")
    for name in names:
        dist = importlib.metadata.distribution(name)
        files = len(dist.files or ())
        checked = median_ms(partial(_as_installed, dist, name, name), 9)
        worst = median_ms(partial(every_file_hashed, dist), 3)
        init = str(dist.locate_file(f"{name}/__init__.py"))
        unrecorded = median_ms(partial(_module_files_digest, init), 3)
        print(
            f"{name} {dist.version} ({files} files): checked {checked:.1f} ms "
            f"({checked / start_up:.3f} x start-up); every file hashed {worst:.0f} ms "
            f"({worst / start_up:.2f} x start-up); without a RECORD {unrecorded:.0f} ms "
            f"({unrecorded / start_up:.2f} x start-up)"
        )


def _present(name: str) -> bool:
    try:
        importlib.metadata.distribution(name)
    except importlib.metadata.PackageNotFoundError:
        return False
    return True


if __name__ == "__main__":
    main()
