"""The scripted judge server users get from oloproof.testing."""

from __future__ import annotations

import asyncio
import time

import httpx
import pytest

from oloproof.evaluators.base import CaseView
from oloproof.results import Verdict
from oloproof.testing import (
    RecordedRequest,
    Reply,
    ScriptedJudge,
    ScriptedJudgeServer,
    ScriptedProvider,
    answer,
    hang,
    verdict,
)


def post(url: str, path: str, body: object) -> httpx.Response:
    return httpx.post(url + path, json=body, timeout=5)


def test_it_binds_loopback_on_a_free_port() -> None:
    with ScriptedJudgeServer() as one, ScriptedJudgeServer() as two:
        assert one.url.startswith("http://127.0.0.1:")
        assert one.url != two.url
        assert one.openai_base_url == one.url + "/v1"
        assert one.anthropic_base_url == one.url


def test_replies_come_in_order_then_default_then_500() -> None:
    with ScriptedJudgeServer(answer("a"), answer("b")) as server:
        texts = [
            post(server.url, "/v1/messages", {"model": "m"}).json()["content"][0]["text"]
            for _ in range(2)
        ]
        assert texts == ["a", "b"]
        assert post(server.url, "/v1/messages", {}).status_code == 500
        server.default = answer("c")
        reply = post(server.url, "/v1/chat/completions", {}).json()
        assert reply["choices"][0]["message"]["content"] == "c"
        assert server.pending == 0


def test_what_is_no_reply_is_refused_where_it_is_given() -> None:
    # Was taken, then failed in the server's thread on each request (a TypeError there), so
    # a test saw every call fail as if the server had dropped it.
    with pytest.raises(TypeError, match=r"is a Reply .*, not str"):
        ScriptedJudgeServer(default='{"verdict": "pass"}')  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"is a Reply .*, not dict"):
        ScriptedJudgeServer({"verdict": "pass"})  # type: ignore[arg-type]
    with ScriptedJudgeServer() as server:
        with pytest.raises(TypeError, match=r"is a Reply .*, not str"):
            server.script("pass")  # type: ignore[arg-type]
        with pytest.raises(TypeError, match=r"default: a scripted reply is a Reply .*, not int"):
            server.default = 3  # type: ignore[assignment]
        assert server.default is None and server.pending == 0


def test_a_responder_returning_no_reply_is_said_in_the_reply() -> None:
    with ScriptedJudgeServer(default=lambda request: "pass") as server:  # type: ignore[arg-type,return-value]
        reply = post(server.url, "/v1/chat/completions", {})
    assert reply.status_code == 500
    assert "a scripted reply is a Reply" in reply.json()["error"]["message"], reply.text
    assert reply.json()["error"]["message"].endswith(", not str")


def test_a_responder_can_answer_by_request() -> None:
    def responder(request: RecordedRequest) -> Reply:
        return verdict("yes" in request.user_message)

    with ScriptedJudgeServer(default=responder) as server:
        body = {"messages": [{"role": "user", "content": "say yes"}]}
        reply = post(server.url, "/v1/chat/completions", body).json()
        assert '"pass"' in reply["choices"][0]["message"]["content"]


def test_unknown_paths_are_404_and_still_recorded_headers() -> None:
    with ScriptedJudgeServer(answer("x")) as server:
        response = httpx.post(server.url + "/v2/other", json={}, headers={"x-probe": "1"})
        assert response.status_code == 404
        assert server.requests[0].headers["x-probe"] == "1"
        assert server.pending == 1  # a wrong path consumes no scripted reply


def test_close_does_not_wait_for_a_hanging_reply() -> None:
    server = ScriptedJudgeServer(hang(30.0)).start()
    with pytest.raises(httpx.ReadTimeout):
        post_timeout = httpx.Timeout(5.0, read=0.2)
        httpx.post(server.url + "/v1/messages", json={}, timeout=post_timeout)
    started = time.monotonic()
    server.close()
    assert time.monotonic() - started < 5


def test_url_before_start_is_an_error() -> None:
    with pytest.raises(RuntimeError):
        _ = ScriptedJudgeServer().url


def test_scripted_judge_gives_the_verdicts_it_was_given() -> None:
    judge = ScriptedJudge({"a": True, "b": False, "c": Verdict.missing("judge_call_failed")})

    def view(case_id: str) -> CaseView:
        return CaseView(case_id, {}, {}, {}, "out", {})

    async def all_of() -> list[Verdict]:
        return [await judge.ajudge(view(case)) for case in ("a", "b", "c", "d")]

    statuses = [(v.status, v.reason) for v in asyncio.run(all_of())]
    assert statuses == [
        ("pass", None),
        ("fail", "scripted"),
        ("missing", "judge_call_failed"),
        ("missing", "not_scripted"),
    ]
    assert judge.seen == ["a", "b", "c", "d"]


def test_scripted_provider_replies_then_responds_then_refuses() -> None:
    provider = ScriptedProvider(["one"], respond=lambda system, user: user.upper())
    assert asyncio.run(provider.complete("s", "x")).text == "one"
    assert asyncio.run(provider.complete("s", "two")).text == "TWO"
    empty = ScriptedProvider()
    with pytest.raises(RuntimeError):
        asyncio.run(empty.complete("s", "u"))
