"""A model system's reply that holds more than the model's whole answer, through the real CLI.

A server on 127.0.0.1 answers as the OpenAI and Anthropic APIs (and servers copying them) do
on bad days, picking each reply from the ``MODE:<kind>`` the prompt carries. What a model
system used to do with them:

- A 200 whose body holds a reply *and* the server's error object (``choices`` or ``content``
  beside ``error``, or an ``error`` in the choice, as proxies passing on what came before an
  upstream failure send): the text was recorded as the answer, judged and cached; the error was
  never read.
- A reply whose message asks for a tool call while its finish reason says ``stop`` (servers
  that do not set ``tool_calls``), or whose content holds a ``tool_use`` block while its stop
  reason says ``end_turn``: the text before the call was taken as the whole answer.
- A reply DeepSeek's API interrupted (``finish_reason: insufficient_system_resource``): the
  part that arrived was taken as the whole answer.
- A reply without text because the model spent its token limit before answering (a reasoning
  model's ``content: null`` with ``finish_reason: length``): errored, but only as "the reply
  has no text content", with no word of the limit that caused it. So were an empty
  ``choices`` and a stream of server-sent events sent as ``application/json``.

Now each such case is errored with a sentence saying what the reply is.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.cli.test_model_replies_not_whole import (
    TOOL_CALL,
    TOOL_USE,
    chat,
    errors,
    messages,
    project,
    text,
)
from tests.support import QuietHandler, http_server, oloproof

OVERLOADED = {"message": "upstream model overloaded", "type": "server_error"}

STREAM = (
    b'data: {"id":"c","choices":[{"index":0,"delta":{"content":"Paris."}}]}\n\ndata: [DONE]\n\n'
)
REPLIES: dict[str, dict[str, Any] | bytes] = {
    "good": chat("Paris."),
    "error_beside": {**chat("Paris."), "error": OVERLOADED},
    "tool_calls_on_stop": chat("Paris, let me check", tool_calls=[TOOL_CALL]),
    "reasoned_past_the_limit": chat(None, "length", reasoning_content="Paris? Or"),
    "interrupted": chat("Paris", "insufficient_system_resource"),
    "no_choices": {**chat("Paris."), "choices": []},
    "stream_said_to_be_json": STREAM,
    "a_good": messages([text("Paris.")]),
    "a_error_beside": {**messages([text("Paris.")]), "error": OVERLOADED},
    "a_tool_use_on_end_turn": messages([text("Paris, let me check"), TOOL_USE]),
}

CHOICE_ERROR = chat("Paris, and")
CHOICE_ERROR["choices"][0]["error"] = OVERLOADED
REPLIES["choice_error"] = CHOICE_ERROR


class BadDay(QuietHandler):
    def do_POST(self) -> None:
        request = self.rfile.read(int(self.headers["Content-Length"]))
        found = re.search(rb"MODE:(\w+)", request)
        assert found is not None
        body = REPLIES[found[1].decode()]
        self.reply(200, body if isinstance(body, bytes) else json.dumps(body).encode())


@pytest.fixture
def base() -> Iterator[str]:
    with http_server(BadDay) as url:
        yield url


def test_an_openai_reply_beside_an_error_or_a_tool_call_errors_its_case(
    tmp_path: Path, base: str
) -> None:
    kinds = [kind for kind in REPLIES if not kind.startswith("a_")]
    root = project(tmp_path / "p", base, "openai", kinds)
    done = oloproof("run", cwd=root)
    assert done.code == 3, done.out + done.err
    # Before: 6 / 6 observed · 2 missing; the answers beside the errors and the tool call, and
    # the one the server interrupted, passed.
    assert "1 / 1 observed · 7 missing" in done.out, done.out
    what = f"openai model m at {base}/v1/chat/completions: "
    not_read = "the reply is not a chat-completions response"
    assert errors(root) == {
        "error_beside": f"{what}{not_read} (the body holds the server's error beside the reply: "
        "upstream model overloaded)",
        "choice_error": f"{what}{not_read} (choices[0] holds the server's error: upstream model "
        "overloaded)",
        "tool_calls_on_stop": f"{what}the model asked to call a tool instead of answering "
        "(choices[0].message.tool_calls), so it is not taken as the model's answer",
        "interrupted": f"{what}the server interrupted the reply for want of resources "
        "(finish_reason insufficient_system_resource), so it is not taken as the model's answer",
        # These two were errored before, but without saying why.
        "no_choices": f"{what}{not_read} (choices is not a list of at least one choice)",
        "stream_said_to_be_json": f"{what}{not_read} (the body is not JSON; it is a stream of "
        "server-sent events (data: lines), which Oloproof does not ask for)",
        "reasoned_past_the_limit": f"{what}{not_read} (the reply has no text content: the reply "
        "was cut at the token limit (finish_reason length; max_tokens sets it))",
    }


def test_an_anthropic_reply_beside_an_error_or_a_tool_call_errors_its_case(
    tmp_path: Path, base: str
) -> None:
    kinds = [kind for kind in REPLIES if kind.startswith("a_")]
    root = project(tmp_path / "p", base, "anthropic", kinds)
    done = oloproof("run", cwd=root)
    assert done.code == 3, done.out + done.err
    # Before: 3 / 3 observed, the answers beside the error and the tool call passed.
    assert "1 / 1 observed · 2 missing" in done.out, done.out
    what = f"anthropic model m at {base}/v1/messages: "
    assert errors(root) == {
        "a_error_beside": f"{what}the reply is not a messages response (the body holds the "
        "server's error beside the reply: upstream model overloaded)",
        "a_tool_use_on_end_turn": f"{what}the model asked to call a tool instead of answering "
        "(a tool_use block), so it is not taken as the model's answer",
    }
