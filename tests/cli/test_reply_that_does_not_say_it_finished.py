"""A reply that does not say why it ended (``finish_reason`` null, absent or empty, an
Anthropic ``stop_reason`` null) is not taken as the model's whole answer, through the real CLI.

A non-streaming reply always says why it ended: OpenAI's, vLLM's, llama.cpp's and Ollama's
servers give ``stop`` (or ``length``, ``tool_calls``), Anthropic's gives ``end_turn``; its
API reference says the field is non-null in non-streaming mode. Only a stream's chunks carry
``null`` until the last, so a body with none is one a proxy joined from a stream cut before
its end. The real HTTP server on 127.0.0.1 below sends such bodies, each holding a well-formed
pass verdict (or an answer "Paris") as its text. Before: the verdicts were read, 5 / 5 passed,
and each model system's answer recorded and passed its check. Now the judgment is missing
(``judge_reply_incomplete``) and the case errored, with a sentence saying the reply does not
say it finished; an execution a release reading such a reply as finished cached is made again,
not served (``REPLIES`` 5).
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


def without_finish(body: dict[str, Any]) -> dict[str, Any]:
    del body["choices"][0]["finish_reason"]
    return body


REPLIES: dict[str, dict[str, Any]] = {
    "good": chat(),
    "null": chat(None),  # type: ignore[arg-type]
    "absent": without_finish(chat()),
    "empty": chat(""),
    "a_good": messages(),
    "a_null": messages(None),  # type: ignore[arg-type]
}
UNFINISHED = (
    "the reply does not say why it ended (finish_reason {}), as a non-streaming reply does: "
    "it is a stream joined before its end, not the model's whole answer"
)
SAID = {
    "null": UNFINISHED.format("null"),
    "absent": UNFINISHED.format("absent"),
    "empty": UNFINISHED.format('""'),
    "a_null": UNFINISHED.format("null").replace("finish_reason", "stop_reason"),
}


def scripted(request: RecordedRequest) -> Reply:
    found = re.search(r"MODE:(\w+)", request.user_message)
    assert found is not None
    return raw(json.dumps(REPLIES[found[1]]), content_type="application/json")


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_judge_reply_that_does_not_say_it_finished_gives_no_verdict(
    tmp_path: Path, provider: str
) -> None:
    kinds = [kind for kind in REPLIES if kind.startswith("a_") == (provider == "anthropic")]
    with ScriptedJudgeServer(default=scripted) as server:
        base = server.anthropic_base_url if provider == "anthropic" else server.openai_base_url
        cases = [case(kind, f"Notes sync every five minutes. MODE:{kind}") for kind in kinds]
        root = write_project(tmp_path / "p", base, cases, provider=provider, max_retries=0)
        done = run(root, "run")
        assert done.code == 0, done.out + done.err
        said = {kind: said_of(judgment_of(root, kind)) for kind in kinds}
    # Before: every one a pass.
    expected = {
        kind: f"judge_reply_incomplete: {SAID[kind]}, so no verdict is read from it"
        for kind in kinds
        if kind in SAID
    }
    assert said == {"good" if provider == "openai" else "a_good": "pass", **expected}


class Unfinished(QuietHandler):
    def do_POST(self) -> None:
        request = self.rfile.read(int(self.headers["Content-Length"]))
        found = re.search(rb"MODE:(\w+)", request)
        assert found is not None
        body = dict(REPLIES[found[1].decode()])
        if "choices" in body:
            choice = {**body["choices"][0], "message": {"role": "assistant", "content": "Paris."}}
            body["choices"] = [choice]
        else:
            body["content"] = [{"type": "text", "text": "Paris."}]
        self.reply(200, json.dumps(body).encode())


@pytest.fixture
def base() -> Iterator[str]:
    with http_server(Unfinished) as url:
        yield url


def test_a_model_reply_that_does_not_say_it_finished_errors_its_case(
    tmp_path: Path, base: str
) -> None:
    root = project(tmp_path / "p", base, "openai", ["good", "null", "absent", "empty"])
    done = oloproof("run", cwd=root)
    # Before: 4 / 4 observed, every answer recorded and passed.
    assert done.code == 3, done.out + done.err
    assert "1 / 1 observed · 3 missing" in done.out, done.out
    what = f"openai model m at {base}/v1/chat/completions: "
    taken = ", so it is not taken as the model's answer"
    assert errors(root) == {
        kind: f"{what}{SAID[kind]}{taken}" for kind in ("null", "absent", "empty")
    }

    root = project(tmp_path / "a", base, "anthropic", ["a_good", "a_null"])
    done = oloproof("run", cwd=root)
    assert done.code == 3, done.out + done.err
    what = f"anthropic model m at {base}/v1/messages: "
    assert errors(root) == {"a_null": f"{what}{SAID['a_null']}{taken}"}


# A release that read a reply without a finish reason as finished.
EARLIER_RELEASE = """
from oloproof import models
from oloproof.providers import openai_chat

models.REPLIES = 4
openai_chat.unfinished = lambda key, data: None
from oloproof.cli.main import main

main()
"""


def test_an_execution_an_earlier_reading_cached_is_made_again(tmp_path: Path, base: str) -> None:
    root = project(tmp_path / "p", base, "openai", ["good", "null", "absent", "empty"])
    earlier = oloproof("run", cwd=root, command=("-c", EARLIER_RELEASE))
    assert "4 / 4 observed · 0 missing" in earlier.out, earlier.out + earlier.err
    done = oloproof("run", cwd=root)
    # Not "Cache: execution 4 hit/0 miss", the unfinished answers served and passed again.
    assert "Cache: execution 0 hit/4 miss" in done.out, done.out
    assert "1 / 1 observed · 3 missing" in done.out, done.out
