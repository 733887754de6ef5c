"""`oloproof run --dry-run` with a report path is refused, through the real CLI.

The probe: `oloproof run --dry-run --junit j.xml --summary s.md` exited 0 and left j.xml and
s.md as an earlier run had written them, with that run's PASS, for CI to read as this
command's. A dry run writes no report, so the combination is now refused, exit 2, in one
sentence, as `--dry-run --resume` is; nothing runs and no run is recorded, and like every
command that ends without deciding, its report paths get reports that say so (no gate, exit 2,
why) in place of the earlier run's.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from tests.support import answered_project, oloproof

APP = """
def answer(case):
    return {"answer": case["q"]}
"""

REFUSAL = (
    "error: --dry-run plans a run and writes no report; it cannot be combined with --junit, "
    "--summary or --junit-cases\n"
)


def test_a_dry_run_with_reports_is_refused_and_leaves_no_green_report(tmp_path: Path) -> None:
    project = answered_project(tmp_path / "p", APP, cases=6)
    paths = ("--junit", "j.xml", "--summary", "s.md")
    assert oloproof("run", *paths, cwd=project).code == 0
    runs = oloproof("runs", cwd=project).out

    refused = oloproof("run", "--dry-run", *paths, cwd=project)
    assert (refused.code, refused.out, refused.err) == (2, "", REFUSAL)  # was exit 0
    gate = ET.parse(project / "j.xml").getroot().find(".//testcase[@name='gate']/error")
    assert gate is not None and gate.get("type") == "NO_GATE"
    summary = (project / "s.md").read_text()
    assert summary.startswith("### Oloproof run\n\n**No gate** (exit 2): --dry-run plans a run")
    assert oloproof("runs", cwd=project).out == runs  # nothing ran

    for alone in (("--summary", "s.md"), ("--junit-cases",)):
        refused = oloproof("run", "--dry-run", *alone, cwd=project)
        assert (refused.code, refused.err) == (2, REFUSAL)
    assert oloproof("run", "--dry-run", cwd=project).code == 0
