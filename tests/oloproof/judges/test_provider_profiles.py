"""Provider settings: server profiles, where the instructions go, structured output, extra_body."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from judge_helpers import KB03, judge_settings, make_view
from pydantic import TypeAdapter, ValidationError

from oloproof.evaluators.judge_reply import reply_schema
from oloproof.evaluators.judges import LLMJudge, build_judge
from oloproof.judge_config import JudgeConfig
from oloproof.testing import ScriptedJudgeServer, verdict

ADAPTER: TypeAdapter[Any] = TypeAdapter(JudgeConfig)


def parse(**entry: Any) -> Any:
    return ADAPTER.validate_python({"type": "groundedness_judge", **entry})


@pytest.mark.parametrize(
    ("server", "expected"),
    [
        ("vllm", ("http://127.0.0.1:8000/v1", 8, 300.0, 2, True, "max_completion_tokens")),
        ("llama.cpp", ("http://127.0.0.1:8080/v1", 1, 600.0, 1, False, "max_tokens")),
        ("ollama", ("http://127.0.0.1:11434/v1", 1, 600.0, 1, False, "max_tokens")),
    ],
)
def test_a_server_profile_brings_its_defaults(server: str, expected: tuple[Any, ...]) -> None:
    config = parse(provider="openai", model="m", server=server)
    got = (
        config.base_url,
        config.concurrency,
        config.timeout_s,
        config.max_retries,
        config.retry_on_timeout,
        config.max_tokens_field,
    )
    assert got == expected
    assert config.api_key_env is None and config.temperature == 0.0


def test_keys_given_win_over_the_profile() -> None:
    config = parse(
        provider="openai",
        model="m",
        server="llama.cpp",
        concurrency=2,
        retry_on_timeout=True,
        base_url="http://127.0.0.1:9999/v1",
        api_key_env="LOCAL_KEY",
    )
    assert (config.concurrency, config.retry_on_timeout) == (2, True)
    assert (config.base_url, config.api_key_env) == ("http://127.0.0.1:9999/v1", "LOCAL_KEY")


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({"provider": "anthropic", "model": "c", "server": "vllm"}, "use provider: openai"),
        ({"provider": "anthropic", "model": "c", "temperature": 0.0}, "takes no temperature"),
        (
            {"provider": "anthropic", "model": "c", "structured_output": "json_object"},
            "json_object",
        ),
        (
            {"provider": "openai", "model": "m", "extra_body": {"messages": []}},
            "messages cannot be set",
        ),
        ({"provider": "openai", "model": "m", "server": "lmstudio"}, "server"),
    ],
)
def test_settings_that_do_not_fit_the_protocol_are_refused(
    entry: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValidationError, match=message):
        parse(**entry)


@pytest.mark.parametrize(
    ("model", "instructions", "expected"),
    [
        ("gemma-3-270m", "auto", "user"),
        ("google/Gemma-2-9b-it", "auto", "user"),
        ("llama-3.1-8b", "auto", "system"),
        ("gemma-3-270m", "system", "system"),
        ("gpt-4o-mini", "user", "user"),
    ],
)
def test_where_the_instructions_go(model: str, instructions: str, expected: str) -> None:
    config = parse(provider="openai", model=model, instructions=instructions)
    assert config.resolved_instructions == expected


def test_anthropic_auto_keeps_the_system_field() -> None:
    assert parse(provider="anthropic", model="gemma-on-claude").resolved_instructions == "system"


def judge(
    scripted: ScriptedJudgeServer, judge_type: str = "groundedness_judge", **extra: Any
) -> LLMJudge:
    provider = extra.pop("provider", "openai")
    entry = {"type": judge_type, **judge_settings(scripted, provider), **extra}
    return build_judge(ADAPTER.validate_python(entry), base_dir=Path("."))


def sent(server: ScriptedJudgeServer, j: LLMJudge) -> dict[str, Any]:
    server.script(verdict(True))
    asyncio.run(j.ajudge(make_view(context=[KB03], citations=["kb-03"])))
    body: dict[str, Any] = server.requests[-1].json()
    return body


def test_a_judge_asks_for_its_verdicts_schema(server: ScriptedJudgeServer, secret: str) -> None:
    body = sent(server, judge(server))
    assert body["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "reply", "strict": True, "schema": reply_schema("pass_fail")},
    }
    schema = body["response_format"]["json_schema"]["schema"]
    assert list(schema["properties"]) == ["reason", "verdict"]  # grounds before the decision
    citations = sent(server, judge(server, "citation_support_judge"))
    cited = citations["response_format"]["json_schema"]["schema"]
    assert cited["required"] == ["reason", "unsupported", "verdict"]


def test_structured_output_per_protocol_and_server(
    server: ScriptedJudgeServer, secret: str
) -> None:
    local = sent(server, judge(server, server="llama.cpp", base_url=server.openai_base_url))
    assert local["response_format"] == {"type": "json_object", "schema": reply_schema("pass_fail")}
    assert local["max_tokens"] == 1024 and local["temperature"] == 0.0
    anthropic = sent(server, judge(server, provider="anthropic"))
    assert anthropic["output_config"] == {
        "format": {"type": "json_schema", "schema": reply_schema("pass_fail")}
    }
    off = sent(server, judge(server, structured_output="off"))
    assert "response_format" not in off
    loose = sent(server, judge(server, structured_output="json_object"))
    assert loose["response_format"] == {"type": "json_object"}


def test_gemma_gets_its_instructions_in_the_user_turn(
    server: ScriptedJudgeServer, secret: str
) -> None:
    body = sent(server, judge(server, model="gemma-3-270m"))
    (message,) = body["messages"]
    assert message["role"] == "user"
    assert message["content"].startswith("You are a careful fact-checker.")
    assert "<answer>\nTeam plans include five seats [kb-03].\n</answer>" in message["content"]


def test_extra_body_is_sent_and_is_part_of_the_identity(
    server: ScriptedJudgeServer, secret: str
) -> None:
    plain = judge(server)
    seeded = judge(server, extra_body={"seed": 7, "max_completion_tokens": 50})
    body = sent(server, seeded)
    assert (body["seed"], body["max_completion_tokens"]) == (7, 50)
    assert seeded.spec()["extra_body"] == {"seed": 7, "max_completion_tokens": 50}
    assert seeded.spec() != plain.spec()
