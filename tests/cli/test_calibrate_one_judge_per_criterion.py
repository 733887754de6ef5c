"""`calibrate` refuses a project two of whose evaluators feed one criterion, as `run` does.

The probe: the judge_gate example with a second `groundedness_judge` (another model) under the
same default criterion. `run` refused it (exit 2, the second's line); `calibrate --evaluator
groundedness` measured the first judge alone, said nothing, and recorded the calibration. The
same refusal now stops `calibrate` before any judge is called or anything is written.
"""

from __future__ import annotations

from pathlib import Path

from tests.support import copy_example, oloproof

SECOND = """  - type: groundedness_judge
    provider: openai
    model: another-judge
    base_url: http://127.0.0.1:8767/v1
    api_key_env: JUDGE_GATE_KEY
policy: policy.yaml
"""


def test_two_judges_of_one_criterion_are_refused_by_calibrate_too(tmp_path: Path) -> None:
    root = copy_example("judge_gate", tmp_path)
    config = root / "oloproof.yaml"
    config.write_text(config.read_text().replace("policy: policy.yaml\n", SECOND))
    env = {"JUDGE_GATE_KEY": "test-key"}
    ran = oloproof("run", cwd=root, env=env)
    calibrated = oloproof(
        "calibrate", "--evaluator", "groundedness", "--labels", "labels.jsonl", cwd=root, env=env
    )
    assert ran.code == 2 and "is also evaluator 0's" in ran.err, ran.err
    assert (calibrated.code, calibrated.err) == (2, ran.err)  # was 0, a calibration recorded
    assert not (root / ".oloproof").exists()
