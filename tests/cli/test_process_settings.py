"""Settings the system's code changes for the whole process do not change the numbers printed.

The system runs in Oloproof's process. The printed percentages and intervals are rounded in
decimal arithmetic, under Python's decimal context, which belongs to the process: a system that
set `decimal.getcontext().prec = 2` (money to the cent, at import or in a case) had the report
print 69.0% for 9 of 13 and the interval [39.0%, 91.0%], narrower than the true one
[38.5%, 91.0%], on the screen and in the Markdown summary (with `ROUND_DOWN`, [38.0%, 89.0%]).

Each expected figure is computed here from scipy's exact (Clopper-Pearson) interval.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from scipy.stats import binomtest
from tests.support import answered_project, oloproof

AT_IMPORT = """
import decimal

from oloproof import system

decimal.getcontext().prec = 2
decimal.getcontext().rounding = decimal.ROUND_DOWN


@system(name="s", version="1")
def answer(case):
    return {"answer": case["q"]}
"""

IN_A_CASE = """
import decimal

from oloproof import system


@system(name="s", version="1")
async def answer(case):
    decimal.getcontext().prec = 2
    return {"answer": case["q"]}
"""

PASSED, CASES = 9, 13


def _expected() -> tuple[str, str]:
    """The point and the interval as the report prints them (rounded outward), from scipy."""
    ci = binomtest(PASSED, CASES).proportion_ci(0.95, method="exact")
    lower = math.floor(ci.low * 1000 + 1e-9) / 10
    upper = math.ceil(ci.high * 1000 - 1e-9) / 10
    return f"{round(PASSED / CASES * 100, 1)}%", f"[{lower:.1f}%, {upper:.1f}%]"


@pytest.mark.parametrize("app", [AT_IMPORT, IN_A_CASE], ids=["at import", "in a case"])
def test_the_decimal_context_of_the_system_does_not_round_the_report(
    tmp_path: Path, app: str
) -> None:
    point, interval = _expected()
    assert (point, interval) == ("69.2%", "[38.5%, 91.0%]")  # what the guides' rounding gives
    root = answered_project(tmp_path / "p", app, ["other"] * (CASES - PASSED), CASES)
    done = oloproof("run", "--summary", "summary.md", cwd=root)
    assert done.code == 3, done.out + done.err  # the interval overlaps the threshold
    (row,) = [line for line in done.lines if "│ answered" in line and "observed" in line]
    assert f"│ {point}" in row and f"│ {interval} │" in row, row
    summary = (root / "summary.md").read_text()
    assert point in summary and interval in summary, summary
