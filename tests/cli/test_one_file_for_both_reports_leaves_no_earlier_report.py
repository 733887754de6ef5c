"""A command refused for naming one file for both reports does not leave an earlier report there.

The probe: `oloproof run --junit report.xml` passed (exit 0); then `oloproof run --junit
report.xml --summary report.xml` was refused, exit 2 (`--junit and --summary both name
report.xml`), and `report.xml` was still the passing run's JUnit report, a passing `gate` test
for a CI system to read as this command's. Now a file there that holds a report Oloproof wrote
gets the report of a command stopped by that refusal, of the kind it was; a path that holds
nothing is still left without a file (test_report_paths).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from tests.support import oloproof, toy_project

POLICY = "version: 1\nrules:\n  - {id: floor, metric: echo, min: 0.05}\n"
WHY = "--junit and --summary both name report.xml: give each its own file"


def test_an_earlier_junit_report_says_there_is_no_gate(tmp_path: Path) -> None:
    root = toy_project(tmp_path / "p", policy=POLICY, cases=3)
    assert oloproof("run", "--junit", "report.xml", cwd=root).code == 0
    refused = oloproof("run", "--junit", "report.xml", "--summary", "report.xml", cwd=root)
    assert (refused.code, refused.err) == (2, f"error: {WHY}\n")
    error = ET.parse(root / "report.xml").getroot().find(".//testcase[@name='gate']/error")
    assert error is not None, (root / "report.xml").read_text()  # was: a passing test
    assert (error.get("type"), error.get("message"), error.text) == (
        "NO_GATE",
        "no gate (exit 2)",
        WHY,
    )


def test_an_earlier_summary_says_there_is_no_gate(tmp_path: Path) -> None:
    root = toy_project(tmp_path / "p", policy=POLICY, cases=3)
    assert oloproof("run", "--summary", "report.xml", cwd=root).code == 0
    refused = oloproof("run", "--summary", "report.xml", "--junit", "./report.xml", cwd=root)
    assert refused.code == 2
    summary = (root / "report.xml").read_text()
    assert summary.startswith("### Oloproof run\n\n**No gate** (exit 2): "), summary
