"""A model system's reply that says it is not the model's whole answer, through the real CLI.

A server on 127.0.0.1 answers as the OpenAI and Anthropic APIs do on their bad days, picking
each reply from the ``MODE:<kind>`` the prompt carries. What a model system used to do with
them:

- A reply cut at the token limit (``finish_reason: length``, ``stop_reason: max_tokens``) was
  recorded as the case's output and judged as whole: "The capital of France is Paris, which"
  passed, and the next run served it from the cache as a good answer without asking again.
- A reply the server's content filter cut, one the model refused (``stop_reason: refusal``),
  one that stops to call a tool (``tool_calls``, ``tool_use``) and one the server paused
  (``pause_turn``) were recorded and judged as answers, whatever part of a text they held.
- A reply of two choices (``n: 2``) was recorded as its first, the other dropped unsaid.
- A refusal or a tool call without text, a 200 whose body is an error object and a streamed
  (SSE) body were errored, but as "the reply is not a chat-completions response", with no word
  of the refusal, the tool call, the server's error or the stream.

Now each such case is errored with a sentence saying what the reply is, so it counts as
missing, is never taken from the cache, and is asked again by the next run.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from tests.support import QuietHandler, http_server, oloproof

CUT = "The capital of France is Paris, which"


def chat(content: str | None, finish: str = "stop", **message: Any) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "model": "m",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content, **message},
                "finish_reason": finish,
            }
        ],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5},
    }


def messages(blocks: list[dict[str, Any]], stop: str = "end_turn") -> dict[str, Any]:
    return {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "m",
        "content": blocks,
        "stop_reason": stop,
        "usage": {"input_tokens": 10, "output_tokens": 5},
    }


def text(value: str) -> dict[str, str]:
    return {"type": "text", "text": value}


TOOL_CALL = {"id": "t1", "type": "function", "function": {"name": "look_up", "arguments": "{}"}}
TOOL_USE = {"type": "tool_use", "id": "t1", "name": "look_up", "input": {}}
THINKING = {"type": "thinking", "thinking": "London? No: Paris.", "signature": "s"}
TWO_CHOICES = chat("London.")
TWO_CHOICES["choices"].append(
    {"index": 1, "message": {"role": "assistant", "content": "Paris."}, "finish_reason": "stop"}
)
OPENAI: dict[str, dict[str, Any]] = {
    "good": chat("Paris."),
    "length": chat(CUT, "length"),
    "content_filter": chat("The capital is Paris", "content_filter"),
    "tool_calls_with_text": chat("Let me look up Paris", "tool_calls", tool_calls=[TOOL_CALL]),
    "tool_calls": chat(None, "tool_calls", tool_calls=[TOOL_CALL]),
    "refusal": chat(None, refusal="I can't help with that."),
    "two_choices": TWO_CHOICES,
    "error_200": {"error": {"message": "upstream model overloaded", "type": "server_error"}},
}
ANTHROPIC: dict[str, dict[str, Any]] = {
    "a_good": messages([THINKING, text("Paris.")]),
    "a_max_tokens": messages([text(CUT)], "max_tokens"),
    "a_refusal": messages([text("Paris")], "refusal"),
    "a_tool_use": messages([text("Let me check Paris"), TOOL_USE], "tool_use"),
    "a_pause_turn": messages([text("Paris")], "pause_turn"),
}
STREAM = (
    b'data: {"id":"c","choices":[{"index":0,"delta":{"content":"Paris."},"finish_reason":null}]}'
    b"\n\ndata: [DONE]\n\n"
)


class BadDay(QuietHandler):
    def do_POST(self) -> None:
        request = self.rfile.read(int(self.headers["Content-Length"]))
        found = re.search(rb"MODE:(\w+)", request)
        assert found is not None
        kind = found[1].decode()
        if kind == "stream":
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Content-Length", str(len(STREAM)))
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(STREAM)
            return
        self.reply(200, json.dumps({**OPENAI, **ANTHROPIC}[kind]).encode())


@pytest.fixture
def base() -> Iterator[str]:
    with http_server(BadDay) as url:
        yield url


def project(root: Path, base: str, provider: str, kinds: list[str]) -> Path:
    """One case per kind, its answer checked for "Paris"; the rule needs every case."""
    root.mkdir()
    cases = [
        {"id": kind, "input": {"question": f"MODE:{kind}"}, "expected": {"answer": "Paris"}}
        for kind in kinds
    ]
    (root / "cases.jsonl").write_text("".join(json.dumps(case) + "\n" for case in cases))
    (root / "policy.yaml").write_text(
        "version: 1\nrules:\n  - {id: c, metric: correct, min: 0.5}\n"
    )
    model = {
        "provider": provider,
        "model": "m",
        "base_url": f"{base}/v1" if provider == "openai" else base,
        "api_key_env": None,
        "prompt": "Answer: {{ question }}",
        "max_retries": 0,
        "max_tokens": 50,
    }
    config = {
        "system": {"name": "capitals", "version": "1", "model": model},
        "dataset": "cases.jsonl",
        "policy": "policy.yaml",
        "evaluators": [{"type": "contains", "criterion": "correct", "expected_field": "answer"}],
    }
    (root / "oloproof.yaml").write_text(yaml.safe_dump(config))
    return root


def errors(root: Path) -> dict[str, str]:
    """Each failed case's error message, by case id (None for a case judged a fail)."""
    shown = oloproof("inspect", "latest", "--failures", "--json", cwd=root)
    assert shown.code == 0, shown.err
    failed = json.loads(shown.out)["failed"]
    assert all(case["status"] == "errored" for case in failed), failed
    return {case["case_id"]: case["error"]["message"] for case in failed}


