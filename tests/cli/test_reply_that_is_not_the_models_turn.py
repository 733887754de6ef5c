"""A body that says it is not the model's reply (an Anthropic body of ``"type": "error"``, a
message whose role is ``user``) is no reply, through the real CLI.

The real HTTP server on 127.0.0.1 below answers 200 with bodies holding a well-formed pass
verdict as their text, but saying they are something else: ``"type": "error"`` beside the
content (without an ``error`` object, which was already refused), or a message of role
``user`` (a proxy echoing the request's turn back, as in the Anthropic and OpenAI shapes).
Before: each was read as the judge's reply, 4 / 4 passed, and a model system's answer so sent
was recorded and passed its check. Now each is a failed call (``judge_malformed_response``, an
errored case) whose sentence says what the body is.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.cli.test_judge_failures import case, judgment_of, run, said_of, write_project
from tests.cli.test_judge_replies_not_whole import chat, messages
from tests.cli.test_model_replies_not_whole import errors, project
from tests.support import QuietHandler, http_server, oloproof

from oloproof.testing import RecordedRequest, Reply, ScriptedJudgeServer, raw

REPLIES: dict[str, dict[str, Any]] = {
    "good": chat(),
    "user": chat(message={"role": "user"}),
    "a_good": messages(),
    "a_type_error": messages(type="error"),
    "a_user": messages(role="user"),
}
SAID = {
    "user": 'choices[0].message.role is "user", not "assistant": the body holds no reply of '
    "the model's",
    "a_type_error": 'type is "error", not "message": the body says it is not a reply',
    "a_user": 'role is "user", not "assistant": the body holds no reply of the model\'s',
}


def scripted(request: RecordedRequest) -> Reply:
    found = re.search(r"MODE:(\w+)", request.user_message)
    assert found is not None
    return raw(json.dumps(REPLIES[found[1]]), content_type="application/json")


def not_read(provider: str, url: str, kind: str, model: str) -> str:
    protocol = "messages" if provider == "anthropic" else "chat-completions"
    return (
        f"{provider} model {model} at {url}: the reply is not a {protocol} response ({SAID[kind]})"
    )


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_judge_reply_that_is_not_the_models_turn_gives_no_verdict(
    tmp_path: Path, provider: str
) -> None:
    kinds = [kind for kind in REPLIES if kind.startswith("a_") == (provider == "anthropic")]
    with ScriptedJudgeServer(default=scripted) as server:
        base = server.anthropic_base_url if provider == "anthropic" else server.openai_base_url
        url = base + ("/v1/messages" if provider == "anthropic" else "/chat/completions")
        cases = [case(kind, f"Notes sync every five minutes. MODE:{kind}") for kind in kinds]
        root = write_project(tmp_path / "p", base, cases, provider=provider, max_retries=0)
        done = run(root, "run")
        assert done.code == 0, done.out + done.err
        said = {kind: said_of(judgment_of(root, kind)) for kind in kinds}
    # Before: every one a pass.
    expected = {
        kind: "judge_malformed_response: " + not_read(provider, url, kind, "small-local-model")
        for kind in kinds
        if kind in SAID
    }
    assert said == {"good" if provider == "openai" else "a_good": "pass", **expected}


class NotTheModel(QuietHandler):
    def do_POST(self) -> None:
        request = self.rfile.read(int(self.headers["Content-Length"]))
        found = re.search(rb"MODE:(\w+)", request)
        assert found is not None
        body = json.loads(json.dumps(REPLIES[found[1].decode()]))
        if "choices" in body:
            body["choices"][0]["message"]["content"] = "Paris."
        else:
            body["content"] = [{"type": "text", "text": "Paris."}]
        self.reply(200, json.dumps(body).encode())


@pytest.fixture
def base() -> Iterator[str]:
    with http_server(NotTheModel) as url:
        yield url


def test_a_model_reply_that_is_not_the_models_turn_errors_its_case(
    tmp_path: Path, base: str
) -> None:
    root = project(tmp_path / "p", base, "openai", ["good", "user"])
    done = oloproof("run", cwd=root)
    # Before: 2 / 2 observed, the answer in the user's turn recorded and passed.
    assert "1 / 1 observed · 1 missing" in done.out, done.out
    url = f"{base}/v1/chat/completions"
    assert errors(root) == {"user": not_read("openai", url, "user", "m")}

    root = project(tmp_path / "a", base, "anthropic", ["a_good", "a_type_error", "a_user"])
    done = oloproof("run", cwd=root)
    assert "1 / 1 observed · 2 missing" in done.out, done.out
    url = f"{base}/v1/messages"
    assert errors(root) == {
        kind: not_read("anthropic", url, kind, "m") for kind in ("a_type_error", "a_user")
    }
