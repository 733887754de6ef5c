"""A chat-completions reply whose finish reason is in another API's words (Gemini's
``MAX_TOKENS``, ``SAFETY``; Anthropic's ``max_tokens``; any in capitals) is read by what it
says, through the real CLI.

Gateways that put Gemini models behind a chat-completions endpoint pass Gemini's own finish
reason through, in capitals: ``STOP`` for a finished reply, ``MAX_TOKENS`` for one cut at the
token limit; proxies in front of Anthropic's API pass ``max_tokens`` on. Oloproof compared the
finish reason with OpenAI's lower-case words only, so a verdict written first and then cut
(``MAX_TOKENS``, ``LENGTH``), or stopped by a safety filter (``SAFETY``), was a pass: 4 / 4.
Now each is ``judge_reply_incomplete`` with the server's own word in its sentence, and a
reply ending ``STOP`` is read as before.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.cli.test_judge_failures import case, judgment_of, run, said_of, write_project
from tests.cli.test_judge_replies_not_whole import chat

from oloproof.testing import RecordedRequest, Reply, ScriptedJudgeServer, raw

FINISH = ["STOP", "MAX_TOKENS", "LENGTH", "max_tokens", "SAFETY"]


def scripted(request: RecordedRequest) -> Reply:
    found = re.search(r"MODE:(\w+)", request.user_message)
    assert found is not None
    return raw(json.dumps(chat(found[1])), content_type="application/json")


def test_a_finish_reason_in_another_apis_words_is_read(tmp_path: Path) -> None:
    with ScriptedJudgeServer(default=scripted) as server:
        cases = [case(word, f"Notes sync every five minutes. MODE:{word}") for word in FINISH]
        root = write_project(tmp_path / "p", server.openai_base_url, cases, max_retries=0)
        done = run(root, "run")
        assert done.code == 0, done.out + done.err
        said = {word: said_of(judgment_of(root, word)) for word in FINISH}
    cut = "judge_reply_incomplete: the reply was cut at the token limit (finish_reason {}; "
    no_verdict = ", so no verdict is read from it"
    # Before: all five passed.
    assert said == {
        "STOP": "pass",
        "MAX_TOKENS": cut.format("MAX_TOKENS") + f"max_tokens sets it){no_verdict}",
        "LENGTH": cut.format("LENGTH") + f"max_tokens sets it){no_verdict}",
        "max_tokens": cut.format("max_tokens") + f"max_tokens sets it){no_verdict}",
        "SAFETY": "judge_reply_incomplete: the server's content filter cut or withheld the "
        f"reply (finish_reason SAFETY){no_verdict}",
    }
