"""What ``ScriptedJudgeServer`` recorded prints without the API key it was sent.

The probe: a test that points ``ModelClient`` (or a judge) at the scripted server, with the key
its environment holds, and asserts on ``server.requests``; when the assertion failed, pytest
printed the requests' ``repr``, and with it ``'authorization': 'Bearer sk-…'``, the real key,
into the CI log (so for a client sending it as ``x-api-key`` or ``api-key``). The ``repr`` now shows ``[redacted]`` for a
credential header's value; ``headers`` still holds what was sent, for a test to check.
"""

from __future__ import annotations

import httpx
import pytest

from oloproof import ModelClient
from oloproof.testing import ScriptedJudgeServer, answer

KEY = "sk-live-NOT-FOR-LOGS-4471"


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_recorded_request_prints_without_its_key(
    monkeypatch: pytest.MonkeyPatch, provider: str
) -> None:
    monkeypatch.setenv("SCRIPTED_TEST_KEY", KEY)
    with ScriptedJudgeServer(answer("hello")) as server:
        base_url = server.openai_base_url if provider == "openai" else server.anthropic_base_url
        client = ModelClient(
            provider=provider, model="m", base_url=base_url, api_key_env="SCRIPTED_TEST_KEY"
        )
        assert client.complete("hi") == "hello"
    (request,) = server.requests
    assert request.headers["authorization"] == f"Bearer {KEY}"
    shown = repr(server.requests)
    assert KEY not in shown
    assert "'authorization': '[redacted]'" in shown
    assert "'content-type': 'application/json'" in shown  # the others as sent
    assert "RecordedRequest(method='POST', path='/v1/" in shown


def test_a_key_in_another_credential_header_is_hidden_too() -> None:
    sent = {"x-api-key": KEY, "api-key": KEY, "proxy-authorization": f"Basic {KEY}", "x-probe": "1"}
    with ScriptedJudgeServer(answer("hello")) as server:
        httpx.post(server.url + "/v1/messages", json={"model": "m"}, headers=sent, timeout=5)
    (request,) = server.requests
    assert request.headers["x-api-key"] == KEY
    shown = repr(request)
    assert KEY not in shown and "'x-probe': '1'" in shown
