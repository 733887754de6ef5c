"""A command that refuses one of its two report paths still replaces the report at the other.

`oloproof run --junit j.xml --summary cases.jsonl` is refused (the summary would be written over
the cases file), exit 2, before anything runs. It left j.xml as the previous run had written
it, with that run's PASS, for a CI test reporter to read as this command's: the guide promises
that a command which ends without deciding writes both reports saying so, and that an earlier
run's are never left at those paths. The path that may be written now gets that report.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from tests.support import answered_project, oloproof

APP = """
def answer(case):
    return {"answer": case["q"]}
"""


def _gate_error(path: Path) -> ET.Element | None:
    return ET.parse(path).getroot().find(".//testcase[@name='gate']/error")


def test_the_other_report_says_there_is_no_gate(tmp_path: Path) -> None:
    project = answered_project(tmp_path / "p", APP, cases=6)
    paths = ("--junit", "j.xml", "--summary", "s.md")
    assert oloproof("run", *paths, cwd=project).code == 0
    assert _gate_error(project / "j.xml") is None  # the earlier run's green report
    cases = (project / "cases.jsonl").read_bytes()

    refused = oloproof("run", "--junit", "j.xml", "--summary", "cases.jsonl", cwd=project)
    assert refused.code == 2 and "will not write the Markdown summary over" in refused.err
    assert (project / "cases.jsonl").read_bytes() == cases
    error = _gate_error(project / "j.xml")
    assert error is not None and error.get("type") == "NO_GATE", (project / "j.xml").read_text()
    assert "will not write the Markdown summary over cases.jsonl" in (error.text or "")

    (project / "folder").mkdir()
    assert oloproof("run", *paths, cwd=project).code == 0
    refused = oloproof("run", "--junit", "folder", "--summary", "s.md", cwd=project)
    assert refused.code == 2 and "it is a folder" in refused.err, refused.err
    summary = (project / "s.md").read_text()
    assert summary.startswith("### Oloproof run\n\n**No gate** (exit 2): cannot write folder")
    assert "PASS" not in summary

    runs = [line.split()[0] for line in oloproof("runs", cwd=project).lines[:2]]
    assert oloproof("compare", *runs, *paths, cwd=project).code == 0
    refused = oloproof("compare", *runs, "--junit", "j.xml", "--summary", "folder", cwd=project)
    assert refused.code == 2, refused.err
    root = ET.parse(project / "j.xml").getroot()
    assert [s.get("name") for s in root.iter("testsuite")] == ["compare: rules"]
    assert _gate_error(project / "j.xml") is not None
