"""A report that cannot be written on a full device leaves no earlier report in its place.

The probe: `oloproof run --junit DEV/report.xml --summary DEV/summary.md` passed (exit 0) on a
small device, which then filled up. The same command again, its gate now blocking: exit 2
(`cannot write DEV/report.xml: No space left on device`), with two warnings that the reports
saying so could not be written either, and `report.xml` and `summary.md` were still the first
run's, a passing `gate` test and `Gate: PASS (exit 0)`, read by a CI system as this run's; and
killed part way (SIGKILL), the run left them too. The same held for a device the system's own
code filled during the run. Removing a file needs no room, so a report that cannot be written
now removes the earlier one at its path, and the message says so; a device full before the
run starts refuses it there (test_report_that_cannot_be_replaced_refused_first).
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.support import HELD_TOY_CONFIG, oloproof, tmpfs, write_project

# Fills the device at $FILL as it answers case q2: the run's reports are written after it.
APP = """
import os

from oloproof import system


@system(name="toy", version="1")
def run(case):
    if case["q"] == "q2" and os.environ.get("FILL"):
        with open(os.environ["FILL"], "wb", buffering=0) as fill:
            try:
                while True:
                    fill.write(b"\\0" * 4096)
            except OSError:
                pass
    return {"answer": case["q"]}
"""
PASSING = "version: 1\nrules:\n  - {id: floor, metric: echo, min: 0.05}\n"
BLOCKING = "version: 1\nrules:\n  - {id: floor, metric: echo, min: 0.5}\n"  # 4 cases: too few


def _passed(tmp_path: Path, device: Path) -> tuple[Path, tuple[str, ...]]:
    cases = [
        {"id": f"c{i}", "input": {"q": f"q{i}"}, "expected": {"answer": f"q{i}"}} for i in range(4)
    ]
    root = write_project(
        tmp_path / "p", app=APP, config=HELD_TOY_CONFIG, policy=PASSING, cases=cases
    )
    reports = ("--junit", str(device / "report.xml"), "--summary", str(device / "summary.md"))
    passed = oloproof("run", *reports, cwd=root)
    assert passed.code == 0, passed.out + passed.err
    assert "**Gate: PASS (exit 0)**" in (device / "summary.md").read_text()
    (root / "policy.yaml").write_text(BLOCKING)
    return root, reports


def _no_green_report(device: Path) -> None:
    """Each report path holds nothing, or a report saying there is no gate: which of the two
    depends on the room a removal frees for the next write."""
    for name in ("report.xml", "summary.md"):
        path = device / name
        text = path.read_text() if path.exists() else "no gate"
        assert "PASS" not in text and "no gate" in text.lower(), text


def test_a_device_full_before_the_run_refuses_it_and_removes_the_earlier_report(
    tmp_path: Path,
) -> None:
    with tmpfs(tmp_path / "dev", "64k") as device:
        root, reports = _passed(tmp_path, device)
        oloproof("run", "--no-cache", "--limit", "3", cwd=root, env={"FILL": str(device / "f")})
        done = oloproof("run", "--no-cache", *reports, cwd=root)
        assert done.err == (
            f"error: cannot write {device / 'report.xml'}: No space left on device; the earlier "
            "report there is removed\n"
        )
        assert done.code == 2
        _no_green_report(device)  # was: both the passing run's
        assert len(json.loads(oloproof("runs", "--json", cwd=root).out)) == 2  # no third


def test_a_device_filled_during_the_run_leaves_no_earlier_report(tmp_path: Path) -> None:
    with tmpfs(tmp_path / "dev", "64k") as device:
        root, reports = _passed(tmp_path, device)
        done = oloproof("run", "--no-cache", *reports, cwd=root, env={"FILL": str(device / "f")})
        assert done.code == 2, done.out + done.err
        assert "No space left on device" in done.err
        assert "the earlier report there is removed" in done.err, done.err
        _no_green_report(device)  # was: both the passing run's
