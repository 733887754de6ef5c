"""A model's reply holding half a character, through the real CLI.

A lone UTF-16 surrogate escape (``"\\ud83d"``, half of an emoji, as many JSON encoders write a
split one) is no character: no ledger stores it. It stopped the whole run (exit 2, "cannot
encode value"), whether it came from a judge or from a model system. It is the model server's
doing, so it costs that judgment (missing) or that case (errored), and the run goes on.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from tests.support import Result, oloproof

from oloproof.testing import RecordedRequest, Reply, ScriptedJudgeServer, answer, raw

HALF = "\\ud83d"  # the six characters of the escape, as they stand in the JSON text

APP = """
from oloproof import Context, ContextItem, current_case, system

PASSAGE = ContextItem(doc_id="kb-01", text="Notes sync across devices every five minutes.")


@system(name="notes", version="1", records=["context/v1"])
def answer(case_input):
    current_case().context(Context(items=(PASSAGE,)))
    return {"answer": case_input["answer"]}
"""

PASS = '{"verdict": "pass", "reason": "stated in kb-01"}'


def judged_project(root: Path, base_url: str) -> Path:
    """Two cases judged for groundedness by the model at ``base_url``: ``split`` and ``plain``."""
    root.mkdir()
    (root / "app.py").write_text(APP, encoding="utf-8")
    cases = [
        {"id": name, "input": {"question": "How often do notes sync?", "answer": f"{name} sync"}}
        for name in ("split", "plain")
    ]
    (root / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases))
    judge = {
        "type": "groundedness_judge",
        "provider": "openai",
        "model": "m",
        "base_url": base_url,
        "api_key_env": None,
        "max_retries": 0,
    }
    config = {
        "system": {"name": "notes", "version": "1", "callable": "app:answer"},
        "evaluators": [judge],
    }
    (root / "oloproof.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    return root


def by_answer(split: Reply) -> Any:
    """A responder: ``split`` for the case whose answer says so, a plain pass for the other."""

    def reply(request: RecordedRequest) -> Reply:
        return split if "<answer>\nsplit sync" in request.user_message else answer(PASS)

    return reply


def judgment_lines(shown: Result, case_id: str) -> str:
    return shown.out.split(f"case {case_id}", 1)[-1]


def test_a_verdict_holding_half_a_character_is_missing_and_the_run_goes_on(
    tmp_path: Path,
) -> None:
    # The reply is the verdict object, but its reason ends in half an emoji.
    split = answer('{"verdict": "pass", "reason": "stated in kb-01 ' + HALF + '"}')
    with ScriptedJudgeServer(default=by_answer(split)) as server:
        root = judged_project(tmp_path / "p", server.openai_base_url)
        result = oloproof("run", cwd=root)
        split_case = oloproof("inspect", "latest", "--case", "split", cwd=root)
        plain_case = oloproof("inspect", "latest", "--case", "plain", cwd=root)
    # Before: exit 2, "error: cannot encode value: 'utf-8' codec can't encode character",
    # and the run STOPPED with no case judged.
    assert result.code == 0, result.err
    assert "groundedness: 1 missing: 1 unparseable_reply" in result.lines, result.out
    assert "groundedness: missing (unparseable_reply)" in split_case.out
    assert (
        "parse error: the reply's object holds a lone surrogate escape (\\uD800-\\uDFFF without"
        in split_case.out
    )
    # The reply is kept as it came, escape and all: nothing was altered.
    assert f'reply: "{{\\"verdict\\": \\"pass\\", \\"reason\\": \\"stated in kb-01 \\{HALF}' in (
        split_case.out
    )
    assert "groundedness: pass" in plain_case.out


def test_calibrate_does_not_count_a_verdict_holding_half_a_character(tmp_path: Path) -> None:
    split = answer('{"verdict": "fail", "reason": "' + HALF + '"}')
    with ScriptedJudgeServer(default=split) as server:
        root = judged_project(tmp_path / "p", server.openai_base_url)
        labels = [
            {
                "id": f"l{i}",
                "input": {"question": f"How often do notes sync? ({i})"},
                "output": {"answer": "Every five minutes."},
                "context": [{"doc_id": "kb-01", "text": "Notes sync every five minutes."}],
                "label": i == 0,
            }
            for i in range(2)
        ]
        (root / "labels.jsonl").write_text("".join(json.dumps(x) + "\n" for x in labels))
        result = oloproof(
            "calibrate", "--evaluator", "groundedness", "--labels", "labels.jsonl", cwd=root
        )
    # Before: exit 0, a calibration recorded that counted both replies as the judge's fails.
    assert result.code == 2, result.out
    assert "judged none of the 2 examples (2 unparseable_reply" in result.err
    assert result.out == ""


def test_a_provider_body_holding_half_a_character_is_a_malformed_response(
    tmp_path: Path,
) -> None:
    # The model's text itself holds the escape: the body's own JSON has half a character.
    body = json.dumps(
        {
            "id": "c1",
            "model": "m",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": PASS + "\ud83d"}}],
        }
    )
    split = raw(body, content_type="application/json")
    with ScriptedJudgeServer(default=by_answer(split)) as server:
        root = judged_project(tmp_path / "p", server.openai_base_url)
        result = oloproof("run", cwd=root)
        shown = oloproof("inspect", "latest", "--case", "split", cwd=root)
    assert result.code == 0, result.err
    assert "groundedness: 1 missing: 1 judge_malformed_response" in result.lines, result.out
    assert "the body holds a lone surrogate escape" in " ".join(shown.out.split())
    assert "Traceback" not in shown.out


MODEL_CONFIG = """
system:
  name: m
  version: "1"
  model: {{provider: openai, model: x, base_url: "{url}", api_key_env: null, max_retries: 0,
          prompt: "Q: {{{{ question }}}}", output: {output}}}
