"""A comparison rule decides only on a difference that measures the system, never the judge.

- A metric judged by a different evaluator in the two runs (another type, other settings, a
  different judge model) mixes the change to the system with the change to the measurement: a
  rule on it is INSUFFICIENT_EVIDENCE (``evaluator_changed``), whatever the interval says.
- A rule on an LLM judge's metric needs the judge's calibration first, as a run's rule does:
  MANUAL_REVIEW (``judge_not_calibrated``) before ``oloproof calibrate``, the interval after.
  The comparison links the calibration it relied on, and ``verify`` re-derives both
  comparisons, the one made before the calibration included.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.support import calibrate_judge_gate, oloproof, serving_judge_gate, write_project

APP = """
import os
from oloproof import system

@system(name="echo", version="1")
def run(case):
    n = case["n"]
    wrong = os.environ.get("MODE") == "bad" and n % 2 == 0
    return {"answer": "wrong" if wrong else f"ans{n}"}
"""
STRICT = """\
system: {name: echo, version: "1", callable: app:run}
evaluators:
  - {type: contains, criterion: answer_correct, field: answer, expected_field: answer}
"""
LAX = """\
system: {name: echo, version: "1", callable: app:run}
evaluators:
  - {type: regex, criterion: answer_correct, field: answer, pattern: "."}
"""
COMPARE = """\
version: 1
rules:
  - {id: not-worse, metric: answer_correct, non_inferiority: {margin: 5}}
"""


def run_id(done_out: str) -> str:
    return str(json.loads(done_out)["run_id"])


def test_a_rule_on_a_metric_whose_evaluator_changed_is_not_decided(tmp_path: Path) -> None:
    cases = [
        {"id": f"c{i}", "input": {"n": i}, "expected": {"answer": f"ans{i}"}} for i in range(300)
    ]
    root = write_project(tmp_path / "p", app=APP, config=STRICT, policy=COMPARE, cases=cases)
    (root / "lax.yaml").write_text(LAX)
    (root / "compare.yaml").write_text(COMPARE)
    baseline = oloproof("run", "--json", cwd=root)
    assert baseline.code == 0, baseline.err
    # Half the candidate's answers are wrong, and its evaluator passes anything.
    candidate = oloproof("run", "--config", "lax.yaml", "--json", cwd=root, env={"MODE": "bad"})
    assert candidate.code == 0, candidate.err
    done = oloproof(
        "compare", run_id(candidate.out), run_id(baseline.out), "--policy", "compare.yaml", cwd=root
    )
    assert done.code == 3, done.out + done.err
    assert any(
        "not-worse" in line and "INSUFFICIENT_EVIDENCE" in line and "evaluator_changed" in line
        for line in done.lines
    ), done.out
    said = (
        "Rule not-worse compared a metric the two runs judged with different evaluators, so "
        "nothing decided it"
    )
    assert done.lines[-2:] == ["Gate: BLOCK (exit 3)", said]
    # Letting INSUFFICIENT_EVIDENCE through tolerates thin evidence, not a rule that read no
    # pair measured alike: it blocks all the same (it passed, exit 0, before).
    (root / "lenient.yaml").write_text(
        COMPARE.replace("version: 1\n", "version: 1\nblock_on: [FAIL]\n")
    )
    lenient = oloproof(
        "compare", run_id(candidate.out), run_id(baseline.out), "--policy", "lenient.yaml", cwd=root
    )
    assert lenient.code == 3, lenient.out + lenient.err
    assert lenient.lines[-2:] == [
        "Gate: BLOCK (exit 3)",
        f"{said}; that alone blocks the gate, whatever block_on lists",
    ]
    assert oloproof("verify", cwd=root).code == 0


def test_a_rule_on_a_judge_metric_waits_for_the_judge_calibration(tmp_path: Path) -> None:
    env = {"JUDGE_GATE_KEY": "test-key"}
    with serving_judge_gate(tmp_path) as (root, _server):
        (root / "compare.yaml").write_text(
            "version: 1\nrules:\n"
            "  - {id: grounded-not-worse, metric: groundedness, non_inferiority: {margin: 50}}\n"
        )
        first = oloproof("run", "--json", cwd=root, env=env)
        second = oloproof("run", "--json", cwd=root, env=env)
        ids = run_id(second.out), run_id(first.out)
        before = oloproof("compare", *ids, "--policy", "compare.yaml", cwd=root, env=env)
        assert before.code == 3, before.out + before.err
        assert any(
            "grounded-not-worse" in line
            and "MANUAL_REVIEW" in line
            and "judge_not_calibrated" in line
            for line in before.lines
        ), before.out
        # Said under the rule, as a run says it under its rules table (compare said nothing).
        assert (
            "    Judge of grounded-not-worse: no calibration of this exact judge; record one with: "
            "oloproof calibrate --evaluator groundedness --labels FILE"
        ) in before.lines, before.out
        calibrate_judge_gate(root, env)
        after = oloproof("compare", *ids, "--policy", "compare.yaml", cwd=root, env=env)
        assert after.code == 0, after.out + after.err
        assert any("grounded-not-worse" in line and " PASS " in line for line in after.lines), (
            after.out
        )
        assert any(
            line.startswith("    Judge of grounded-not-worse: calibration sha256:")
            and "sensitivity ≥ 75.1% (19/20)" in line
            for line in after.lines
        ), after.out
        assert oloproof("verify", cwd=root).code == 0
        judged = json.loads(
            oloproof("compare", *ids, "--policy", "compare.yaml", "--json", cwd=root).out
        )
    (decision,) = judged["decisions"]
    assert decision["detail"]["judge"]["calibration"].startswith("sha256:")
