"""A report path that is a symbolic link is written through, not replaced by a file.

The probe: `report.xml` a link to `artifacts/report.xml` (the file a CI job uploads), written
by a run that passed; a second run, whose gate blocked (exit 3), given `--junit report.xml
--summary summary.md` (a link too) put new files in place of the links and left the files they
pointed at as the first run wrote them: `artifacts/report.xml` still a passing `gate` test and
`artifacts/summary.md` still `Gate: PASS (exit 0)`, read as the blocked run's.

A link is followed, as a shell's `>` follows it: the file it points at is the report (checked
as any report path is, and replaced whole), and the link stays. A link to a file not there yet
is followed too, and the file made where it points.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from tests.support import oloproof, toy_project

PASSING = "version: 1\nrules:\n  - {id: floor, metric: echo, min: 0.05}\n"
BLOCKING = "version: 1\nrules:\n  - {id: floor, metric: echo, min: 0.5}\n"  # 3 cases: too few
REPORTS = ("--junit", "report.xml", "--summary", "summary.md")


def _gate(path: Path) -> str:
    gate = ET.parse(path).getroot().find(".//testcase[@name='gate']")
    assert gate is not None
    failure = gate.find("failure")
    return "pass" if failure is None else str(failure.get("message"))


def test_a_linked_report_path_writes_the_file_it_points_at(tmp_path: Path) -> None:
    root = toy_project(tmp_path / "p", policy=PASSING, cases=3)
    (root / "artifacts").mkdir()
    for name in ("report.xml", "summary.md"):
        (root / name).symlink_to(Path("artifacts") / name)
    passed = oloproof("run", *REPORTS, cwd=root)
    assert passed.code == 0, passed.out + passed.err
    assert _gate(root / "artifacts" / "report.xml") == "pass"

    (root / "policy.yaml").write_text(BLOCKING)
    blocked = oloproof("run", *REPORTS, cwd=root)
    assert blocked.code == 3, blocked.out + blocked.err
    for name in ("report.xml", "summary.md"):
        assert (root / name).is_symlink(), name  # was: a file in the link's place
    assert _gate(root / "artifacts" / "report.xml") == "BLOCK (exit 3)"
    assert "**Gate: BLOCK (exit 3)**" in (root / "artifacts" / "summary.md").read_text()
    assert sorted(p.name for p in (root / "artifacts").iterdir()) == ["report.xml", "summary.md"]


def test_a_link_to_no_file_yet_makes_the_file_it_points_at(tmp_path: Path) -> None:
    root = toy_project(tmp_path / "p", policy=BLOCKING, cases=3)
    (root / "report.xml").symlink_to(Path("artifacts") / "eval.xml")
    done = oloproof("run", "--junit", "report.xml", cwd=root)
    assert done.code == 3, done.out + done.err
    assert (root / "report.xml").is_symlink()
    assert _gate(root / "artifacts" / "eval.xml") == "BLOCK (exit 3)"


def test_a_link_to_a_file_of_the_user_s_is_refused(tmp_path: Path) -> None:
    root = toy_project(tmp_path / "p", policy=BLOCKING, cases=3)
    (root / "report.xml").symlink_to("cases.jsonl")
    cases = (root / "cases.jsonl").read_text()
    done = oloproof("run", "--junit", "report.xml", cwd=root)
    assert done.code == 2
    assert done.err.startswith("error: will not write the JUnit report over report.xml"), done.err
    assert (root / "cases.jsonl").read_text() == cases
    assert (root / "report.xml").is_symlink()
