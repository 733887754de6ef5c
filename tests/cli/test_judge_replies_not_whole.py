"""A judge's reply that says it is not the model's whole answer, through the real CLI.

The judge's model is a real HTTP server on 127.0.0.1 answering as the OpenAI and Anthropic
APIs do on their bad days, picking each reply from the ``MODE:<kind>`` the judged answer
carries. Every reply holds a well-formed pass verdict as its text. What a judge used to do:

- A reply cut at the token limit (``finish_reason: length``, ``stop_reason: max_tokens``, the
  verdict written first and the rest cut), cut by a content filter, refused (with text), one
  that stops to call a tool, one the server paused, and one of two choices: the verdict was
  taken, a pass, and cached as one.
- A 200 whose body holds the reply *and* the server's error object: the verdict was taken, the
  error never read.

Now each is a missing judgment saying what the reply is (``judge_reply_incomplete``), or that
the server reported an error (``judge_malformed_response``), with the tokens the call used still
counted in the judges' table.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from tests.cli.test_judge_failures import calibrate_on_four, case, run, write_project

from oloproof.testing import RecordedRequest, Reply, ScriptedJudgeServer, raw

PASS = json.dumps({"verdict": "pass", "reason": "stated in kb-01"})
USAGE = {"prompt_tokens": 2000, "completion_tokens": 7}


def chat(finish: str = "stop", content: str | None = PASS, **more: Any) -> dict[str, Any]:
    message = {"role": "assistant", "content": content, **more.pop("message", {})}
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "model": "judge-model",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": USAGE,
        **more,
    }


def messages(stop: str = "end_turn", **more: Any) -> dict[str, Any]:
    return {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "judge-model",
        "content": [{"type": "text", "text": PASS}],
        "stop_reason": stop,
        "usage": {"input_tokens": 2000, "output_tokens": 7},
        **more,
    }


TOOL_CALL = {"id": "t1", "type": "function", "function": {"name": "look_up", "arguments": "{}"}}
TWO_CHOICES = chat()
TWO_CHOICES["choices"].append(
    {"index": 1, "message": {"role": "assistant", "content": PASS}, "finish_reason": "stop"}
)
OVERLOADED = {"message": "upstream model overloaded", "type": "server_error"}

OPENAI: dict[str, dict[str, Any]] = {
    "good": chat(),
    "length": chat("length"),
    "content_filter": chat("content_filter"),
    "tool_calls": chat("tool_calls", message={"tool_calls": [TOOL_CALL]}),
    "refusal": chat(message={"refusal": "I can't judge that."}),
    "two_choices": TWO_CHOICES,
    "error_beside": chat(error=OVERLOADED),
}
ANTHROPIC: dict[str, dict[str, Any]] = {
    "a_good": messages(),
    "a_max_tokens": messages("max_tokens"),
    "a_refusal": messages("refusal"),
    "a_pause_turn": messages("pause_turn"),
    "a_error_beside": messages(error=OVERLOADED),
}


def bad_day(request: RecordedRequest) -> Reply:
    found = re.search(r"MODE:(\w+)", request.user_message)
    assert found is not None
    return raw(json.dumps({**OPENAI, **ANTHROPIC}[found[1]]), content_type="application/json")


def judged(
    tmp_path: Path, provider: str, kinds: list[str]
) -> tuple[list[str], dict[str, str], str]:
    """The run's report lines, each missing judgment as stored (``reason: error``), by kind, and
    the endpoint the judge called."""
    with ScriptedJudgeServer(default=bad_day) as server:
        base = server.anthropic_base_url if provider == "anthropic" else server.openai_base_url
        url = base + ("/v1/messages" if provider == "anthropic" else "/chat/completions")
        cases = [case(kind, f"Notes sync every five minutes. MODE:{kind}") for kind in kinds]
        root = write_project(tmp_path / "p", base, cases, provider=provider, max_retries=0)
        done = run(root, "run")
        assert done.code == 0, done.out + done.err
        assert "Traceback" not in done.err
        said = {}
        for kind in kinds:
            shown = json.loads(run(root, "inspect", "latest", "--case", kind, "--json").out)
            address = shown["judgments"]["groundedness"]
            body = json.loads(run(root, "inspect", address, "--json").out)["body"]
            detail = body["detail"]
            if body["status"] == "missing":
                said[kind] = f"{body['reason']}: {detail['error']}"
                if body["reason"] == "judge_reply_incomplete":
                    # The reply and the tokens it used are kept with the judgment.
                    assert detail["raw_reply"] == PASS
                    assert detail["usage"] == {"input_tokens": 2000, "output_tokens": 7}
        again = run(root, "run")
    # No missing judgment is served from the cache: each is asked again.
    assert f"judgment 1 hit/{len(kinds) - 1} miss" in again.out, again.out
    return done.lines, said, url


def test_an_openai_judge_reply_that_is_not_whole_gives_no_verdict(tmp_path: Path) -> None:
    lines, said, url = judged(tmp_path, "openai", list(OPENAI))
    # Before: 7 / 7 passed, every one a verdict.
    assert "groundedness: 6 missing: 5 judge_reply_incomplete, 1 judge_malformed_response" in (
        lines
    )
    assert (
        "  judge_reply_incomplete: the replies were not the model's whole answer (see one with "
        "oloproof inspect RUN --case ID); one cut at the token limit needs a larger max_tokens "
        "on the judge" in lines
    )
    # The calls were made and paid for: their tokens count, the failed one's too (the server's
    # error beside its reply, which reported the 2,000 + 7 tokens it used).
    row = next(line for line in lines if line.startswith("│ groundedness │ openai"))
    assert [cell.strip() for cell in row.split("│")[3:7]] == ["6 + 1 failed", "0", "14,000", "49"]
    no_verdict = ", so no verdict is read from it"
    assert said == {
        "length": "judge_reply_incomplete: the reply was cut at the token limit "
        f"(finish_reason length; max_tokens sets it){no_verdict}",
        "content_filter": "judge_reply_incomplete: the server's content filter cut or "
        f"withheld the reply (finish_reason content_filter){no_verdict}",
        "tool_calls": "judge_reply_incomplete: the model asked to call a tool instead of "
        f"answering (finish_reason tool_calls){no_verdict}",
        "refusal": f"judge_reply_incomplete: the model refused: I can't judge that.{no_verdict}",
        "two_choices": "judge_reply_incomplete: the reply holds 2 choices (is n set in "
        f"extra_body?), and Oloproof records one answer{no_verdict}",
        "error_beside": f"judge_malformed_response: openai model small-local-model at {url}: "
        "the reply is not a chat-completions response "
        "(the body holds the server's error beside the reply: upstream model overloaded)",
    }


def test_an_anthropic_judge_reply_that_is_not_whole_gives_no_verdict(tmp_path: Path) -> None:
    lines, said, url = judged(tmp_path, "anthropic", list(ANTHROPIC))
    assert "groundedness: 4 missing: 3 judge_reply_incomplete, 1 judge_malformed_response" in (
        lines
    )
    no_verdict = ", so no verdict is read from it"
    assert said == {
        "a_max_tokens": "judge_reply_incomplete: the reply was cut at the token limit "
        f"(stop_reason max_tokens; max_tokens sets it){no_verdict}",
        "a_refusal": "judge_reply_incomplete: the model refused to answer (stop_reason "
        f"refusal){no_verdict}",
        "a_pause_turn": "judge_reply_incomplete: the server paused the model's turn "
        f"before it ended (stop_reason pause_turn){no_verdict}",
        "a_error_beside": "judge_malformed_response: anthropic model small-local-model "
        f"at {url}: the reply is not a messages response (the body holds the server's error "
        "beside the reply: upstream model overloaded)",
    }


def test_calibrating_on_cut_replies_says_what_to_raise(tmp_path: Path) -> None:
    # Before: "judged none of the 4 examples (4 judge_reply_incomplete; …)", then the hint
    # for a judge that cannot be reached: "check the provider, base_url, model and the key".
    with ScriptedJudgeServer(default=raw(json.dumps(chat("length")))) as server:
        root = write_project(tmp_path / "p", server.openai_base_url, [case("c0", "x")])
        result = calibrate_on_four(root)
    assert result.code == 2 and result.out == ""
    assert "judged none of the 4 examples (4 judge_reply_incomplete; first, on l3: " in result.err
    assert "one cut at the token limit needs a larger max_tokens on the judge" in result.err
    assert "check the provider, base_url" not in result.err
