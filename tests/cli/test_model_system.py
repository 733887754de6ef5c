"""A ``model`` system runs the judge_gate example's cases end to end, through the real CLI.

The example's own assistant (``app.py``) is the baseline. The model system asks a scripted
OpenAI-compatible server on 127.0.0.1 that answers as that assistant does, given the whole
knowledge base as its context; the example's judge server judges both. The judge's calibration
carries over (same judge identity), the gate decides, the calls are recorded with their tokens
and cost, the cache serves a re-run without a call, and compare pairs the two runs.
"""

from __future__ import annotations

import importlib.util
import json
import re
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml
from tests.support import Result, oloproof, serving_judge_gate

from oloproof.testing import RecordedRequest, Reply, ScriptedJudgeServer, answer

ENV = {"JUDGE_GATE_KEY": "sk-judge-gate-key", "MODEL_KEY": "sk-model-SECRET-77"}
PROMPT = """Answer the question from the notes below, in one sentence.

{{ context }}

Question: {{ question }}"""


def load_app(root: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location("judge_gate_app", root / "app.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def assistant(app: ModuleType) -> Any:
    """A model that answers as the example's assistant does: first sentence, or a guess."""

    def reply(request: RecordedRequest) -> Reply:
        found = re.search(r"Question: (.*)\Z", request.user_message, flags=re.DOTALL)
        question = found.group(1).strip() if found else ""
        doc_id = app.best_passage(question)
        if doc_id is None:
            return answer(app.GUESS, output_tokens=11)
        first = re.split(r"(?<=[.!?])\s+", app.KNOWLEDGE_BASE[doc_id], maxsplit=1)[0]
        return answer(first, output_tokens=len(first.split()))

    return reply


@pytest.fixture
def project(tmp_path: Path) -> Iterator[tuple[Path, ScriptedJudgeServer, ScriptedJudgeServer]]:
    with serving_judge_gate(tmp_path) as (root, judge):
        app = load_app(root)
        kb = [{"doc_id": d, "text": t} for d, t in app.KNOWLEDGE_BASE.items()]
        (root / "kb.json").write_text(json.dumps(kb), encoding="utf-8")
        with ScriptedJudgeServer(default=assistant(app)) as model:
            yield root, judge, model


def use_model_system(root: Path, base_url: str) -> None:
    path = root / "oloproof.yaml"
    config = yaml.safe_load(path.read_text(encoding="utf-8"))
    config["system"] = {
        "name": "notes-helpdesk-model",
        "version": "1",
        "model": {
            "provider": "openai",
            "model": "helpdesk-model",
            "base_url": base_url,
            "api_key_env": "MODEL_KEY",
            "prompt": PROMPT,
            "context_file": "kb.json",
            "temperature": 0.0,
            "max_tokens": 200,
            "price_per_input_token": 0.000001,
            "price_per_output_token": 0.000002,
        },
    }
    path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")


def run(root: Path, *args: str) -> Result:
    return oloproof(*args, cwd=root, env=ENV)


METRIC = "│ groundedness │ 91.7%    │ [61.5%, 99.8%] │ 11 / 12 observed · 0 missing · 0 excluded │"


def test_a_model_system_runs_the_judge_gate_cases_end_to_end(
    project: tuple[Path, ScriptedJudgeServer, ScriptedJudgeServer],
) -> None:
    root, judge, model = project
    baseline = run(root, "run", "--json")
    assert baseline.code == 3, baseline.err  # the judge is not calibrated yet
    baseline_id = json.loads(baseline.out)["run_id"]
    calibrated = run(root, "calibrate", "--evaluator", "groundedness", "--labels", "labels.jsonl")
    assert calibrated.code == 0, calibrated.err

    use_model_system(root, model.openai_base_url)
    first = run(root, "run")
    assert first.code == 0, first.out + first.err
    assert first.lines[1] == "Gate: PASS (exit 0)"
    assert METRIC in first.lines
    assert "Cache: execution 0 hit/12 miss; judgment 0 hit/12 miss" in first.lines
    assert len(model.requests) == 12
    body = model.requests[0].json()
    assert body["model"] == "helpdesk-model" and body["temperature"] == 0.0
    assert body["max_completion_tokens"] == 200 and "response_format" not in body
    assert [m["role"] for m in body["messages"]] == ["user"]
    assert (
        '<passage id="kb-06">\nThe pro plan costs four euros a month.'
        in body["messages"][0]["content"]
    )
    assert {r.headers["authorization"] for r in model.requests} == {"Bearer sk-model-SECRET-77"}

    shown = run(root, "inspect", "latest", "--case", "sync_interval")
    assert shown.code == 0, shown.err
    assert "  output: Notes sync across devices every five minutes." in shown.lines
    detail = json.loads(run(root, "inspect", "latest", "--case", "sync_interval", "--json").out)
    assert detail["output"] == "Notes sync across devices every five minutes."
    (call,) = detail["artifacts"]["model_call/v1"]
    assert (call["provider"], call["model"], call["attempts"]) == ("openai", "helpdesk-model", 1)
    assert call["input_tokens"] > 100 and call["output_tokens"] == 7
    assert call["cost"] == pytest.approx(call["input_tokens"] * 1e-6 + 7 * 2e-6)
    assert len(call["request_key"]) > 20
    (context,) = detail["artifacts"]["context/v1"]
    assert "kb-01" in [item["doc_id"] for item in context["items"]]
    assert "  context/v1:" in shown.lines

    again = run(root, "run", "--json")
    assert again.code == 0
    assert json.loads(again.out)["cache"]["execution"] == [12, 0, 0]
    assert len(model.requests) == 12  # the same requests: every execution came from the cache
    model_id = json.loads(again.out)["run_id"]

    compared = run(root, "compare", model_id, baseline_id)
    assert compared.code == 0, compared.err
    assert any(
        line.startswith("groundedness: +0.0 points") and "12 paired" in line
        for line in compared.lines
    ), compared.out
    assert len(judge.requests) == 12 + 40 + 12  # the model's 12 new outputs were judged once
    for path in (root / ".oloproof").rglob("*"):
        if path.is_file():
            assert b"sk-model-SECRET-77" not in path.read_bytes()


def test_a_changed_prompt_is_a_new_request_and_so_a_new_execution(
    project: tuple[Path, ScriptedJudgeServer, ScriptedJudgeServer],
) -> None:
    root, _, model = project
    use_model_system(root, model.openai_base_url)
    assert run(root, "run").code in (0, 3)
    config = yaml.safe_load((root / "oloproof.yaml").read_text())
    config["system"]["model"]["prompt"] = PROMPT.replace("one sentence", "one short sentence")
    (root / "oloproof.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    second = run(root, "run", "--json")
    assert json.loads(second.out)["cache"]["execution"] == [0, 12, 0]
    assert len(model.requests) == 24


def test_a_prompt_using_a_key_the_input_lacks_errs_that_case(
    project: tuple[Path, ScriptedJudgeServer, ScriptedJudgeServer],
) -> None:
    root, _, model = project
    use_model_system(root, model.openai_base_url)
    config = yaml.safe_load((root / "oloproof.yaml").read_text())
    config["system"]["model"]["prompt"] = PROMPT + "\nTicket: {{ ticket.id }}"
    (root / "oloproof.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    result = run(root, "run")
    assert "[NO_POLICY" not in result.out and "PARTIAL]" in result.lines[0], result.out
    shown = run(root, "inspect", "latest", "--case", "sync_interval")
    assert (
        "  error: ModelSystemError: case 'sync_interval': the prompt uses {{ ticket.id }}, and "
        "the case input has no 'ticket.id'" in shown.lines
    )
    assert model.requests == []
