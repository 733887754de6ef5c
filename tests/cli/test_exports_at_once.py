"""Two `oloproof export RUN` at once write one whole bundle, not a mix of both. Real CLI
processes; the first is held part way through writing its cases until the second has started.

(Before: both wrote `.oloproof/bundles/RUN/cases.jsonl.tmp`; the second finished and renamed
it while the first was still writing into it, and the first then failed with exit 2, "No such
file or directory", its cases appended to the file the second had made.)
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from tests.support import oloproof, toy_project

# `oloproof export latest`, held after its first case until the file `release` exists.
HELD_EXPORT = """
import pathlib, sys, time
from oloproof import inspect
record = inspect._bundle_record

def held(*args):
    if not pathlib.Path("held").exists():
        pathlib.Path("held").write_text("")
        while not pathlib.Path("release").exists():
            time.sleep(0.01)
    return record(*args)

inspect._bundle_record = held
sys.argv = ["oloproof", "export", "latest"]
from oloproof.cli.main import main
main()
"""


def waiting_on_a_lock(pid: int) -> bool:
    """Whether process ``pid``, or the process the command runs its work in (its child), waits
    for a file lock (a ``->`` line of /proc/locks)."""
    children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    pids = {str(pid), *children}
    return any(
        "->" in line and line.split()[5] in pids
        for line in Path("/proc/locks").read_text().splitlines()
    )


def test_two_exports_at_once_write_one_whole_bundle(tmp_path: Path) -> None:
    root = toy_project(tmp_path / "p", cases=5)
    assert oloproof("run", cwd=root).code in (0, 3)
    command = [sys.executable, "-m", "oloproof", "export", "latest"]
    first = subprocess.Popen([sys.executable, "-c", HELD_EXPORT], cwd=root, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60  # a guard against a hang, not a timing
        while not (root / "held").exists():
            assert first.poll() is None and time.monotonic() < deadline
            time.sleep(0.01)
        second = subprocess.Popen(command, cwd=root, stderr=subprocess.PIPE)
        while second.poll() is None and not waiting_on_a_lock(second.pid):
            assert time.monotonic() < deadline
            time.sleep(0.01)
    finally:
        (root / "release").write_text("")  # a failed assertion leaves no process held
    outcomes = [(p.wait(timeout=60), p.communicate()[1].decode()) for p in (first, second)]
    assert outcomes == [(0, ""), (0, "")]  # was: the first, exit 2, "No such file or directory"

    (bundle,) = (root / ".oloproof" / "bundles").iterdir()
    cases = (bundle / "cases.jsonl").read_bytes()
    manifest = json.loads((bundle / "manifest.json").read_text())
    assert manifest["cases"] == 5 == len(cases.splitlines())
    assert manifest["cases_sha256"] == hashlib.sha256(cases).hexdigest()
    ids = sorted(json.loads(line)["id"] for line in cases.splitlines())
    assert ids == [f"c{i}" for i in range(1, 6)]
    assert sorted(os.listdir(bundle)) == ["cases.jsonl", "manifest.json"]
