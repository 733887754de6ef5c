"""A run killed outright does not leave an earlier run's green reports to be read as its own.

The probe: `oloproof run --junit report.xml --summary summary.md` passed (exit 0), and the same
command run again was killed with SIGKILL part way (an out-of-memory kill, a CI job's timeout):
exit 137, and `report.xml` and `summary.md` were still the first run's, `Gate: PASS (exit 0)`
and a passing `gate` test, where docs/ci.md says an earlier run's reports are never left at
those paths to be read as this command's. No handler runs on SIGKILL, so now a report file
already there is replaced, before the work starts, by reports saying the command has not ended.
"""

from __future__ import annotations

import json
import signal
import xml.etree.ElementTree as ET
from pathlib import Path

from tests.support import HELD_TOY_APP, HELD_TOY_CONFIG, oloproof, start_run, write_project

POLICY = "version: 1\nrules:\n  - {id: floor, metric: echo, min: 0.05}\n"
REPORTS = ("--junit", "report.xml", "--summary", "summary.md")


def test_a_killed_run_leaves_no_green_report_of_an_earlier_one(tmp_path: Path) -> None:
    cases = [
        {"id": f"c{i}", "input": {"q": f"q{i}"}, "expected": {"answer": f"q{i}"}} for i in range(6)
    ]
    root = write_project(
        tmp_path / "p", app=HELD_TOY_APP, config=HELD_TOY_CONFIG, policy=POLICY, cases=cases
    )
    passed = oloproof("run", *REPORTS, cwd=root)
    assert passed.code == 0, passed.out + passed.err
    assert "**Gate: PASS (exit 0)**" in (root / "summary.md").read_text()

    proc = start_run(root, "holding\n", env={"HOLD": "q3"}, args=("--no-cache", *REPORTS))
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=60)
    assert proc.returncode == -signal.SIGKILL

    summary = (root / "summary.md").read_text()
    assert "Gate: PASS" not in summary
    assert "**No gate** (not ended)" in summary, summary
    gate = ET.parse(root / "report.xml").getroot().find(".//testcase[@name='gate']")
    assert gate is not None
    error = gate.find("error")
    assert error is not None and error.get("type") == "NO_GATE", ET.tostring(gate)
    assert error.get("message") == "no gate (not ended)"
    # The run itself is recorded as the interrupted, undecided run it is.
    (row, _) = json.loads(oloproof("runs", "--json", cwd=root).out)
    assert (row["execution_state"], row["gate"]) == ("INTERRUPTED", None)


def test_a_run_that_ends_replaces_the_reports_it_started_with(tmp_path: Path) -> None:
    """The reports written as the run starts are replaced by its own as it ends."""
    cases = [
        {"id": f"c{i}", "input": {"q": f"q{i}"}, "expected": {"answer": f"q{i}"}} for i in range(4)
    ]
    root = write_project(
        tmp_path / "p", app=HELD_TOY_APP, config=HELD_TOY_CONFIG, policy=POLICY, cases=cases
    )
    for _ in range(2):
        done = oloproof("run", "--no-cache", *REPORTS, cwd=root)
        assert done.code == 0, done.out + done.err
        summary = (root / "summary.md").read_text()
        assert summary.count("### Oloproof run") == 1 and "**Gate: PASS (exit 0)**" in summary
