"""A judge minimum of 1, which no calibration can meet, is refused, through the real CLI.

The probe: ``judge: {min_sensitivity: 1}`` was accepted; with the judge_gate example's judge
calibrated on its labels (19 of 20 human passes passed, 20 of 20 fails failed) the rule was
MANUAL_REVIEW (``judge_below_requirement``, exit 3) beside "sensitivity ≥ 75.1% (19/20), needs
100.0%", as it would be after any calibration: the lower bound of a rate measured on finitely
many examples never reaches 100% (20 of 20 give 83.1%). ``min: 1`` on a metric was already
refused for that reason; the judge's minimums now are too, in a release policy and a comparison
policy alike (exit 2, file, line and key, nothing recorded).
"""

from __future__ import annotations

from pathlib import Path

from tests.support import oloproof, serving_judge_gate, toy_project

SAID = (
    "1 can never be met: the lower bound of a rate measured on finitely many examples stays "
    "below 100% (20 agreeing of 20 give 83.1% at 0.95); give the rate the judge must show (0.8 "
    "asks for at least 80%)\n"
)


def test_a_release_policy(tmp_path: Path) -> None:
    with serving_judge_gate(tmp_path) as (root, _):
        policy = root / "policy.yaml"
        policy.write_text(
            "version: 1\nrules:\n  - id: grounded\n    metric: groundedness\n    min: 0.6\n"
            "    judge: {min_sensitivity: 0.7, min_specificity: 1}\n"
        )
        done = oloproof("run", cwd=root, env={"JUDGE_GATE_KEY": "sk-any"})
        assert (done.code, done.out) == (2, ""), done.out + done.err
        assert done.err == f"error: {policy}, line 6: rules.0.judge.min_specificity: {SAID}"
        assert not (root / ".oloproof").exists()


def test_a_comparison_policy(tmp_path: Path) -> None:
    root = toy_project(tmp_path / "p")
    ids = []
    for args in (("run",), ("run", "--no-cache")):
        done = oloproof(*args, cwd=root)
        assert done.code == 3, done.out + done.err
        ids.append(done.lines[0].split()[1])
    policy = root / "compare.yaml"
    policy.write_text(
        "version: 1\nrules:\n  - id: nw\n    metric: echo\n    non_inferiority: {margin: 5}\n"
        "    judge:\n      min_sensitivity: 1\n"
    )
    done = oloproof("compare", ids[1], ids[0], "--policy", str(policy), cwd=root)
    assert (done.code, done.out) == (2, ""), done.out + done.err
    assert done.err == f"error: {policy}, line 7: rules.0.judge.min_sensitivity: {SAID}"
