"""A calibration made with one model's replies does not vouch for a judge now served by another.

The judge's identity holds the model it asks for, but a server may answer under that name with
another model (an updated local tag, a proxy routing elsewhere); each reply says which it ran
(``model``, kept as ``reply_model`` in every judgment). The probe: a calibration did not keep
what its replies named, so one made while the server ran ``word-overlap-judge`` let the rule
decide (PASS, exit 0) on verdicts the server now gave as ``word-overlap-judge-2``. A calibration
now records the models its replies named (``reply_models``, printed by ``calibrate``), and a
run whose judge replies name one it did not see is ``MANUAL_REVIEW`` (``judge_not_calibrated``),
the report naming both; ``verify`` re-derives that decision.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from tests.support import oloproof, serving_judge_gate

from oloproof.testing import RecordedRequest, Reply, prompt_tokens, raw

ENV = {"JUDGE_GATE_KEY": "sk-judge-gate-0123456789"}
COMPARE = (
    "version: 1\nrules:\n"
    "  - {id: grounded-not-worse, metric: groundedness, non_inferiority: {margin: 50}}\n"
)


def named(judge: Callable[[RecordedRequest], Reply], model: str) -> Callable[..., Reply]:
    """``judge``'s replies, each saying the server ran ``model``."""

    def reply(request: RecordedRequest) -> Reply:
        said = judge(request)
        body = {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": said.text},
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": prompt_tokens(request), "completion_tokens": 20},
        }
        return raw(json.dumps(body), content_type="application/json")

    return reply


def test_a_calibration_of_another_served_model_does_not_count(tmp_path: Path) -> None:
    args = ("calibrate", "--evaluator", "groundedness", "--labels", "labels.jsonl")
    with serving_judge_gate(tmp_path) as (root, server):
        judge = server.default
        server.default = named(judge, "word-overlap-judge")
        calibrated = oloproof(*args, cwd=root, env=ENV)
        server.default = named(judge, "word-overlap-judge-2")
        run = oloproof("run", cwd=root, env=ENV)
        again = oloproof("run", "--json", cwd=root, env=ENV)  # its judgments from the cache
        (root / "compare.yaml").write_text(COMPARE)
        first = oloproof("runs", cwd=root).lines[-1].split()[0]
        ids = json.loads(again.out)["run_id"], first
        compared = oloproof("compare", *ids, "--policy", "compare.yaml", cwd=root, env=ENV)
    assert calibrated.code == 0, calibrated.err
    # Was: exit 0, the rule decided on the calibration of the model served before.
    assert run.code == 3, run.out + run.err
    assert '  replies from: "word-overlap-judge"' in calibrated.lines, calibrated.out
    address = calibrated.lines[-1].removeprefix("Calibration event: ")
    body = json.loads(oloproof("inspect", address, "--json", cwd=root).out)
    assert body["reply_models"] == ["word-overlap-judge"]
    said = [line for line in run.lines if line.startswith("Judge of grounded:")]
    assert said == [
        f"Judge of grounded: calibration {address[:19]} was made with replies from "
        '"word-overlap-judge" (as the server named it), and this run\'s came from '
        '"word-overlap-judge-2", so it does not count for this judge; record a new one with: '
        "oloproof calibrate --evaluator groundedness --labels FILE"
    ], run.out
    # A comparison of two runs judged so relies on it no more (was: exit 0, non-inferior).
    assert compared.code == 3, compared.out + compared.err
    assert any(
        "grounded-not-worse" in line and "MANUAL_REVIEW" in line and "judge_not_calibrated" in line
        for line in compared.lines
    ), compared.out
    verified = oloproof("verify", cwd=root)
    assert verified.code == 0, verified.out + verified.err
    assert "re-derived 2 decision(s), 0 diagnosis(es) and 1 comparison(s)" in verified.out


def test_the_same_served_model_still_counts(tmp_path: Path) -> None:
    args = ("calibrate", "--evaluator", "groundedness", "--labels", "labels.jsonl")
    with serving_judge_gate(tmp_path) as (root, _):
        calibrated = oloproof(*args, cwd=root, env=ENV)
        run = oloproof("run", cwd=root, env=ENV)
    assert calibrated.code == 0, calibrated.err
    assert '  replies from: "word-overlap-judge"' in calibrated.lines, calibrated.out
    assert run.code == 0, run.out + run.err
    assert any(line.startswith("Judge of grounded: calibration sha256:") for line in run.lines)