def test_an_openai_reply_that_is_not_a_whole_answer_errors_its_case(
    tmp_path: Path, base: str
) -> None:
    kinds = [*OPENAI, "stream"]
    root = project(tmp_path / "p", base, "openai", kinds)
    done = oloproof("run", cwd=root)
    assert done.code == 3, done.out + done.err
    assert "Traceback" not in done.err
    assert f"1 / 1 observed · {len(kinds) - 1} missing" in done.out, done.out
    what = f"openai model m at {base}/v1/chat/completions: "
    not_read = "the reply is not a chat-completions response"
    expected = {
        "length": "the reply was cut at the token limit (finish_reason length; max_tokens sets "
        "it), so it is not taken as the model's answer",
        "content_filter": "the server's content filter cut or withheld the reply "
        "(finish_reason content_filter), so it is not taken as the model's answer",
        "tool_calls_with_text": "the model asked to call a tool instead of answering "
        "(finish_reason tool_calls), so it is not taken as the model's answer",
        "two_choices": "the reply holds 2 choices (is n set in extra_body?), and Oloproof "
        "records one answer, so it is not taken as the model's answer",
        "tool_calls": f"{not_read} (the reply has no text content: the model asked to call a "
        "tool instead of answering)",
        "refusal": f"{not_read} (the reply has no text content: the model refused: "
        "I can't help with that.)",
        "error_200": f"{not_read} (the body is an error: upstream model overloaded)",
        "stream": f"{not_read} (the body is not JSON; its Content-Type is text/event-stream, "
        "a streamed reply, which Oloproof does not ask for)",
    }
    assert errors(root) == {kind: what + why for kind, why in expected.items()}

    again = oloproof("run", cwd=root)
    assert again.code == 3, again.out + again.err
    # The cut reply is asked for again, never served from the cache as an answer.
    assert f"Cache: execution 1 hit/{len(kinds) - 1} miss; judgment 1 hit/0 miss" in again.lines


def test_an_anthropic_reply_that_is_not_a_whole_answer_errors_its_case(
    tmp_path: Path, base: str
) -> None:
    root = project(tmp_path / "p", base, "anthropic", list(ANTHROPIC))
    done = oloproof("run", cwd=root)
    assert done.code == 3, done.out + done.err
    assert "1 / 1 observed · 4 missing" in done.out, done.out
    what = f"anthropic model m at {base}/v1/messages: "
    expected = {
        "a_max_tokens": "the reply was cut at the token limit (stop_reason max_tokens; "
        "max_tokens sets it)",
        "a_refusal": "the model refused to answer (stop_reason refusal)",
        "a_tool_use": "the model asked to call a tool instead of answering (stop_reason tool_use)",
        "a_pause_turn": "the server paused the model's turn before it ended "
        "(stop_reason pause_turn)",
    }
    assert errors(root) == {
        kind: f"{what}{why}, so it is not taken as the model's answer"
        for kind, why in expected.items()
    }
    shown = oloproof("inspect", "latest", "--case", "a_good", "--json", cwd=root)
    # The thinking block is not the answer: only the text is.
    assert json.loads(shown.out)["output"] == "Paris."


# An earlier release: a reply was taken whole whatever it said of itself, and the system's
# identity did not say how replies are read.
EARLIER_RELEASE = """
from oloproof.providers._http import HttpProvider
from oloproof.systems.model import ModelSystem

HttpProvider.answer = lambda self, completion: completion
today = ModelSystem.identity
ModelSystem.identity = lambda self: {k: v for k, v in today(self).items() if k != "replies"}
from oloproof.cli.main import main

main()
"""


def test_a_cut_reply_an_earlier_release_cached_is_asked_again(tmp_path: Path, base: str) -> None:
    root = project(tmp_path / "p", base, "openai", ["good", "length"])
    earlier = oloproof("run", cwd=root, command=("-c", EARLIER_RELEASE))
    # The cut reply passed, as a whole (two cases are too few for the rule to decide).
    assert "[DECIDED/COMPLETE]" in earlier.lines[0], earlier.out + earlier.err
    assert "│ correct │ 100.0%   │" in earlier.out and "2 / 2 observed · 0 missing" in earlier.out
    done = oloproof("run", cwd=root)
    # Was: `Cache: execution 2 hit/0 miss`, the cut reply served and passed again.
    assert "Cache: execution 0 hit/2 miss; judgment 0 hit/1 miss" in done.lines, done.out
    assert set(errors(root)) == {"length"}
