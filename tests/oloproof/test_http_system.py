"""The HTTP system adapter against a real local server, scripted request by request."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from tests.support import free_port

from oloproof import redaction
from oloproof.config import HttpSystem
from oloproof.dataset import MAX_NESTING, Case
from oloproof.errors import ArtifactError, ConfigError, OloproofError
from oloproof.systems import http
from oloproof.systems.base import ExecContext, Execution, plain_output
from oloproof.systems.http import HttpSystemAdapter, HttpSystemError

RETRIEVAL = {
    "query": "can I get my money back",
    "depth": 3,
    "candidates": [{"doc_id": "refunds", "score": 0.9}, {"doc_id": "shipping", "score": 0.4}],
}
CONTEXT = {"items": [{"doc_id": "refunds", "position": 1, "tokens": 40}]}
GOOD_BODY = {
    "answer": "Refunds take 5 days.",
    "evidence": {"retrieval": RETRIEVAL, "context": CONTEXT},
    "cited": ["refunds"],
}
ARTIFACTS = {
    "retrieval/v1": "evidence.retrieval",
    "context/v1": "evidence.context",
    "citations/v1": "cited",
}


@dataclass
class Reply:
    status: int = 200
    body: Any = field(default_factory=lambda: GOOD_BODY)
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0
    trickle_s: float = 0.0  # a pause before each byte of the body
    length: bool = True  # without Content-Length the body ends when the connection closes


@dataclass
class Seen:
    path: str
    headers: dict[str, str]
    body: Any
    at: float


class ScriptedServer:
    """Answers the n-th request with script[n] (the last entry repeats); records every request."""

    def __init__(self) -> None:
        self.script: list[Reply] = [Reply()]
        self.seen: list[Seen] = []
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                raw = self.rfile.read(length)
                with server._lock:
                    index = len(server.seen)
                    server.seen.append(
                        Seen(
                            self.path, dict(self.headers.items()), json.loads(raw), time.monotonic()
                        )
                    )
                    reply = server.script[min(index, len(server.script) - 1)]
                if reply.delay_s:
                    time.sleep(reply.delay_s)
                payload = (
                    reply.body if isinstance(reply.body, bytes) else json.dumps(reply.body).encode()
                )
                try:
                    self.send_response(reply.status)
                    self.send_header("Content-Type", "application/json")
                    if reply.length:
                        self.send_header("Content-Length", str(len(payload)))
                    for name, value in reply.headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    if reply.trickle_s:
                        for byte in payload:
                            time.sleep(reply.trickle_s)
                            self.wfile.write(bytes([byte]))
                            self.wfile.flush()
                    else:
                        self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up waiting (the timeout tests)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/answer"
        self._thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True
        )
        self._thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self._thread.join()


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    srv = ScriptedServer()
    try:
        yield srv
    finally:
        srv.close()


class NoStageCache:
    async def lookup(self, identity: str) -> dict[str, Any] | None:
        return None

    def record(self, stage: str, identity: str, result: dict[str, Any]) -> str:
        raise AssertionError("an HTTP system has no stages")


CTX = ExecContext(stage_cache=NoStageCache())


def make_case(case_id: str = "money_back") -> Case:
    return Case(
        id=case_id, input={"question": "Can I get my money back?"}, expected={}, metadata={}
    )


def adapter(url: str, **settings: Any) -> HttpSystemAdapter:
    settings.setdefault("output_path", "answer")
    settings.setdefault("artifacts", ARTIFACTS)
    settings.setdefault("backoff_s", 0.01)
    settings.setdefault("timeout_s", 5.0)
    return HttpSystemAdapter(
        name="support-api",
        version="1",
        settings=HttpSystem(url=url, **settings),
        where="oloproof.http.yaml",
        concurrency=4,
    )


def run(system: HttpSystemAdapter, case: Case | None = None) -> Execution:
    async def go() -> Execution:
        try:
            return await system.execute(case or make_case(), CTX)
        finally:
            await system.aclose()

    return asyncio.run(go())


# ------------------------------------------------------------------------------ success


def test_success_reads_output_and_validates_artifacts(server: ScriptedServer) -> None:
    execution = run(adapter(server.url))

    assert execution.output == "Refunds take 5 days."
    assert execution.artifacts == {
        "retrieval/v1": [
            {
                "query": "can I get my money back",
                "depth": 3,
                "candidates": [
                    {"doc_id": "refunds", "score": 0.9},
                    {"doc_id": "shipping", "score": 0.4},
                ],
            }
        ],
        "context/v1": [
            {
                "items": [{"doc_id": "refunds", "position": 1, "tokens": 40}],
                "dropped": [],
                "source": "retrieval",
            }
        ],
        "citations/v1": [{"ids": ["refunds"]}],
    }
    assert execution.stages == []
    assert len(server.seen) == 1
    request = server.seen[0]
    assert request.path == "/answer"
    assert request.body == {"question": "Can I get my money back?"}
    assert request.headers["Content-Type"] == "application/json"


def test_no_output_path_means_the_whole_body(server: ScriptedServer) -> None:
    server.script = [Reply(body={"text": "hi", "n": [1, 2]})]
    execution = run(adapter(server.url, output_path=None, artifacts={}))
    assert execution.output == {"text": "hi", "n": [1, 2]}
    assert execution.artifacts == {}


def test_dotted_paths_index_into_lists(server: ScriptedServer) -> None:
    server.script = [Reply(body={"choices": [{"message": {"content": "ok"}}]})]
    execution = run(adapter(server.url, output_path="choices.0.message.content", artifacts={}))
    assert execution.output == "ok"


def test_several_cases_share_one_client(server: ScriptedServer) -> None:
    system = adapter(server.url)

    async def go() -> list[Execution]:
        try:
            cases = [make_case(f"c{i}") for i in range(10)]
            return list(await asyncio.gather(*(system.execute(c, CTX) for c in cases)))
        finally:
            await system.aclose()

    executions = asyncio.run(go())
    assert [e.output for e in executions] == ["Refunds take 5 days."] * 10
    assert len(server.seen) == 10


# ------------------------------------------------------------------ missing and malformed


def test_missing_output_path_names_case_path_and_found_keys(server: ScriptedServer) -> None:
    server.script = [Reply(body={"answer": "x", "cited": []})]
    with pytest.raises(ArtifactError) as err:
        run(adapter(server.url, artifacts={"retrieval/v1": "evidence.retrieval"}))
    assert str(err.value) == (
        "case 'money_back': response has no field at 'evidence.retrieval' "
        "(found keys: answer, cited)"
    )


def test_missing_nested_field_names_where_the_walk_stopped(server: ScriptedServer) -> None:
    server.script = [Reply(body={"answer": "x", "evidence": {"context": CONTEXT}})]
    with pytest.raises(ArtifactError) as err:
        run(adapter(server.url, artifacts={"retrieval/v1": "evidence.retrieval"}))
    assert str(err.value) == (
        "case 'money_back': response has no field at 'evidence.retrieval' "
        "(found keys at 'evidence': context)"
    )


def test_missing_output_field(server: ScriptedServer) -> None:
    server.script = [Reply(body={"reply": "x"})]
    with pytest.raises(ArtifactError, match=r"no field at 'answer' \(found keys: reply\)"):
        run(adapter(server.url, artifacts={}))


def test_path_through_a_scalar_says_what_was_found(server: ScriptedServer) -> None:
    server.script = [Reply(body={"answer": "x", "evidence": "none"})]
    with pytest.raises(ArtifactError) as err:
        run(adapter(server.url, artifacts={"context/v1": "evidence.context"}))
    assert "no field at 'evidence.context' (found a string at 'evidence')" in str(err.value)


def test_malformed_artifact_names_case_path_kind_and_problem(server: ScriptedServer) -> None:
    body = {"answer": "x", "evidence": {"context": {"items": [{"position": 1}]}}}
    server.script = [Reply(body=body)]
    with pytest.raises(ArtifactError) as err:
        run(adapter(server.url, artifacts={"context/v1": "evidence.context"}))
    assert str(err.value) == (
        "case 'money_back': evidence.context is not a valid context/v1 artifact: "
        "items.0.doc_id: Field required"
    )


# A reply the server got wrong errors its case: each of these stopped the whole run (exit 2).


def test_response_that_is_not_an_object(server: ScriptedServer) -> None:
    server.script = [Reply(body=["a", "b"])]
    with pytest.raises(HttpSystemError) as err:
        run(adapter(server.url))
    assert str(err.value) == (
        f"case 'money_back': POST {server.url} answered HTTP 200 with JSON that is a list of 2, "
        'not an object: ["a", "b"]'
    )


def test_response_that_names_a_key_twice(server: ScriptedServer) -> None:
    server.script = [Reply(body=b'{"answer": "yes", "answer": "no"}')]
    with pytest.raises(
        HttpSystemError,
        match=r"answered HTTP 200 with ambiguous JSON: the key 'answer' appears twice in one",
    ):
        run(adapter(server.url))


def test_response_that_is_not_json(server: ScriptedServer) -> None:
    server.script = [Reply(body=b"<html>oops</html>")]
    with pytest.raises(HttpSystemError) as err:
        run(adapter(server.url))
    assert str(err.value) == (
        f"case 'money_back': POST {server.url} answered HTTP 200 with a body that is not JSON "
        "(Expecting value at line 1 column 1; Content-Type application/json): <html>oops</html>"
    )


@pytest.mark.parametrize(
    ("body", "found"),
    [
        (b"", "no body, so there is no output"),
        (b" \r\n ", "a body that is not JSON (Expecting value at line 2 column 2; Content-Type"),
    ],
)
def test_a_200_with_an_empty_body(server: ScriptedServer, body: bytes, found: str) -> None:
    server.script = [Reply(body=body)]
    with pytest.raises(HttpSystemError) as err:
        run(adapter(server.url, artifacts={}))
    assert f"answered HTTP 200 with {found}" in str(err.value)


def test_json_must_be_utf8_and_may_open_with_a_byte_order_mark(server: ScriptedServer) -> None:
    server.script = [Reply(body=b"\xef\xbb\xbf" + json.dumps(GOOD_BODY).encode())]
    assert run(adapter(server.url)).output == "Refunds take 5 days."
    server.script = [Reply(body=json.dumps(GOOD_BODY).encode("utf-16"))]
    with pytest.raises(HttpSystemError, match=r"not UTF-8 \(byte 0xff at offset 0\)"):
        run(adapter(server.url))
    server.script = [Reply(body=b'\xef\xbb\xbf{"answer": "caf\xe9"}')]
    with pytest.raises(HttpSystemError) as err:
        run(adapter(server.url, artifacts={}))
    assert str(err.value).endswith('not UTF-8 (byte 0xe9 at offset 18): {"answer": "caf\ufffd"}')


def test_a_body_cut_off_with_its_length_declared(server: ScriptedServer) -> None:
    # The length is what was sent: the JSON itself stops part way.
    server.script = [Reply(body=b'{"answer": ["Refunds take')]
    with pytest.raises(HttpSystemError, match=r"ends part way through its JSON \(25 bytes\): "):
        run(adapter(server.url, artifacts={}))


def test_an_unreadable_body_is_quoted_short(server: ScriptedServer) -> None:
    # What the parser reports is cut too: a key or a number may be the size of the body.
    key = "k" * 100_000
    bodies = [
        b"<p>" * 100_000,
        b'{"' + key.encode() + b'": 1, "' + key.encode() + b'": 2}',
        b'{"answer": 1' + b"0" * 100_000 + b"e999}",
    ]
    for body in bodies:
        server.script = [Reply(body=body)]
        with pytest.raises(HttpSystemError) as err:
            run(adapter(server.url, artifacts={}))
        assert len(str(err.value)) < 400, str(err.value)[:400]


# ------------------------------------------------------------------------------ retries


def test_429_with_retry_after_then_success(server: ScriptedServer) -> None:
    server.script = [
        Reply(status=429, body={"error": "slow down"}, headers={"Retry-After": "0.3"}),
        Reply(),
    ]
    execution = run(adapter(server.url, backoff_s=0.001, retries=2))
    assert execution.output == "Refunds take 5 days."
    assert len(server.seen) == 2
    # The server asked for 0.3 s; the configured backoff alone would have waited 1 ms.
    assert server.seen[1].at - server.seen[0].at >= 0.29


def test_503_twice_then_success_with_doubling_backoff(server: ScriptedServer) -> None:
    server.script = [Reply(status=503, body={}), Reply(status=503, body={}), Reply()]
    execution = run(adapter(server.url, backoff_s=0.05, retries=3))
    assert execution.output == "Refunds take 5 days."
    assert len(server.seen) == 3
    assert server.seen[1].at - server.seen[0].at >= 0.045
    assert server.seen[2].at - server.seen[1].at >= 0.095  # doubled


def test_always_500_errors_the_case_after_the_retries(server: ScriptedServer) -> None:
    server.script = [Reply(status=500, body={"error": "database is down"})]
    with pytest.raises(HttpSystemError) as err:
        run(adapter(server.url, retries=2))
    assert not isinstance(err.value, OloproofError)  # the engine records it as an errored case
    assert len(server.seen) == 3
    message = str(err.value)
    assert "case 'money_back'" in message
    assert "failed after 3 tries" in message
    assert "HTTP 500" in message and "database is down" in message


def test_no_retries_means_one_try(server: ScriptedServer) -> None:
    server.script = [Reply(status=502, body={})]
    with pytest.raises(HttpSystemError, match="failed after 1 try: HTTP 502"):
        run(adapter(server.url, retries=0))
    assert len(server.seen) == 1


def test_other_4xx_errors_immediately_with_status_and_excerpt(server: ScriptedServer) -> None:
    server.script = [Reply(status=422, body={"detail": "question is required " + "x" * 500})]
    with pytest.raises(HttpSystemError) as err:
        run(adapter(server.url, retries=3))
    assert len(server.seen) == 1
    message = str(err.value)
    assert "HTTP 422" in message and "question is required" in message
    assert len(message) < 400  # a short excerpt, not the whole body


def test_the_excerpt_is_not_cut_inside_a_secret(
    server: ScriptedServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The excerpt ended 8 characters into the echoed token: the stored and printed message
    # kept those 8, since redaction (where events are made) only knows the whole token.
    token = "s3cret-" + "t" * 40
    monkeypatch.setenv("SUPPORT_API_TOKEN", token)
    body = b"refused: " + b"." * 176 + b"Bearer " + token.encode() + b" is not accepted"
    server.script = [Reply(status=403, body=body, headers={"Content-Type": "text/plain"})]
    try:
        with pytest.raises(HttpSystemError) as err:
            run(adapter(server.url, headers={"Authorization": "Bearer ${SUPPORT_API_TOKEN}"}))
    finally:
        redaction.forget_all()
    assert str(err.value).endswith("." * 176 + "Bearer …")
    assert token[:8] not in str(err.value)


def test_connection_refused_errors_after_the_retries() -> None:
    url = f"http://127.0.0.1:{free_port()}/answer"
    with pytest.raises(HttpSystemError) as err:
        run(adapter(url, retries=2, backoff_s=0.001))
    assert not isinstance(err.value, OloproofError)
    assert "failed after 3 tries" in str(err.value)
    assert "ConnectError" in str(err.value)


def test_timeout_is_retried_then_errors(server: ScriptedServer) -> None:
    server.script = [Reply(delay_s=0.5)]
    with pytest.raises(HttpSystemError, match=r"failed after 2 tries: no response within 0.1 s"):
        run(adapter(server.url, retries=1, timeout_s=0.1))


def test_a_reply_that_trickles_in_past_the_timeout_is_a_timeout(server: ScriptedServer) -> None:
    # Each byte comes within the timeout; the whole reply does not. It was recorded as an answer.
    server.script = [Reply(trickle_s=0.05)]
    started = time.monotonic()
    with pytest.raises(HttpSystemError, match=r"failed after 1 try: no response within 0.5 s"):
        run(adapter(server.url, retries=0, timeout_s=0.5))
    assert time.monotonic() - started < 0.5 * len(json.dumps(GOOD_BODY)) * 0.05


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
def test_a_redirect_is_an_errored_case_not_an_answer(server: ScriptedServer, status: int) -> None:
    # Its body was read as the system's answer before.
    server.script = [Reply(status=status, headers={"Location": "http://example.com/x"})]
    with pytest.raises(HttpSystemError) as err:
        run(adapter(server.url, retries=2))
    assert len(server.seen) == 1
    assert str(err.value) == (
        f"case 'money_back': POST {server.url} answered HTTP {status}, a redirect to "
        "http://example.com/x, which is not followed: set url to the endpoint itself"
    )


@pytest.mark.parametrize("declared", [True, False])
def test_a_reply_beyond_the_size_limit_errors_the_case(
    server: ScriptedServer, monkeypatch: pytest.MonkeyPatch, declared: bool
) -> None:
    # A runaway reply was read whole (a 400 MB body took 1.3 GB of memory). The limit is
    # lowered here so that the test sends kilobytes, with and without a declared length.
    monkeypatch.setattr(http, "MAX_RESPONSE_BYTES", 1000)
    server.script = [Reply(body={"answer": "x" * 5000}, length=declared)]
    with pytest.raises(HttpSystemError, match=r"answered with more than 1,000 bytes"):
        run(adapter(server.url, retries=0))
    server.script = [Reply(body={"answer": "x" * 900}, length=declared)]
    assert run(adapter(server.url, retries=0, artifacts={})).output == "x" * 900


def test_no_content_is_an_errored_case(server: ScriptedServer) -> None:
    # It stopped the whole run as "not JSON".
    server.script = [Reply(status=204, body=b"")]
    with pytest.raises(HttpSystemError, match=r"answered HTTP 204 with no body, so there is no"):
        run(adapter(server.url))


def test_timeout_then_success(server: ScriptedServer) -> None:
    # The timeout is long beside a loaded machine's prompt reply, short beside the hang.
    server.script = [Reply(delay_s=4.0), Reply()]
    execution = run(adapter(server.url, retries=1, timeout_s=1.0))
    assert execution.output == "Refunds take 5 days."


# --------------------------------------------------------------------------- headers


def test_env_headers_are_substituted_and_kept_out_of_identity(
    server: ScriptedServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SUPPORT_API_TOKEN", "s3cret-token-value")
    system = adapter(
        server.url,
        headers={"Authorization": "Bearer ${SUPPORT_API_TOKEN}", "X-Team": "search"},
    )
    identity = system.identity()
    run(system)

    assert server.seen[0].headers["Authorization"] == "Bearer s3cret-token-value"
    assert server.seen[0].headers["X-Team"] == "search"
    assert identity == {
        "kind": "http",
        "name": "support-api",
        "version": "1",
        "url": server.url,
        "output_path": "answer",
        "artifacts": ARTIFACTS,
    }
    dumped = json.dumps(identity)
    assert "s3cret" not in dumped and "SUPPORT_API_TOKEN" not in dumped
    assert "Authorization" not in dumped and "search" not in dumped


def test_env_header_is_read_at_call_time(
    server: ScriptedServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SUPPORT_API_TOKEN", raising=False)
    system = adapter(server.url, headers={"Authorization": "Bearer ${SUPPORT_API_TOKEN}"})
    monkeypatch.setenv("SUPPORT_API_TOKEN", "later-token")
    run(system)
    assert server.seen[0].headers["Authorization"] == "Bearer later-token"


def test_missing_env_var_is_a_config_error_naming_header_and_variable(
    server: ScriptedServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SUPPORT_API_TOKEN", raising=False)
    monkeypatch.setenv("OTHER_SECRET", "do-not-print")
    system = adapter(
        server.url,
        headers={"X-Other": "${OTHER_SECRET}", "Authorization": "Bearer ${SUPPORT_API_TOKEN}"},
    )
    with pytest.raises(ConfigError) as err:
        run(system)
    message = str(err.value)
    assert message == (
        "oloproof.http.yaml: system.http.headers.Authorization: "
        "environment variable SUPPORT_API_TOKEN is not set"
    )
    assert "do-not-print" not in message
    assert server.seen == []  # nothing was sent


def test_an_env_value_no_header_can_carry_is_a_config_error_without_the_value(
    server: ScriptedServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SUPPORT_API_TOKEN", "do-not-print\r\nX-Injected: yes")
    system = adapter(server.url, headers={"Authorization": "Bearer ${SUPPORT_API_TOKEN}"})
    with pytest.raises(ConfigError) as err:
        run(system)
    assert str(err.value) == (
        "oloproof.http.yaml: system.http.headers.Authorization: environment variable "
        "SUPPORT_API_TOKEN holds a line break, which an HTTP header cannot carry"
    )
    assert server.seen == []  # nothing was sent


# ------------------------------------------------------------------------ configuration


@pytest.mark.parametrize(
    ("settings", "expected"),
    [
        ({"url": "localhost:8000/answer"}, "system.http.url: expected an http:// or https:// URL"),
        ({"url": "ftp://example.com/x"}, "system.http.url: expected an http:// or https:// URL"),
        (
            {"url": "http://127.0.0.1/", "artifacts": {"retrieval/v9": "r"}},
            "system.http.artifacts: unknown artifact kind 'retrieval/v9'",
        ),
        (
            {"url": "http://127.0.0.1/", "output_path": "a..b"},
            "system.http.output_path: 'a..b' is not a dotted path",
        ),
        (
            {"url": "http://127.0.0.1/", "artifacts": {"context/v1": ""}},
            "system.http.artifacts.context/v1: '' is not a dotted path",
        ),
    ],
)
def test_bad_settings_are_config_errors(settings: dict[str, Any], expected: str) -> None:
    with pytest.raises(ConfigError) as err:
        HttpSystemAdapter(
            name="s",
            version="1",
            settings=HttpSystem(**settings),
            where="oloproof.yaml",
            concurrency=2,
        )
    assert str(err.value).startswith("oloproof.yaml: ")
    assert expected in str(err.value)


def test_aclose_without_use_and_twice() -> None:
    system = adapter("http://127.0.0.1:9/answer")

    async def go() -> None:
        await system.aclose()
        await system.aclose()

    asyncio.run(go())


def test_an_output_may_nest_as_deep_below_its_path_as_a_callables_may(
    server: ScriptedServer,
) -> None:
    # The limit is the output's, counted below where it is read: the body's own levels above
    # output_path do not take any from it. One level more is refused.
    deepest: Any = "bottom"
    for _ in range(MAX_NESTING):
        deepest = [deepest]
    assert plain_output(deepest) == deepest  # what a callable system may return
    server.script = [
        Reply(body={"choices": [{"message": {"content": output}}]})
        for output in (deepest, [deepest])
    ]
    system = adapter(server.url, output_path="choices.0.message.content", artifacts={})
    assert run(system).output == deepest
    with pytest.raises(HttpSystemError, match="nested deeper than"):
        run(system)


def test_an_output_one_level_too_deep_errors_its_case_below_a_long_path(
    server: ScriptedServer,
) -> None:
    # Four levels of envelope (an object, a list, two objects): the body may nest 104 levels,
    # and its 105 are refused as the case's error (not left to stop the run when the output is
    # recorded).
    output: Any = "bottom"
    for _ in range(MAX_NESTING + 1):
        output = [output]
    server.script = [Reply(body={"choices": [{"message": {"content": output}}]})]
    system = adapter(server.url, output_path="choices.0.message.content", artifacts={})
    with pytest.raises(HttpSystemError, match=f"nested deeper than {MAX_NESTING + 4} levels"):
        run(system)
