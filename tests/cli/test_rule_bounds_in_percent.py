"""A rule's bound, or a judge's minimum rate, written as a percentage is refused saying so, through
the real CLI, as ``confidence_level: 95`` is.

The probe: ``min: 50``, ``max: 5`` and ``judge: {min_sensitivity: 80}`` were refused (exit 2) as
``Input should be less than or equal to 1``, with no word of what was meant, while the same slip
in ``confidence_level`` said it read as a percentage and what to write. Each now says ``50 reads
as a percentage: a bound is a fraction of 1, so write 0.5``. A value above 100 is no percentage
and keeps the plain refusal. Nothing is recorded for any of them.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.support import oloproof, toy_project

RULES = {
    "min 50": ("min: 50", "rules.0.min: 50 reads as a percentage: a bound is a fraction of 1, so "),
    "max 5": ("max: 5", "rules.0.max: 5 reads as a percentage: a bound is a fraction of 1, so "),
    "max 2.5": (
        "max: 2.5",
        "rules.0.max: 2.5 reads as a percentage: a bound is a fraction of 1, so ",
    ),
    "judge 80": (
        "min: 0.5, judge: {min_sensitivity: 80}",
        "rules.0.judge.min_sensitivity: 80 reads as a percentage: a rate is a fraction of 1, so ",
    ),
}
WRITTEN = {"min 50": "0.5", "max 5": "0.05", "max 2.5": "0.025", "judge 80": "0.8"}


@pytest.mark.parametrize("name", list(RULES))
def test_a_bound_in_percent_says_so(tmp_path: Path, name: str) -> None:
    given, said = RULES[name]
    toy_project(tmp_path, policy=f"version: 1\nrules:\n  - {{id: floor, metric: echo, {given}}}\n")
    done = oloproof("run", cwd=tmp_path)
    assert (done.code, done.out) == (2, "")
    assert done.err == f"error: {tmp_path}/policy.yaml, line 3: {said}write {WRITTEN[name]}\n"
    assert not (tmp_path / ".oloproof").exists()


def test_a_bound_above_100_is_no_percentage(tmp_path: Path) -> None:
    toy_project(tmp_path, policy="version: 1\nrules:\n  - {id: floor, metric: echo, min: 500}\n")
    done = oloproof("run", cwd=tmp_path)
    assert (done.code, done.out) == (2, "")
    assert done.err == (
        f"error: {tmp_path}/policy.yaml, line 3: rules.0.min: Input should be less than or equal "
        "to 1\n"
    )
