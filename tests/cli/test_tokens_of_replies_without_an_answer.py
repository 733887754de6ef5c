"""The tokens a reply without an answer reports are counted, through the real CLI.

Servers on 127.0.0.1 answer as OpenAI-compatible and Anthropic servers do when a reply holds no
answer but reports what it used: an ``error`` in ``choices[0]`` or beside it, with partial text
(a proxy whose upstream failed part way), a reasoning model's ``content: null`` with ``finish_reason:
length`` (its whole budget spent on reasoning), an Anthropic reply of thinking alone cut at
``max_tokens``. What a run used to keep of them:

- a model system's errored case showed ``artifacts: {}``: the 13 + 3, 17 + 64 and 9 + 50
  tokens the server billed were counted nowhere, where a reply cut with text (or beside a
  top-level ``error``) kept its ``model_call/v1`` record;
- an LLM judge's ``judge_malformed_response`` kept no ``usage``, so the run's Judges table said
  ``0 + 2 failed``, 0 input and 0 output tokens, cost 0, for two calls billed 600 + 40 tokens.

Now such a reply's tokens are recorded with its errored case, and added to its judge's totals
(still counted as failed calls; the judgments are still missing, never a verdict).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.cli.test_errored_model_calls_kept import capitals, model_system
from tests.cli.test_judge_failures import case, openai_body, run, write_project
from tests.cli.test_model_replies_not_whole import THINKING, chat, messages
from tests.support import QuietHandler, http_server, oloproof

from oloproof.testing import ScriptedJudgeServer, raw

OVERLOADED = {"message": "upstream model overloaded", "type": "server_error"}


def used(reply: dict[str, Any], **usage: int) -> dict[str, Any]:
    return {**reply, "usage": usage}


CHOICE_ERROR = used(chat("Paris, and"), prompt_tokens=13, completion_tokens=3)
CHOICE_ERROR["choices"][0]["error"] = OVERLOADED
REPLIES: dict[str, dict[str, Any]] = {
    "good": used(chat("Paris."), prompt_tokens=7, completion_tokens=2),
    "choice_error": CHOICE_ERROR,
    "reasoned_past_the_limit": used(
        chat(None, "length", reasoning_content="Paris? Or"), prompt_tokens=17, completion_tokens=64
    ),
    "a_thinking_past_the_limit": used(
        messages([THINKING], "max_tokens"), input_tokens=9, output_tokens=50
    ),
}


class Replies(QuietHandler):
    def do_POST(self) -> None:
        request = self.rfile.read(int(self.headers["Content-Length"]))
        found = re.search(rb"MODE:(\w+)", request)
        assert found is not None
        self.reply(200, json.dumps(REPLIES[found[1].decode()]).encode())


@pytest.fixture
def base() -> Iterator[str]:
    with http_server(Replies) as url:
        yield url


def spent(root: Path, kind: str) -> tuple[str, list[tuple[Any, ...]]]:
    """The case's status, and the tokens, cost and finish reason of each call it recorded."""
    shown = oloproof("inspect", "latest", "--case", kind, "--json", cwd=root)
    assert shown.code == 0, shown.err
    found = json.loads(shown.out)
    calls = found["artifacts"].get("model_call/v1", [])
    fields = ("input_tokens", "output_tokens", "cost", "finish_reason")
    return found["status"], [tuple(call.get(field) for field in fields) for call in calls]


def call(prompt: int, completion: int, finish: str | None) -> tuple[Any, ...]:
    """What ``spent`` gives for one call, priced as ``model_system`` prices it."""
    return prompt, completion, prompt * 0.001 + completion * 0.002, finish


def test_an_errored_model_system_case_keeps_the_tokens_its_reply_reported(
    tmp_path: Path, base: str
) -> None:
    openai = capitals(tmp_path / "openai", "", model_system(base), list(REPLIES)[:3])
    anthropic_system = model_system(base)
    anthropic_system["model"].update(provider="anthropic", base_url=base)
    anthropic = capitals(tmp_path / "anthropic", "", anthropic_system, list(REPLIES)[3:])
    for root in (openai, anthropic):
        done = oloproof("run", cwd=root)
        assert done.code == 0, done.out + done.err
    # Before: each errored case showed no model_call/v1 record, its tokens counted nowhere.
    assert spent(openai, "good") == ("ok", [call(7, 2, "stop")])
    assert spent(openai, "choice_error") == ("errored", [call(13, 3, None)])
    assert spent(openai, "reasoned_past_the_limit") == ("errored", [call(17, 64, "length")])
    assert spent(anthropic, "a_thinking_past_the_limit") == (
        "errored",
        [call(9, 50, "max_tokens")],
    )


def test_a_judge_reply_beside_an_error_adds_its_tokens_to_the_judges_totals(
    tmp_path: Path,
) -> None:
    in_choice = json.loads(openai_body())
    in_choice["choices"][0]["error"] = OVERLOADED
    beside = json.loads(openai_body(error=OVERLOADED))
    bodies = (in_choice, beside)
    # Before: 0 + 2 failed, 0 input and 0 output tokens, cost 0.
    assert judges_row(tmp_path, [json.dumps(body) for body in bodies]) == [
        "0 + 2 failed",
        "0",
        "600",
        "40",
        "0.68",
    ]


def judges_row(tmp_path: Path, bodies: list[str]) -> list[str]:
    """The judge's row of the Judges table (calls, then tokens and cost) of a run of two cases
    whose judge replies ``bodies``, each a 200 without a verdict."""
    replies = [raw(body, content_type="application/json") for body in bodies]
    with ScriptedJudgeServer(*replies) as server:
        cases = [case(f"c{i}", f"Notes sync every {i + 2} minutes.") for i in range(2)]
        prices = {"price_per_input_token": 0.001, "price_per_output_token": 0.002}
        root = write_project(tmp_path / "p", server.openai_base_url, cases, **prices)
        result = run(root, "run")
    assert result.code == 0, result.err
    # Still no verdict: the judgments are missing, and the calls counted as failed.
    assert "groundedness: 2 missing: 2 judge_malformed_response" in result.lines, result.out
    row = next(line for line in result.lines if line.startswith("│ groundedness │ openai"))
    return [cell.strip() for cell in row.split("│")[3:8]]
