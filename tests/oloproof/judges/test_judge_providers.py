"""Every provider path against the real scripted server on 127.0.0.1."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import httpx
import pytest
from judge_helpers import KEY_ENV, SECRET, base_url

from oloproof.providers import (
    AnthropicMessagesProvider,
    HttpProvider,
    OpenAIChatProvider,
    ProviderError,
    retry_after_seconds,
)
from oloproof.testing import (
    ScriptedJudgeServer,
    answer,
    fail,
    hang,
    rate_limit,
    raw,
)

PROVIDERS = ["openai", "anthropic"]


def make(server: ScriptedJudgeServer, provider: str, **options: Any) -> HttpProvider:
    settings: dict[str, Any] = {
        "model": "judge-model-1",
        "base_url": base_url(server, provider),
        "api_key_env": KEY_ENV,
        "timeout_s": 2.0,
        "max_retries": 2,
        "backoff_s": 0.01,
        **options,
    }
    cls = OpenAIChatProvider if provider == "openai" else AnthropicMessagesProvider
    return cls(**settings)


def complete(provider: HttpProvider, system: str = "sys", user: str = "usr") -> Any:
    return asyncio.run(provider.complete(system, user))


def fail_with(provider: HttpProvider) -> ProviderError:
    with pytest.raises(ProviderError) as info:
        complete(provider)
    return info.value


def assert_no_secret(error: ProviderError) -> None:
    for text in (str(error), error.message, error.raw or "", repr(error.to_detail())):
        assert SECRET not in text
    assert error.__cause__ is None and error.__context__ is None


@pytest.mark.parametrize("provider", PROVIDERS)
def test_success_returns_text_usage_and_reply_id(
    server: ScriptedJudgeServer, secret: str, provider: str
) -> None:
    server.script(
        answer("hello", input_tokens=42, output_tokens=7, reply_id="r-1", fingerprint="fp_9")
    )
    completion = complete(make(server, provider), "be brief", "say hello")
    assert completion.text == "hello"
    assert (completion.usage.input_tokens, completion.usage.output_tokens) == (42, 7)
    assert completion.reply_id == "r-1"
    assert completion.model == "judge-model-1"
    assert completion.attempts == 1
    # The messages protocol has no fingerprint; chat completions pass it through.
    assert completion.fingerprint == ("fp_9" if provider == "openai" else None)


def test_openai_request_shape_and_bearer_key(server: ScriptedJudgeServer, secret: str) -> None:
    server.script(answer("ok"))
    complete(make(server, "openai", temperature=0.0, max_tokens=99), "S", "U")
    (request,) = server.requests
    assert request.path == "/v1/chat/completions"
    assert request.headers["authorization"] == f"Bearer {secret}"
    assert "x-api-key" not in request.headers
    assert request.json() == {
        "model": "judge-model-1",
        "messages": [{"role": "system", "content": "S"}, {"role": "user", "content": "U"}],
        "temperature": 0.0,
        "max_completion_tokens": 99,
    }


def test_openai_sends_no_temperature_unless_one_is_set(
    server: ScriptedJudgeServer, secret: str
) -> None:
    server.script(answer("ok"), answer("ok"))
    complete(make(server, "openai"), "S", "U")
    complete(make(server, "openai", max_tokens_field="max_tokens", max_tokens=5), "S", "U")
    first, second = (r.json() for r in server.requests)
    assert "temperature" not in first and first["max_completion_tokens"] == 1024
    assert second["max_tokens"] == 5 and "max_completion_tokens" not in second


def test_anthropic_request_shape_and_key_header(server: ScriptedJudgeServer, secret: str) -> None:
    server.script(answer("ok"))
    complete(make(server, "anthropic", max_tokens=77), "S", "U")
    (request,) = server.requests
    assert request.path == "/v1/messages"
    assert request.headers["authorization"] == f"Bearer {secret}"
    assert request.headers["anthropic-version"] == "2026-10-21"
    assert "x-api-key" not in request.headers
    assert request.json() == {
        "model": "judge-model-1",
        "system": "S",
        "messages": [{"role": "user", "content": "U"}],
        "max_tokens": 77,
    }


@pytest.mark.parametrize("provider", PROVIDERS)
def test_key_is_sent_only_in_its_header(
    server: ScriptedJudgeServer, secret: str, provider: str
) -> None:
    server.script(answer("ok"))
    complete(make(server, provider))
    (request,) = server.requests
    assert secret not in request.body.decode()
    assert secret not in request.path
    carrying = [name for name, value in request.headers.items() if secret in value]
    assert carrying == ["authorization"]


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("header", ["retry-after", "retry-after-ms"])
def test_429_waits_what_retry_after_asks(
    server: ScriptedJudgeServer, secret: str, provider: str, header: str
) -> None:
    server.script(rate_limit(0.15, header=header), answer("ok"))
    # backoff_s is tiny: only the server's Retry-After can explain a 0.15 s gap.
    completion = complete(make(server, provider, backoff_s=0.001))
    first, second = server.requests
    assert second.received_at - first.received_at >= 0.15
    assert completion.text == "ok"
    assert completion.attempts == 2


@pytest.mark.parametrize("provider", PROVIDERS)
def test_5xx_is_retried_then_succeeds(
    server: ScriptedJudgeServer, secret: str, provider: str
) -> None:
    server.script(fail(500), fail(503), answer("ok"))
    completion = complete(make(server, provider))
    assert completion.text == "ok"
    assert completion.attempts == 3
    assert len(server.requests) == 3


def test_backoff_doubles_between_tries(server: ScriptedJudgeServer, secret: str) -> None:
    server.script(fail(502), fail(502), answer("ok"))
    complete(make(server, "openai", backoff_s=0.1))
    first, second, third = (r.received_at for r in server.requests)
    assert second - first >= 0.1
    assert third - second >= 0.2


@pytest.mark.parametrize("provider", PROVIDERS)
def test_persistent_5xx_fails_after_the_last_try(
    server: ScriptedJudgeServer, secret: str, provider: str
) -> None:
    server.default = fail(503, "overloaded")
    error = fail_with(make(server, provider, max_retries=2))
    assert error.kind == "http_status"
    assert error.status == 503
    assert error.attempts == 3
    assert len(server.requests) == 3
    assert "HTTP 503" in error.message and "overloaded" in error.message
    assert_no_secret(error)


@pytest.mark.parametrize("status", [400, 401, 404])
def test_client_errors_are_not_retried(
    server: ScriptedJudgeServer, secret: str, status: int
) -> None:
    server.default = fail(status)
    error = fail_with(make(server, "openai"))
    assert (error.kind, error.status, error.attempts) == ("http_status", status, 1)
    assert len(server.requests) == 1


@pytest.mark.parametrize("provider", PROVIDERS)
def test_hang_times_out_and_is_retried(
    server: ScriptedJudgeServer, secret: str, provider: str
) -> None:
    server.default = hang(10.0)
    started = time.monotonic()
    error = fail_with(make(server, provider, timeout_s=1.5, max_retries=1))
    assert time.monotonic() - started >= 3.0
    assert error.kind == "timeout"
    assert error.attempts == 2
    assert len(server.requests) == 2
    assert_no_secret(error)


def test_no_retry_after_a_timeout_when_the_server_keeps_computing(
    server: ScriptedJudgeServer, secret: str
) -> None:
    server.default = hang(30.0)
    # Long enough for the request to reach the server on a loaded machine: at 0.5 s the call
    # could time out before the server had recorded it (0 requests, not 1).
    error = fail_with(make(server, "openai", timeout_s=3.0, max_retries=3, retry_on_timeout=False))
    assert (error.kind, error.attempts, len(server.requests)) == ("timeout", 1, 1)
    assert "not retried: retry_on_timeout is off" in error.message


def test_hang_then_answer_recovers(server: ScriptedJudgeServer, secret: str) -> None:
    server.script(hang(10.0), answer("late but fine"))
    completion = complete(make(server, "anthropic", timeout_s=1.5, max_retries=1))
    assert completion.text == "late but fine"
    assert completion.attempts == 2


def test_connection_refused_is_a_connection_error(secret: str) -> None:
    with ScriptedJudgeServer() as server:
        url = server.openai_base_url
    provider = OpenAIChatProvider(
        model="m", base_url=url, api_key_env=KEY_ENV, max_retries=1, backoff_s=0.01
    )
    error = fail_with(provider)
    assert (error.kind, error.attempts) == ("connection", 2)
    assert_no_secret(error)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_body_that_is_not_the_protocol_is_malformed(
    server: ScriptedJudgeServer, secret: str, provider: str
) -> None:
    server.script(raw("<html>gateway says hi</html>"))
    error = fail_with(make(server, provider))
    assert error.kind == "malformed_response"
    assert error.raw == "<html>gateway says hi</html>"
    assert len(server.requests) == 1


def test_a_server_echoing_the_key_is_redacted(server: ScriptedJudgeServer, secret: str) -> None:
    server.default = fail(500, f"bad key {secret}")
    error = fail_with(make(server, "openai", max_retries=0))
    assert "[redacted]" in error.message and "[redacted]" in (error.raw or "")
    assert_no_secret(error)


def test_unset_key_fails_without_a_call(
    server: ScriptedJudgeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(KEY_ENV, raising=False)
    error = fail_with(make(server, "openai"))
    assert error.kind == "missing_key"
    assert KEY_ENV in error.message
    assert server.requests == []


def test_no_key_env_sends_no_key(server: ScriptedJudgeServer) -> None:
    server.script(answer("ok"))
    complete(make(server, "openai", api_key_env=None))
    (request,) = server.requests
    assert "authorization" not in request.headers


def test_concurrency_is_bounded_per_provider(server: ScriptedJudgeServer, secret: str) -> None:
    server.default = answer("ok", delay_s=0.2)
    provider = make(server, "openai", concurrency=2)

    async def four() -> None:
        await asyncio.gather(*(provider.complete("s", str(i)) for i in range(4)))

    asyncio.run(four())
    arrivals = sorted(r.received_at for r in server.requests)
    # Two go at once; the third can only start once one of the first two has finished.
    assert arrivals[2] - arrivals[0] >= 0.2


def test_pooled_client_inside_async_with(server: ScriptedJudgeServer, secret: str) -> None:
    server.default = answer("ok")
    provider = make(server, "anthropic")

    async def use() -> list[str]:
        async with provider:
            replies = await asyncio.gather(*(provider.complete("s", "u") for _ in range(3)))
        return [r.text for r in replies]

    assert asyncio.run(use()) == ["ok", "ok", "ok"]
    # Usable again afterwards, in a new event loop, without the pool.
    assert complete(provider).text == "ok"


def test_retry_after_forms() -> None:
    assert retry_after_seconds(httpx.Headers({"retry-after": "2"})) == 2.0
    assert retry_after_seconds(httpx.Headers({"retry-after": "0.5"})) == 0.5
    assert retry_after_seconds(httpx.Headers({"retry-after-ms": "250"})) == 0.25
    assert retry_after_seconds(httpx.Headers({"retry-after": "-3"})) == 0.0
    assert retry_after_seconds(httpx.Headers({"retry-after": "soon"})) is None
    assert retry_after_seconds(httpx.Headers({})) is None
    assert retry_after_seconds(httpx.Headers({"retry-after": "nan"})) is None
    assert retry_after_seconds(httpx.Headers({"retry-after": "inf"})) is None
    past = retry_after_seconds(httpx.Headers({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}))
    assert past == 0.0
    future = time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime(time.time() + 30))
    wait = retry_after_seconds(httpx.Headers({"retry-after": future}))
    assert wait is not None and 25 <= wait <= 31


def test_retry_after_beyond_the_cap_falls_back_to_backoff(
    server: ScriptedJudgeServer, secret: str
) -> None:
    server.script(rate_limit(3600), answer("ok"))
    started = time.monotonic()
    completion = complete(make(server, "openai", max_retry_after_s=1.0))
    assert completion.text == "ok"
    assert time.monotonic() - started < 5
