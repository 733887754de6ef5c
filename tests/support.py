"""Shared helpers: run the real CLI in a subprocess inside a copy of a bundled example."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "examples"

_ADDRESS = re.compile(r"sha256:[0-9a-f]{64}")
_RUN_ID = re.compile(r"run_[0-9A-HJKMNP-TV-Z]{26}")


@dataclass
class Result:
    code: int
    out: str
    err: str

    @property
    def lines(self) -> list[str]:
        return self.out.splitlines()


def normalise(text: str) -> str:
    """Replace addresses and run ids, which differ from run to run."""
    return _RUN_ID.sub("run_…", _ADDRESS.sub("sha256:…", text))


def oloproof(
    *args: str, cwd: Path, env: dict[str, str] | None = None, timeout: float = 120
) -> Result:
    proc = subprocess.run(
        [sys.executable, "-m", "oloproof", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **(env or {})},
    )
    return Result(proc.returncode, proc.stdout, proc.stderr)


def copy_example(name: str, dest: Path) -> Path:
    target = dest / name
    shutil.copytree(
        EXAMPLES / name, target, ignore=shutil.ignore_patterns("__pycache__", ".oloproof")
    )
    return target
