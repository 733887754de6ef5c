"""The model system on its own: prompts, passages, outputs, both protocols, refusals."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from judge_helpers import KEY_ENV, SECRET
from pydantic import ValidationError

from oloproof.dataset import Case
from oloproof.errors import ConfigError
from oloproof.judge_config import ModelSystemSettings
from oloproof.systems.base import ExecContext, Execution
from oloproof.systems.model import ModelSystem, ModelSystemError
from oloproof.testing import ScriptedJudgeServer, answer


class NoStages:
    async def lookup(self, identity: str) -> dict[str, Any] | None:
        return None

    def record(self, stage: str, identity: str, result: dict[str, Any]) -> str:
        raise AssertionError("a model system has no stages")


def build(
    server: ScriptedJudgeServer, tmp_path: Path, provider: str = "openai", **keys: Any
) -> ModelSystem:
    base_url = server.openai_base_url if provider == "openai" else server.anthropic_base_url
    settings = ModelSystemSettings.model_validate(
        {"provider": provider, "model": "m-1", "base_url": base_url, "api_key_env": KEY_ENV, **keys}
    )
    return ModelSystem(
        name="prompted", version="1", settings=settings, base_dir=tmp_path, where="oloproof.yaml"
    )


def execute(system: ModelSystem, inputs: dict[str, Any]) -> Execution:
    case = Case(id="c1", input=inputs, expected={}, metadata={})
    return asyncio.run(system.execute(case, ExecContext(stage_cache=NoStages())))


def test_placeholders_fill_from_the_input_and_are_not_read_twice(
    server: ScriptedJudgeServer, secret: str, tmp_path: Path
) -> None:
    server.script(answer("Five."))
    system = build(server, tmp_path, prompt="Q: {{ question }} / {{ meta.lang }} / {{ n }}")
    done = execute(system, {"question": "Costs {{ n }}?", "meta": {"lang": "en"}, "n": [1, 2]})
    assert done.output == "Five."
    assert server.requests[0].user_message == "Q: Costs {{ n }}? / en / [1, 2]"
    (call,) = done.artifacts["model_call/v1"]
    assert call["request_key"] == system._client.request_key(server.requests[0].user_message)
    assert server.requests[0].headers["authorization"] == f"Bearer {SECRET}"


def test_passages_from_the_input_are_the_context(
    server: ScriptedJudgeServer, secret: str, tmp_path: Path
) -> None:
    server.script(answer("Five seats."))
    system = build(
        server, tmp_path, prompt="{{ context }}\n\n{{ question }}", context_field="passages"
    )
    done = execute(
        system,
        {"question": "Seats?", "passages": [{"doc_id": "kb-03", "text": "Five seats."}, "Loose."]},
    )
    assert done.artifacts["context/v1"] == [
        {
            "items": [
                {"doc_id": "kb-03", "position": 1, "text": "Five seats."},
                {"doc_id": "p2", "position": 2, "text": "Loose."},
            ],
            "source": "retrieval",
        }
    ]
    assert '<passage id="kb-03">\nFive seats.\n</passage>' in server.requests[0].user_message


def test_anthropic_and_a_prompt_file_and_json_output(
    server: ScriptedJudgeServer, secret: str, tmp_path: Path
) -> None:
    (tmp_path / "prompt.txt").write_text("Give {{ what }} as JSON.", encoding="utf-8")
    deep = "[" * 100_000 + "]" * 100_000
    server.script(answer('{"answer": "five"}'), answer("not json"), answer(deep))
    system = build(
        server,
        tmp_path,
        "anthropic",
        prompt_file="prompt.txt",
        system_prompt="Reply in JSON.",
        output="json",
    )
    assert execute(system, {"what": "seats"}).output == {"answer": "five"}
    body = server.requests[0].json()
    assert body["system"] == "Reply in JSON." and body["max_tokens"] == 1024
    assert server.requests[0].headers["anthropic-version"] == "2026-10-21"
    with pytest.raises(ModelSystemError, match="output: json, and the reply is not a JSON object"):
        execute(system, {"what": "seats"})
    # Nested deeper than the parser recurses: the same error, not a RecursionError.
    with pytest.raises(ModelSystemError, match="output: json, and the reply is not a JSON object"):
        execute(system, {"what": "seats"})
    assert (
        system.identity()["prompt_sha256"]
        != build(server, tmp_path, prompt="x").identity()["prompt_sha256"]
    )


def test_the_identity_holds_the_request_and_not_the_key(tmp_path: Path) -> None:
    with ScriptedJudgeServer() as server:
        one = build(server, tmp_path, prompt="{{ q }}", temperature=0.0).identity()
        two = build(server, tmp_path, prompt="{{ q }}", extra_body={"seed": 1}).identity()
    assert one["kind"] == "model" and one["temperature"] == 0.0
    assert two["extra_body"] == {"seed": 1} and one != two
    assert KEY_ENV not in json.dumps(one)


def test_a_missing_input_key_names_it(server: ScriptedJudgeServer, tmp_path: Path) -> None:
    system = build(server, tmp_path, prompt="{{ question }} {{ ticket }}")
    with pytest.raises(ModelSystemError, match=r"uses \{\{ ticket \}\}, and the case input"):
        execute(system, {"question": "x"})
    assert server.requests == []


@pytest.mark.parametrize(
    ("keys", "message"),
    [
        ({}, "exactly one of `prompt`"),
        ({"prompt": "a", "prompt_file": "b"}, "exactly one of `prompt`"),
        ({"prompt": "a", "context_field": "p", "context_file": "k.json"}, "at most one"),
    ],
)
def test_settings_refused(keys: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        ModelSystemSettings.model_validate({"provider": "openai", "model": "m", **keys})


@pytest.mark.parametrize(
    ("keys", "message"),
    [
        ({"prompt": "{{ context }}"}, "without a context_field or context_file"),
        ({"prompt": "x", "context_field": "p"}, "never uses"),
        ({"prompt_file": "nope.txt"}, "no such file"),
        ({"prompt": "{{ context }}", "context_file": "bad.json"}, "not a JSON list"),
    ],
)
def test_config_problems_name_the_key(
    server: ScriptedJudgeServer, tmp_path: Path, keys: dict[str, Any], message: str
) -> None:
    (tmp_path / "bad.json").write_text('{"doc_id": "x"}')
    with pytest.raises(ConfigError, match=message):
        build(server, tmp_path, **keys)
