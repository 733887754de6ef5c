"""The summary appended to `$GITHUB_STEP_SUMMARY` starts on a line of its own.

The probe: an earlier step of the job wrote `earlier step` with no line end; the summary was
appended right after it, so its heading read `earlier step### Oloproof run …`, one paragraph
of text where the gate's heading should stand. A line end now comes first where one is missing.
"""

from __future__ import annotations

from pathlib import Path

from tests.support import oloproof


def test_the_heading_stands_on_its_own_line(blackbox: Path) -> None:
    step = blackbox / "step-summary.md"
    step.write_text("earlier step")
    done = oloproof(
        "run", "--summary", str(step), cwd=blackbox, env={"GITHUB_STEP_SUMMARY": str(step)}
    )
    assert done.code == 1, done.out + done.err
    assert step.read_text().startswith("earlier step\n### Oloproof run `run_")
