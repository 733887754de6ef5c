"""A comparison margin written as a fraction is refused, through the real CLI.

The probe: a margin is in points (``margin: 5`` is 5 points), while a release policy's bounds
are fractions (``min: 0.8``). A candidate ahead by 12 cases in 200 (+6 points) was BLOCKed by
``superiority: {margin: 5}`` (INSUFFICIENT_EVIDENCE, exit 3) but PASSed ``superiority: {margin:
0.05}``, exit 0, printed as "margin 0.05 points": 5% written as a fraction asked for a gain of a
twentieth of a point. A margin between 0 and 1 point cannot be told from that mistake, so it is
refused (file, line, key; exit 2, nothing recorded), saying what to write for the points meant.
A comparison recorded with such a margin is still read as it was made.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.support import Result, oloproof, patterns_project

from oloproof.config import recorded_compare_policy

POLICY = "version: 1\nrules:\n  - {id: floor, metric: answer_correct, min: 0.05}\n"


@pytest.fixture(scope="module")
def compared(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, str]:
    """A project whose candidate passes 12 cases of 200 its baseline failed, and the two runs."""
    patterns = [("f", "p")] * 12 + [("p", "p")] * 188
    root = patterns_project(tmp_path_factory.mktemp("fraction") / "p", patterns, policy=POLICY)
    ids = []
    for args in (("--config", "baseline.yaml"), ()):
        done = oloproof("run", *args, cwd=root)
        assert done.code == 0, done.out + done.err
        ids.append(done.lines[0].split()[1])
    base, cand = ids
    return root, cand, base


def _compare(compared: tuple[Path, str, str], test: str, margin: str) -> tuple[Path, Result]:
    root, cand, base = compared
    policy = root / "compare.yaml"
    policy.write_text(
        f"version: 1\nrules:\n  - id: better\n    metric: answer_correct\n"
        f"    {test}: {{margin: {margin}}}\n"
    )
    return policy, oloproof("compare", cand, base, "--policy", str(policy), cwd=root)


def test_five_points_blocks_the_gain(compared: tuple[Path, str, str]) -> None:
    _, done = _compare(compared, "superiority", "5")
    assert done.code == 3, done.out + done.err


@pytest.mark.parametrize(
    ("test", "margin", "points"),
    [
        ("superiority", "0.05", "5"),
        ("non_inferiority", "0.025", "2.5"),
        ("equivalence", "0.5", "50"),
    ],
)
def test_a_margin_under_one_point_is_refused(
    compared: tuple[Path, str, str], test: str, margin: str, points: str
) -> None:
    recorded = oloproof("verify", cwd=compared[0]).out
    policy, done = _compare(compared, test, margin)
    assert (done.code, done.out) == (2, ""), done.out + done.err
    assert done.err == (
        f"error: {policy}, line 5: rules.0.{test}.margin: a margin is in points, not a fraction: "
        f"{margin} would be {margin} of one point, not {points}%; write {points} for {points} "
        "points (a margin between 0 and 1 point is refused, as it reads like a fraction)\n"
    )
    assert oloproof("verify", cwd=compared[0]).out == recorded  # nothing was written


@pytest.mark.parametrize("margin", ["0", "1"])
def test_zero_and_one_point_are_kept(compared: tuple[Path, str, str], margin: str) -> None:
    _, done = _compare(compared, "superiority", margin)
    assert done.code == 0, done.out + done.err
    assert f"superiority, margin {margin}.0 points  PASS" in done.out


def test_a_recorded_sub_point_margin_is_read_as_made() -> None:
    rules = [{"id": "nw", "metric": "m", "non_inferiority": {"margin": 0.5}}]
    policy = recorded_compare_policy({"version": 1, "rules": rules})
    assert policy.rules[0].test == ("non_inferiority", 0.005)
