"""A metric no case was observed on says it has no interval, through the real CLI.

The probe: two cases, both raising. The metrics table showed no interval (``—``) for each
metric, and the line under it read ``the interval counts them as failing for the lower bound
and passing for the upper; the 0 observed alone give —``: a count in an interval that does not
exist, beside one "given" by no case. Now the line says there is no interval to count them in.
"""

from __future__ import annotations

from pathlib import Path

from tests.support import answered_project, oloproof

APP = "def answer(case):\n    raise RuntimeError('the index is down')\n"


def test_no_observed_case_says_there_is_no_interval(tmp_path: Path) -> None:
    root = answered_project(tmp_path / "p", APP, cases=2)
    done = oloproof("run", cwd=root)
    shown = oloproof("inspect", "latest", cwd=root)
    assert done.code == 3, done.out + done.err
    for out in (done.out, shown.out):
        assert "│ answered │ —        │ —        │ 0 / 0 observed · 2 missing" in out, out
        assert "answered: 2 missing: 2 execution_errored\n" in out, out
        assert "  with no case observed, there is no interval to count them in\n" in out, out
        assert "the interval counts them" not in out, out
