"""A report is staged in a file of its own, never in one that was already there.

The probe: every report, export table and archive was written first to `.NAME.partial` beside
its place, opened as any file is, then renamed into place. A link left at that name (by another
user of a shared workspace, or a tool's leftovers) was followed: `oloproof run --junit
report.xml` wrote the JUnit report into the file the link pointed at (here `notes.txt`, the
user's own, lost) and then renamed the link itself into place, so `report.xml` became a link to
`notes.txt`. Two commands writing one report path at once shared that name too, and one could
rename the other's half-written file into place.

Each staged file is now created new under a name no other holds (refusing one that exists,
a link above all), so the file at the fixed name is left alone.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from tests.support import oloproof, toy_project

BLOCKING = "version: 1\nrules:\n  - {id: floor, metric: echo, min: 0.5}\n"  # 3 cases: too few


def test_a_link_at_the_staging_name_is_left_alone(tmp_path: Path) -> None:
    root = toy_project(tmp_path / "p", policy=BLOCKING, cases=3)
    notes = root / "notes.txt"
    notes.write_text("the user's own notes\n")
    (root / ".report.xml.partial").symlink_to("notes.txt")
    (root / ".summary.md.partial").symlink_to("notes.txt")

    done = oloproof("run", "--junit", "report.xml", "--summary", "summary.md", cwd=root)

    assert done.code == 3, done.out + done.err
    assert notes.read_text() == "the user's own notes\n"  # was: the JUnit report
    report = root / "report.xml"
    assert report.is_file() and not report.is_symlink()  # was: a link to notes.txt
    gate = ET.parse(report).getroot().find(".//testcase[@name='gate']")
    assert gate is not None and gate.find("failure") is not None
    summary = root / "summary.md"
    assert not summary.is_symlink() and "**Gate: BLOCK (exit 3)**" in summary.read_text()
    # The staged files took their places: none is left beside them.
    left = sorted(p.name for p in root.iterdir() if p.name.endswith(".partial"))
    assert left == [".report.xml.partial", ".summary.md.partial"]


def test_an_export_beside_a_link_at_the_staging_name(tmp_path: Path) -> None:
    root = toy_project(tmp_path / "p", policy=BLOCKING, cases=3)
    assert oloproof("run", cwd=root).code == 3
    out = root / "out"
    out.mkdir()
    notes = root / "notes.txt"
    notes.write_text("kept\n")
    (out / ".cases.jsonl.partial").symlink_to("../notes.txt")

    done = oloproof("export", "latest", "--format", "jsonl", "--output", "out", cwd=root)

    assert done.code == 0, done.out + done.err
    assert notes.read_text() == "kept\n"
    cases = out / "cases.jsonl"
    assert not cases.is_symlink() and len(cases.read_text().splitlines()) == 3
