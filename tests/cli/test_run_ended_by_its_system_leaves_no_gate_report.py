"""A run its system's code ends from C (`_exit(0)`) leaves reports saying it did not end.

The probe: a system calling C's `_exit(0)` on its second case, run as `oloproof run --junit
report.xml --summary summary.md` in a folder with neither file: the process ended with exit 0
and printed nothing (no Python code runs after a C-level exit, so Oloproof cannot change that
code), and left no report at all. A CI step was green, and a test reporter that lets a missing
file pass showed nothing failing. The reports saying the command has not ended were written as
it starts only over an earlier report; they are now written at every report path that is, or
will be, a file of its own, so such a run leaves a `NO_GATE` error and **No gate** (not ended).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from tests.support import HELD_TOY_CONFIG, oloproof, write_project

APP = """
import ctypes

from oloproof import system


@system(name="toy", version="1")
def run(case):
    if case["q"] == "end":
        ctypes.CDLL(None)._exit(0)
    return {"answer": case["q"]}
"""
POLICY = "version: 1\nrules:\n  - {id: floor, metric: echo, min: 0.05}\n"


def test_a_run_ended_from_c_leaves_reports_saying_it_did_not_end(tmp_path: Path) -> None:
    cases = [
        {"id": "a", "input": {"q": "a"}, "expected": {"answer": "a"}},
        {"id": "b", "input": {"q": "end"}, "expected": {"answer": "end"}},
    ]
    root = write_project(
        tmp_path / "p", app=APP, config=HELD_TOY_CONFIG, policy=POLICY, cases=cases
    )
    done = oloproof("run", "--junit", "report.xml", "--summary", "summary.md", cwd=root)
    assert (done.code, done.out) == (0, ""), done.err  # what a C-level exit gives
    # Was: neither file.
    error = ET.parse(root / "report.xml").getroot().find(".//testcase[@name='gate']/error")
    assert error is not None
    assert (error.get("type"), error.get("message")) == ("NO_GATE", "no gate (not ended)")
    assert "**No gate** (not ended)" in (root / "summary.md").read_text()
