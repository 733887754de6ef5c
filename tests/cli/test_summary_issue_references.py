"""An issue reference written "GH-12" in a system's text makes no link in the Markdown summary.

GitHub links "GH-12" to issue 12 as it links "#12" (and records the mention on that issue when
the summary is posted as a comment). The summary put a word joiner after the "#" of "#12" but
wrote "GH-12" as it was; it now puts one after "GH" too, so the text reads the same and links
nowhere.
"""

from __future__ import annotations

from pathlib import Path

from tests.support import answered_project, oloproof

APP = """
def answer(case):
    if case["q"] == "q1":
        raise RuntimeError("a regression of GH-12 (and gh-7), see #3")
    return {"answer": case["q"]}
"""


def test_gh_issue_references_are_not_linked(tmp_path: Path) -> None:
    project = answered_project(tmp_path / "p", APP, cases=6)
    done = oloproof("run", "--summary", "s.md", cwd=project)
    assert done.code == 3, done.err  # an errored case is missing: 5 of 6 cannot clear 0.5
    (line,) = [line for line in (project / "s.md").read_text().splitlines() if "errored" in line]
    joiner = "\u2060"
    assert f"GH{joiner}-12" in line and f"gh{joiner}-7" in line and f"#{joiner}3" in line, line
    assert "a regression of GH-12 (and gh-7), see #3" in line.replace(joiner, "")
