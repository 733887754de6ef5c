"""The model calls a case made before it errored are kept with it, through the real CLI.

A server on 127.0.0.1 plays the OpenAI chat-completions API, picking each reply from the
``MODE:<kind>`` the prompt carries: a whole answer, one cut at the token limit
(``finish_reason: length``) and one beside the server's error object, each reporting the
tokens it used. What a case that errored on such a reply used to keep: its error and nothing
else (``inspect --case ID --json`` showed ``artifacts: {}``), so the tokens its calls used,
and paid for, were counted nowhere; a callable system that made a whole call before the one
that failed lost that call too.

Now an errored execution keeps the ``model_call/v1`` records of the calls made before the
error, for a model system and for a callable system calling ``ModelClient`` alike, and it is
still never served from the cache.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from tests.cli.test_model_replies_not_whole import chat
from tests.support import QuietHandler, http_server, oloproof

OVERLOADED = {"message": "upstream model overloaded", "type": "server_error"}


def used(reply: dict[str, Any], prompt: int, completion: int) -> dict[str, Any]:
    return {**reply, "usage": {"prompt_tokens": prompt, "completion_tokens": completion}}


REPLIES: dict[str, dict[str, Any]] = {
    "good": used(chat("Paris."), 7, 2),
    "length": used(chat("The capital of France is Paris, which", "length"), 11, 50),
    "beside": {**used(chat("Paris."), 13, 3), "error": OVERLOADED},
}


class Replies(QuietHandler):
    def do_POST(self) -> None:
        request = self.rfile.read(int(self.headers["Content-Length"]))
        found = re.search(rb"MODE:(\w+)", request)
        assert found is not None
        type(self).asked += 1
        self.reply(200, json.dumps(REPLIES[found[1].decode()]).encode())

    asked = 0


@contextlib.contextmanager
def serving() -> Iterator[str]:
    """``Replies`` served on 127.0.0.1, its count of requests from 0; its base URL."""
    Replies.asked = 0
    with http_server(Replies) as url:
        yield url


@pytest.fixture
def base() -> Iterator[str]:
    with serving() as url:
        yield url


def call(prompt: int, completion: int, finish: str = "stop") -> dict[str, Any]:
    """The ``model_call/v1`` record of one reply of ``REPLIES``, the request key aside."""
    return {
        "provider": "openai",
        "model": "m",
        "input_tokens": prompt,
        "output_tokens": completion,
        "cost": prompt * 0.001 + completion * 0.002,
        "reply_id": "chatcmpl-1",
        "reply_model": "m",
        "finish_reason": finish,
        "attempts": 1,
    }


GOOD = call(7, 2)
CUT = call(11, 50, "length")
BESIDE = call(13, 3)

APP = """
from oloproof import ModelClient, system

LLM = ModelClient(
    provider="openai", model="m", base_url="{base}/v1", api_key_env=None, max_retries=0,
    price_per_input_token=0.001, price_per_output_token=0.002,
)


@system(name="asker", version="1")
def ask(case_input):
    # A first call, whole, then the case's own.
    LLM.complete("MODE:good Which country?")
    return {{"answer": LLM.complete(case_input["question"])}}


@system(name="async-asker", version="1")
async def ask_async(case_input):
    reply = await LLM.acomplete(case_input["question"])
    return {{"answer": reply.text}}
"""


def project(root: Path, base: str, system: dict[str, Any]) -> Path:
    """One case per kind of reply, its answer checked for "Paris"."""
    return capitals(root, APP.format(base=base), system, REPLIES)


def capitals(root: Path, app: str, system: dict[str, Any], kinds: Iterable[str]) -> Path:
    """A project of ``app`` and ``system``: a case asking ``MODE:KIND`` of each kind of reply,
    its answer checked for "Paris"."""
    root.mkdir(parents=True)
    (root / "app.py").write_text(app)
    cases = [
        {"id": kind, "input": {"question": f"MODE:{kind}"}, "expected": {"answer": "Paris"}}
        for kind in kinds
    ]
    (root / "cases.jsonl").write_text("".join(json.dumps(case) + "\n" for case in cases))
    config = {
        "system": system,
        "dataset": "cases.jsonl",
        "evaluators": [{"type": "contains", "criterion": "correct", "expected_field": "answer"}],
    }
    (root / "oloproof.yaml").write_text(yaml.safe_dump(config))
    return root


def model_system(base: str) -> dict[str, Any]:
    settings = {
        "provider": "openai",
        "model": "m",
        "base_url": f"{base}/v1",
        "api_key_env": None,
        "prompt": "Answer: {{ question }}",
        "max_retries": 0,
        "price_per_input_token": 0.001,
        "price_per_output_token": 0.002,
    }
    return {"name": "capitals", "version": "1", "model": settings}


def kept(root: Path) -> dict[str, tuple[str, list[dict[str, Any]]]]:
    """Each case's status and the model calls its execution recorded (request keys aside)."""
    found = {}
    for kind in REPLIES:
        shown = oloproof("inspect", "latest", "--case", kind, "--json", cwd=root)
        assert shown.code == 0, shown.err
        case = json.loads(shown.out)
        calls = case["artifacts"].get("model_call/v1", [])
        assert all(c.pop("request_key") for c in calls)
        found[kind] = (case["status"], calls)
    return found


@pytest.mark.parametrize(
    ("system", "first"),
    [
        (lambda base: model_system(base), []),
        (lambda base: {"name": "asker", "version": "1", "callable": "app:ask"}, [GOOD]),
        (lambda base: {"name": "async-asker", "version": "1", "callable": "app:ask_async"}, []),
    ],
    ids=["model", "callable", "async-callable"],
)
def test_an_errored_case_keeps_the_model_calls_it_made(
    tmp_path: Path, base: str, system: Any, first: list[dict[str, Any]]
) -> None:
    root = project(tmp_path / "p", base, system(base))
    done = oloproof("run", cwd=root)
    assert done.code == 0, done.out + done.err
    assert "1 / 1 observed · 2 missing" in done.out, done.out
    # Before: the two errored cases showed `artifacts: {}`, their tokens counted nowhere.
    assert kept(root) == {
        "good": ("ok", [*first, GOOD]),
        "length": ("errored", [*first, CUT]),
        "beside": ("errored", [*first, BESIDE]),
    }
    asked = Replies.asked
    again = oloproof("run", cwd=root)
    # An errored execution is still never served from the cache: its cases are asked again.
    assert "Cache: execution 1 hit/2 miss; judgment 1 hit/0 miss" in again.lines, again.out
    assert Replies.asked == asked + 2 * (1 + len(first))
    assert kept(root)["length"] == ("errored", [*first, CUT])
