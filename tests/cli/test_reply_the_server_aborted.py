"""A chat-completions reply vLLM's engine aborted (``finish_reason: abort``) is not taken as the
model's whole answer, through the real CLI.

vLLM ends a request its engine aborts (a shutdown, a sleep-mode or scale-down pause, an abort
request) with HTTP 200 and ``finish_reason: abort``, holding whatever text was made by then.
Oloproof took any finish reason it did not list as a finished reply: a judge's pass verdict so
sent was a pass (2 / 2), and a model system's answer was recorded and passed its check. Now the
judgment is missing (``judge_reply_incomplete``) and the case errored, with a sentence saying
the server aborted the reply.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.cli.test_judge_failures import case, judgment_of, run, write_project
from tests.cli.test_judge_replies_not_whole import chat
from tests.cli.test_model_replies_not_whole import errors, project
from tests.support import QuietHandler, http_server, metric_of, oloproof

from oloproof.testing import ScriptedJudgeServer, raw

ABORTED = "the server aborted the reply before the model finished it (finish_reason abort)"


def test_a_judge_reply_the_server_aborted_gives_no_verdict(tmp_path: Path) -> None:
    cases = [case(f"c{n}", "Notes sync across devices every five minutes.") for n in range(2)]
    reply = raw(json.dumps(chat("abort")), content_type="application/json")
    with ScriptedJudgeServer(default=reply) as server:
        root = write_project(tmp_path / "p", server.openai_base_url, cases, max_retries=0)
        done = run(root, "run", "--json")
        assert done.code == 0, done.err
        found = metric_of(json.loads(done.out), "groundedness")
        # Was: 2 / 2 observed, both passed.
        assert (found["observed"], found["missing"]) == (0, 2), found
        assert found["missing_reasons"] == {"judge_reply_incomplete": 2}, found
        body = judgment_of(root, "c0")
    assert body["detail"]["error"] == f"{ABORTED}, so no verdict is read from it"


class Aborted(QuietHandler):
    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["Content-Length"]))
        body = chat("abort", content="The capital of France is Paris")
        self.reply(200, json.dumps(body).encode())


@pytest.fixture
def base() -> Iterator[str]:
    with http_server(Aborted) as url:
        yield url


def test_a_model_reply_the_server_aborted_errors_its_case(tmp_path: Path, base: str) -> None:
    root = project(tmp_path / "p", base, "openai", ["a0", "a1"])
    done = oloproof("run", cwd=root)
    # Was: 2 / 2 observed, the aborted answers recorded and passed.
    assert "0 / 0 observed · 2 missing" in done.out, done.out
    said = (
        f"openai model m at {base}/v1/chat/completions: {ABORTED}, so it is not taken as the "
        "model's answer"
    )
    assert errors(root) == {"a0": said, "a1": said}
