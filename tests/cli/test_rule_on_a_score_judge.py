"""A release rule on the metric of a rubric judge with ``scale: score`` is refused before
anything is written: a judge's rule decides only once the judge is calibrated, and
``oloproof calibrate`` measures pass/fail judges alone. Real CLI.

(Before: ``{id: t, metric: tone, min: 0.5}`` over such a judge was accepted; every run
decided it MANUAL_REVIEW (judge_not_calibrated) whatever the answers, blocking with exit 3,
or, under ``block_on: [FAIL]``, passing without the rule ever being checked; and calibrating
the judge was refused: 'judge 'tone' gives scores, and calibration measures pass/fail judges'.)
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.support import oloproof, toy_project

CONFIG = """\
system: {name: toy, version: "1", callable: app:run}
evaluators:
  - type: rubric_judge
    criterion: tone
    rubric: Is the answer polite?
    scale: %s
    provider: openai
    model: m
    base_url: http://127.0.0.1:9/v1
    api_key_env: null
policy: policy.yaml
"""
POLICY = "version: 1\nblock_on: [FAIL]\nrules:\n  - {id: t, metric: tone, min: 0.5}\n"


@pytest.mark.parametrize("command", [("run",), ("run", "--dry-run")])
def test_a_rule_on_a_score_judge_is_refused(tmp_path: Path, command: tuple[str, ...]) -> None:
    root = toy_project(tmp_path / "p", config=CONFIG % "score", policy=POLICY)
    done = oloproof(*command, cwd=root)
    assert (done.code, done.out) == (2, ""), done.out + done.err
    assert done.err == (
        f"error: {root}/policy.yaml, line 4: rule 't' reads tone, a rubric judge's score "
        "(scale: score), and a rule on a judge's metric decides only once the judge is "
        "calibrated, which only a pass/fail judge can be: it would be MANUAL_REVIEW on every "
        "run; put the rule on a rubric judge with scale: pass_fail, calibrated with oloproof "
        "calibrate\n"
    )
    assert not (root / ".oloproof").exists()


def test_a_rule_on_a_pass_fail_judge_waits_for_its_calibration(tmp_path: Path) -> None:
    root = toy_project(tmp_path / "p", config=CONFIG % "pass_fail", policy=POLICY)
    done = oloproof("run", "--dry-run", cwd=root)
    assert done.code == 0, done.out + done.err
    assert "t (tone): no calibration of this exact judge" in done.out
