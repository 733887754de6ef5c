"""A chat-completions reply whose ``refusal`` is given but not as text is no reply, through the
real CLI.

The protocol's ``message.refusal`` is text (or null). A refusal given as a list or an object
(``["I can't judge that."]``, ``{"text": ...}``, as a server or proxy of its own shape may
write it) was not read at all: the verdict beside it was taken, 2 / 2 passed. A finish reason
or an id in the wrong shape was already refused (``finish_reason: {"type": "length"}`` hides a
cut); now so is a refusal: ``judge_malformed_response``, saying the refusal is not text.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from tests.cli.test_judge_failures import case, judgment_of, run, said_of, write_project
from tests.cli.test_judge_replies_not_whole import chat

from oloproof.testing import RecordedRequest, Reply, ScriptedJudgeServer, raw

REPLIES: dict[str, dict[str, Any]] = {
    "good": chat(message={"refusal": None}),
    "listed": chat(message={"refusal": ["I can't judge that."]}),
    "object": chat(message={"refusal": {"text": "I can't judge that."}}),
}


def scripted(request: RecordedRequest) -> Reply:
    found = re.search(r"MODE:(\w+)", request.user_message)
    assert found is not None
    return raw(json.dumps(REPLIES[found[1]]), content_type="application/json")


def test_a_refusal_not_written_as_text_gives_no_verdict(tmp_path: Path) -> None:
    with ScriptedJudgeServer(default=scripted) as server:
        url = server.openai_base_url + "/chat/completions"
        cases = [case(kind, f"Notes sync every five minutes. MODE:{kind}") for kind in REPLIES]
        root = write_project(tmp_path / "p", server.openai_base_url, cases, max_retries=0)
        done = run(root, "run")
        assert done.code == 0, done.out + done.err
        said = {kind: said_of(judgment_of(root, kind)) for kind in REPLIES}
    not_text = (
        f"judge_malformed_response: openai model small-local-model at {url}: the reply is not "
        "a chat-completions response (choices[0].message.refusal is not text)"
    )
    # Before: "listed" and "object" passed.
    assert said == {"good": "pass", "listed": not_text, "object": not_text}
