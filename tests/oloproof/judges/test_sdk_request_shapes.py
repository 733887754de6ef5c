"""Our providers send what the official SDKs send for the same call, field by field.

The same call goes through the official ``openai`` and ``anthropic`` packages and through our
provider, against one capturing server on 127.0.0.1; the captured bodies must be equal, and so
must the headers that carry meaning (key, API version, content type). The differences left are
the SDKs' own: headers that describe the SDK and its platform (``user-agent``,
``x-stainless-*``) and its retry bookkeeping, which our client does not claim to be.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from judge_helpers import KEY_ENV, SECRET

from oloproof.evaluators.judge_reply import reply_schema
from oloproof.providers import AnthropicMessagesProvider, OpenAIChatProvider
from oloproof.testing import RecordedRequest, ScriptedJudgeServer, verdict

openai = pytest.importorskip("openai")
anthropic = pytest.importorskip("anthropic")

SYSTEM = "You judge answers. Reply with one JSON object."
USER = "<answer>\nFive seats.\n</answer>"
SCHEMA = reply_schema("pass_fail")
MEANING = (
    "authorization",
    "x-api-key",
    "anthropic-version",
    "anthropic-beta",
    "content-type",
    "accept",
)


def captured(server: ScriptedJudgeServer) -> tuple[RecordedRequest, RecordedRequest]:
    sdk, ours = server.requests
    return sdk, ours


def meaningful_headers(request: RecordedRequest) -> dict[str, str]:
    return {k: v for k, v in request.headers.items() if k in MEANING}


def sdk_only_headers(request: RecordedRequest) -> set[str]:
    """The ``x-stainless-*`` headers (our client sends only httpx's own ``user-agent``)."""
    return {k for k in request.headers if k.startswith("x-stainless-")}


@pytest.fixture
def capturing(secret: str) -> Any:
    with ScriptedJudgeServer(default=verdict(True)) as server:
        yield server


@pytest.mark.parametrize(
    ("options", "sdk_kwargs"),
    [
        (
            {"max_tokens": 99},
            {"max_completion_tokens": 99},
        ),
        (
            {"max_tokens": 64, "temperature": 0.0, "structured_output": "json_schema"},
            {
                "max_completion_tokens": 64,
                "temperature": 0.0,
                "response_format": {
                    "type": "json_schema",
                    "json_schema": {"name": "reply", "strict": True, "schema": SCHEMA},
                },
            },
        ),
        (
            {"max_tokens": 32, "structured_output": "json_object", "extra_body": {"seed": 7}},
            {
                "max_completion_tokens": 32,
                "response_format": {"type": "json_object"},
                "extra_body": {"seed": 7},
            },
        ),
    ],
)
def test_openai_chat_completion_matches_the_sdk(
    capturing: ScriptedJudgeServer, options: dict[str, Any], sdk_kwargs: dict[str, Any]
) -> None:
    client = openai.OpenAI(api_key=SECRET, base_url=capturing.openai_base_url, max_retries=0)
    reply = client.chat.completions.create(
        model="gpt-test",
        messages=[{"role": "system", "content": SYSTEM}, {"role": "user", "content": USER}],
        **sdk_kwargs,
    )
    assert reply.choices[0].message.content == '{"verdict": "pass", "reason": "scripted"}'
    provider = OpenAIChatProvider(
        model="gpt-test", base_url=capturing.openai_base_url, api_key_env=KEY_ENV, **options
    )
    schema = SCHEMA if "structured_output" in options else None
    ours = asyncio.run(provider.complete(SYSTEM, USER, schema=schema))
    assert ours.text == reply.choices[0].message.content
    sdk, mine = captured(capturing)
    assert (sdk.path, mine.path) == ("/v1/chat/completions", "/v1/chat/completions")
    assert mine.json() == sdk.json()
    assert meaningful_headers(mine) == meaningful_headers(sdk)
    assert meaningful_headers(mine)["authorization"] == f"Bearer {SECRET}"
    assert sdk_only_headers(sdk) and not sdk_only_headers(mine)


@pytest.mark.parametrize(
    ("options", "sdk_kwargs"),
    [
        ({"max_tokens": 77}, {"max_tokens": 77}),
        (
            {"max_tokens": 50, "structured_output": "json_schema"},
            {
                "max_tokens": 50,
                "output_config": {"format": {"type": "json_schema", "schema": SCHEMA}},
            },
        ),
        (
            {"max_tokens": 20, "extra_body": {"temperature": 0.0}},
            {"max_tokens": 20, "extra_body": {"temperature": 0.0}},
        ),
    ],
)
def test_anthropic_message_matches_the_sdk(
    capturing: ScriptedJudgeServer, options: dict[str, Any], sdk_kwargs: dict[str, Any]
) -> None:
    client = anthropic.Anthropic(
        api_key=SECRET, base_url=capturing.anthropic_base_url, max_retries=0
    )
    reply = client.messages.create(
        model="claude-test",
        system=SYSTEM,
        messages=[{"role": "user", "content": USER}],
        **sdk_kwargs,
    )
    assert reply.content[0].text == '{"verdict": "pass", "reason": "scripted"}'
    provider = AnthropicMessagesProvider(
        model="claude-test",
        base_url=capturing.anthropic_base_url,
        api_key_env=KEY_ENV,
        max_tokens_field="max_tokens",
        **options,
    )
    schema = SCHEMA if "structured_output" in options else None
    ours = asyncio.run(provider.complete(SYSTEM, USER, schema=schema))
    assert ours.text == reply.content[0].text
    sdk, mine = captured(capturing)
    assert (sdk.path, mine.path) == ("/v1/messages", "/v1/messages")
    assert mine.json() == sdk.json()
    assert meaningful_headers(mine) == meaningful_headers(sdk)
    assert meaningful_headers(mine)["anthropic-version"] == "2026-10-21"
    assert sdk_only_headers(sdk) and not sdk_only_headers(mine)


def test_the_user_turn_form_is_what_the_sdk_sends_for_one_user_message(
    capturing: ScriptedJudgeServer,
) -> None:
    client = openai.OpenAI(api_key=SECRET, base_url=capturing.openai_base_url, max_retries=0)
    client.chat.completions.create(
        model="gemma-3-270m",
        messages=[{"role": "user", "content": f"{SYSTEM}\n\n{USER}"}],
        max_tokens=40,
    )
    provider = OpenAIChatProvider(
        model="gemma-3-270m",
        base_url=capturing.openai_base_url,
        api_key_env=KEY_ENV,
        instructions="user",
        max_tokens=40,
        max_tokens_field="max_tokens",
    )
    asyncio.run(provider.complete(SYSTEM, USER))
    sdk, mine = captured(capturing)
    assert mine.json() == sdk.json()
