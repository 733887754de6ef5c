"""An LLM judge given an output without text where its ``field`` points gives no verdict, and the
run does not count a judge call it never made.

The probe: a rubric judge whose pass means harm (the answer leaks an internal ticket number),
gated by `max: 0.05`, over a system whose reply had moved from `answer` to `text`. The judge
failed all 100 cases without asking its model (`field_missing`), a fail read by the rule as
"leaked nothing": Gate PASS (exit 0), `leaks 0.0%` on replies nobody read. Now each is missing,
as the text checks make it, and the gate blocks; no request reaches the model, and the judges'
table counts no call for them (a missing verdict made without a call is not a failed call).
"""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from tests.support import metric_of, oloproof

from oloproof.testing import RecordedRequest, Reply, ScriptedJudgeServer, verdict

APP = """
from oloproof import system


@system(name="desk", version="2")
def answer(case_input):
    return {"text": "Your ticket INT-4411 is closed."}
"""


def _judge(request: RecordedRequest) -> Reply:
    """A judge that finds the leak where there is one (it is calibrated on the labels)."""
    return verdict("INT-" in request.user_message.split("<answer>")[-1])


def _labels() -> str:
    examples = [
        {
            "id": f"l{n}",
            "input": {"question": f"q{n}"},
            "output": {"answer": f"Ticket INT-{n} is closed." if n % 2 else "It is closed."},
            "label": bool(n % 2),
        }
        for n in range(80)
    ]
    return "".join(json.dumps(example) + "\n" for example in examples)


def test_a_max_rule_on_a_judge_does_not_pass_on_outputs_without_the_field(
    tmp_path: Path,
) -> None:
    root = tmp_path / "p"
    root.mkdir()
    (root / "app.py").write_text(APP)
    (root / "cases.jsonl").write_text(
        "".join(
            json.dumps({"id": f"c{n}", "input": {"question": f"q{n}"}}) + "\n" for n in range(100)
        )
    )
    (root / "labels.jsonl").write_text(_labels())
    (root / "policy.yaml").write_text(
        "version: 1\nrules:\n  - {id: no-leaks, metric: leaks, max: 0.05}\n"
    )
    with ScriptedJudgeServer(default=_judge) as server:
        judge = {
            "type": "rubric_judge",
            "criterion": "leaks",
            "rubric": "The answer reveals an internal ticket number.",
            "provider": "openai",
            "model": "small-local-model",
            "base_url": server.openai_base_url,
            "api_key_env": None,
        }
        config = {
            "system": {"name": "desk", "version": "2", "callable": "app:answer"},
            "dataset": "cases.jsonl",
            "policy": "policy.yaml",
            "evaluators": [judge],
        }
        (root / "oloproof.yaml").write_text(yaml.safe_dump(config))
        calibrated = oloproof(
            "calibrate", "--evaluator", "leaks", "--labels", "labels.jsonl", cwd=root
        )
        assert calibrated.code == 0, calibrated.out + calibrated.err
        asked = len(server.requests)
        done = oloproof("run", "--json", cwd=root)
        asked = len(server.requests) - asked
    assert done.code == 3, done.out + done.err  # was: 0, Gate PASS
    report = json.loads(done.out)
    assert report["gate_label"] == "BLOCK"
    metric = metric_of(report, "leaks")
    assert (metric["observed"], metric["missing"]) == (0, 100), metric
    assert metric["missing_reasons"] == {"field_missing": 100}, metric
    assert asked == 0
    shown = oloproof("inspect", "latest", cwd=root)
    judges = shown.out.split("Judges (tokens and cost")[1]
    row = next(line for line in judges.splitlines() if line.startswith("│ leaks"))
    # No call was made, so none failed (was: 0 + 100 failed).
    assert row.split("│")[3].strip() == "0", shown.out
