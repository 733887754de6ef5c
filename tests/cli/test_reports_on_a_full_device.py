"""A report that cannot be written on a full device leaves no earlier report in its place.

The probe: `oloproof run --junit DEV/report.xml --summary DEV/summary.md` passed (exit 0) on a
small device, which then filled up. The same command again, its gate now blocking: exit 2
(`cannot write DEV/report.xml: No space left on device`), with two warnings that the reports
saying so could not be written either, and `report.xml` and `summary.md` were still the first
run's, a passing `gate` test and `Gate: PASS (exit 0)`, read by a CI system as this run's. And
killed part way (SIGKILL), the run left them too: the reports saying it had not ended could not
be written as it started. Removing a file needs no room, so a report that cannot be written
now removes the earlier one at its path, and the warning says so.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.support import (
    HELD_TOY_APP,
    HELD_TOY_CONFIG,
    oloproof,
    tmpfs,
    write_project,
)

PASSING = "version: 1\nrules:\n  - {id: floor, metric: echo, min: 0.05}\n"
BLOCKING = "version: 1\nrules:\n  - {id: floor, metric: echo, min: 0.5}\n"  # 4 cases: too few


def _project(tmp_path: Path) -> Path:
    cases = [
        {"id": f"c{i}", "input": {"q": f"q{i}"}, "expected": {"answer": f"q{i}"}} for i in range(4)
    ]
    return write_project(
        tmp_path / "p", app=HELD_TOY_APP, config=HELD_TOY_CONFIG, policy=PASSING, cases=cases
    )


def _passed_then_full(root: Path, device: Path) -> tuple[str, ...]:
    reports = ("--junit", str(device / "report.xml"), "--summary", str(device / "summary.md"))
    passed = oloproof("run", *reports, cwd=root)
    assert passed.code == 0, passed.out + passed.err
    assert "**Gate: PASS (exit 0)**" in (device / "summary.md").read_text()
    with (device / "fill").open("wb", buffering=0) as fill:
        try:
            while True:
                fill.write(b"\0" * 4096)
        except OSError:
            pass
    (root / "policy.yaml").write_text(BLOCKING)
    return reports


def _no_green_report(device: Path) -> None:
    """Each report path holds nothing, or a report saying there is no gate: which of the two
    depends on the room a removal frees for the next write."""
    for name in ("report.xml", "summary.md"):
        path = device / name
        text = path.read_text() if path.exists() else "no gate"
        assert "PASS" not in text and "no gate" in text.lower(), text


def test_a_report_that_cannot_be_written_removes_the_earlier_one(tmp_path: Path) -> None:
    root = _project(tmp_path)
    with tmpfs(tmp_path / "dev", "64k") as device:
        reports = _passed_then_full(root, device)
        done = oloproof("run", "--no-cache", *reports, cwd=root)
        assert done.code == 2, done.out + done.err
        assert done.err.endswith(": No space left on device\n"), done.err
        assert "the earlier report there is removed" in done.err, done.err
        _no_green_report(device)  # was: both the passing run's


def test_a_run_killed_on_a_full_device_leaves_no_earlier_report(tmp_path: Path) -> None:
    root = _project(tmp_path)
    with tmpfs(tmp_path / "dev", "64k") as device:
        reports = _passed_then_full(root, device)
        proc = subprocess.Popen(
            [sys.executable, "-m", "oloproof", "run", "--no-cache", *reports],
            cwd=root,
            env={**os.environ, "HOLD": "q2"},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            assert proc.stderr is not None
            said = []
            for line in proc.stderr:  # until the case is held (or the run ended)
                if line == "holding\n":
                    break
                said.append(line)
            err = "".join(said)
        finally:
            proc.kill()
            proc.communicate(timeout=60)
        assert "the earlier report there is removed" in err, err
        _no_green_report(device)  # was: both the passing run's