dataset: cases.jsonl
evaluators:
  - {{type: contains, criterion: c, field: {field}, expected_field: answer}}
"""


def model_project(root: Path, url: str, output: str, questions: list[str]) -> Path:
    root.mkdir()
    field = "answer" if output == "json" else "null"
    (root / "oloproof.yaml").write_text(MODEL_CONFIG.format(url=url, output=output, field=field))
    cases = [{"id": q, "input": {"question": q}, "expected": {"answer": "five"}} for q in questions]
    (root / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases))
    return root


def reply_per_question(replies: dict[str, Reply]) -> Any:
    def reply(request: RecordedRequest) -> Reply:
        return replies[request.user_message.removeprefix("Q: ")]

    return reply


def test_a_model_system_reply_holding_half_a_character_errors_its_case(tmp_path: Path) -> None:
    body = json.dumps(
        {"id": "c1", "model": "x", "choices": [{"message": {"content": "Every five \ud83d"}}]}
    )
    replies = {"split": raw(body, content_type="application/json"), "plain": answer("five")}
    with ScriptedJudgeServer(default=reply_per_question(replies)) as server:
        root = model_project(tmp_path / "p", server.openai_base_url, "text", list(replies))
        result = oloproof("run", cwd=root)
        failures = oloproof("inspect", "latest", "--failures", cwd=root)
    # Before: exit 2, "case 'split': the output cannot be recorded", the run STOPPED.
    assert result.code == 0, result.err
    assert "1 of 2 cases errored: ProviderError:" in result.out
    assert "c: 1 missing: 1 execution_errored" in result.lines, result.out
    assert "the body holds a lone surrogate escape" in failures.out
    assert "\nplain\n" not in failures.out  # the other case was answered and judged


def test_a_json_output_the_ledger_cannot_hold_errors_its_case(tmp_path: Path) -> None:
    replies = {
        "split": answer('{"answer": "five ' + HALF + '"}'),
        "nan": answer('{"answer": NaN}'),
        "plain": answer('{"answer": "five"}'),
    }
    with ScriptedJudgeServer(default=reply_per_question(replies)) as server:
        root = model_project(tmp_path / "p", server.openai_base_url, "json", list(replies))
        result = oloproof("run", cwd=root)
        failures = oloproof("inspect", "latest", "--failures", cwd=root)
    # Before: exit 2, the run STOPPED at the first ("the output cannot be recorded").
    assert result.code == 0, result.err
    assert "2 of 3 cases errored: ModelSystemError:" in result.out, result.out
    text = " ".join(failures.out.split())
    assert "case 'split': output: json, and the reply's JSON holds a lone surrogate escape" in text
    assert "case 'nan': output: json, and the reply holds JSON Oloproof cannot record" in text
