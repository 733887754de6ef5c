"""A count that allows as many failures as the run has cases is refused, through the real CLI.

The probe: `kind: observed_count, max_failures: 5` on 5 cases that all fail gave
`Gate: PASS (exit 0)`: however many of the 5 fail, 5 is within the limit, so the rule could not
fail, as `min: 0` cannot (which the policy file already refused). Such a rule is now refused
before anything is written (exit 2, the policy's file and line), for the whole cases file and
for the part `--limit` or `--sample` chose; a limit below the cases still runs, and fails.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.support import oloproof, patterns_project

import oloproof as api
from oloproof.errors import ConfigError

CASES = 5
ALL_FAIL = [("f", "f")] * CASES


def _count(limit: int) -> str:
    return (
        "version: 1\nrules:\n"
        f"  - {{id: few, metric: answer_correct, kind: observed_count, max_failures: {limit}}}\n"
    )


def _refusal(root: Path, limit: int, cases: int, chosen: str = "") -> str:
    return (
        f"error: {root}/policy.yaml, line 3: rule 'few' allows {limit} failures of "
        f"answer_correct (max_failures: {limit}), and the run has {cases} cases{chosen}: however "
        "many fail, the rule passes; give max_failures below the number of cases "
        "(max_failures: 0 allows none)\n"
    )


@pytest.mark.parametrize("limit", [CASES, CASES + 3])
def test_a_count_the_cases_cannot_exceed_is_refused(tmp_path: Path, limit: int) -> None:
    root = patterns_project(tmp_path / "p", ALL_FAIL, policy=_count(limit))
    done = oloproof("run", cwd=root)
    assert (done.code, done.err) == (2, _refusal(root, limit, CASES)), done.out  # was 0: PASS
    assert not (root / ".oloproof").exists()
    with pytest.raises(ConfigError, match="however many fail, the rule passes"):
        api.evaluate(root / "oloproof.yaml")


@pytest.mark.parametrize("chose", [("--limit", "2"), ("--sample", "2", "--seed", "1")])
def test_a_count_the_chosen_cases_cannot_exceed_is_refused(
    tmp_path: Path, chose: tuple[str, ...]
) -> None:
    root = patterns_project(tmp_path / "p", ALL_FAIL, policy=_count(2))
    done = oloproof("run", *chose, cwd=root)
    chosen = f" of the {CASES} the cases file holds"
    assert (done.code, done.err) == (2, _refusal(root, 2, 2, chosen)), done.out
    assert not (root / ".oloproof").exists()


def test_a_count_below_the_cases_runs_and_fails(tmp_path: Path) -> None:
    root = patterns_project(tmp_path / "p", ALL_FAIL, policy=_count(CASES - 1))
    done = oloproof("run", cwd=root)
    assert done.code == 1, done.out + done.err
    assert "│ few  │ answer_correct │ FAIL     │" in done.out
