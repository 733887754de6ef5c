"""Durability before decisions: a commit that fails stops the run with the cause in plain words,
records no decision, and ``--resume`` finishes the run once space is back.

Two real ways to fail a commit: a small tmpfs mounted under the test's folder (needs the right
to mount, as root in a container has; skipped otherwise), and a file size limit set on the
``oloproof`` process (``RLIMIT_FSIZE``, available to anyone).
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from tests.support import Result, oloproof, tmpfs

from ledger import open_ledger
from oloproof import events as ev

CASES = 600
FIRST_COMMIT = 101
APP = f"""
import time
from oloproof import system

@system(name="bulky", version="1")
def run(case):
    if case["q"] == "q{FIRST_COMMIT - 1}":
        # Finished cases are committed every 2 s: the first {FIRST_COMMIT} are, after this one.
        time.sleep(2.1)
    # Each output is ~16 KB: a few hundred cases are more than the small device holds.
    return {{"answer": case["q"], "padding": "x" * 16000}}
"""
CONFIG = """\
system: {name: bulky, version: "1", callable: "app:run"}
concurrency: 1
evaluators:
  - {type: contains, criterion: echo, field: answer, expected_field: answer}
policy: policy.yaml
"""
POLICY = "version: 1\nrules:\n  - {id: floor, metric: echo, min: 0.5}\n"


def _project(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "app.py").write_text(APP)
    (root / "oloproof.yaml").write_text(CONFIG)
    (root / "policy.yaml").write_text(POLICY)
    lines = (
        json.dumps({"id": f"c{i}", "input": {"q": f"q{i}"}, "expected": {"answer": f"q{i}"}})
        for i in range(CASES)
    )
    (root / "cases.jsonl").write_text("\n".join(lines) + "\n")
    return root


def _stored(root: Path) -> tuple[int, list[dict[str, object]], int]:
    """Case results stored, run_end bodies, decisions."""
    with open_ledger(root / ".oloproof") as ledger:
        results = sum(1 for _ in ledger.events(ev.CASE_RESULT))
        ends = [dict(e.body) for _, e in ledger.events(ev.RUN_END)]
        decisions = sum(1 for _ in ledger.events(ev.DECISION))
    return results, ends, decisions


def _check_stopped(root: Path, result: Result, cause: str) -> str:
    """The failed run's one sentence, what it left in the ledger; return its run id."""
    assert result.code == 2, result.out + result.err
    assert "Traceback" not in result.err and "Input/output error" not in result.err
    assert result.err.count("\n") == 1 and result.err.startswith("error: run run_")
    run_id = result.err.split()[2]
    assert f"stopped: {cause}" in result.err
    results, ends, decisions = _stored(root)
    assert f"; {results} of its {CASES} cases are stored;" in result.err
    assert result.err.rstrip().endswith(f"finish it with: oloproof run --resume {run_id}") or (
        result.err.rstrip().endswith("(its end record could not be written either)")
    )
    assert decisions == 0  # no decision on a run whose cases are not all stored
    assert FIRST_COMMIT <= results < CASES
    for end in ends:  # written if there was room: a stopped run that counts what is stored
        assert end["state"] == "stopped" and end["cases"] == results
    return run_id


def _check_resumed(root: Path, run_id: str) -> None:
    resumed = oloproof("run", "--resume", run_id, cwd=root)
    assert resumed.code == 0, resumed.out + resumed.err
    assert resumed.lines[0] == f"Run {run_id} [DECIDED/COMPLETE]"
    assert f"{CASES} / {CASES} observed · 0 missing" in resumed.out
    results, ends, decisions = _stored(root)
    assert results == CASES and decisions == 1
    assert ends[-1]["state"] == "complete" and ends[-1]["cases"] == CASES
    verify = oloproof("verify", cwd=root)
    assert verify.code == 0, verify.out + verify.err


@pytest.fixture
def small_device(tmp_path: Path) -> Iterator[tuple[Path, Callable[[], None]]]:
    """A 3 MB tmpfs; yields it and a function that grows it to 256 MB."""
    with tmpfs(tmp_path / "device", "3m") as mount:

        def grow() -> None:
            subprocess.run(["mount", "-o", "remount,size=256m", str(mount)], check=True)

        yield mount, grow


def test_a_full_disk_stops_the_run_and_resume_finishes_it(
    small_device: tuple[Path, Callable[[], None]],
) -> None:
    device, grow = small_device
    root = _project(device / "project")
    result = oloproof("run", cwd=root)
    run_id = _check_stopped(
        root, result, f"no space left on the device that holds {root / '.oloproof'}"
    )
    grow()
    _check_resumed(root, run_id)


def _limited(limit: int) -> Callable[[], None]:
    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.RLIM_INFINITY))

    return apply


def test_a_file_size_limit_stops_the_run_and_resume_finishes_it(tmp_path: Path) -> None:
    root = _project(tmp_path / "project")
    limit = 3 << 20
    proc = subprocess.run(
        [sys.executable, "-m", "oloproof", "run"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=300,
        preexec_fn=_limited(limit),
        env=dict(os.environ),
    )
    result = Result(proc.returncode, proc.stdout, proc.stderr)
    data_file = root / ".oloproof" / "ledger" / "data.mdb"
    run_id = _check_stopped(
        root,
        result,
        f"the ledger's file {data_file} reached the largest file size this process may write "
        f"({limit} bytes, ulimit -f)",
    )
    assert shutil.disk_usage(root).free > 64 << 20  # it was the limit, not the disk
    _check_resumed(root, run_id)
