"""A reply whose HTTP status says its body is not the finished answer (a 2xx other than 200,
201 and 203) is not read as the model's reply, through the real CLI, for a judge and for a
model system alike.

HTTP systems already read only those three; the judges' and model systems' providers took any
2xx. A judge server answering ``206 Partial Content`` (a part of a body) or ``202 Accepted``
(the work queued, not done) with a well-formed pass verdict gave 2 / 2 observed, both passed,
and a model system's answer under either status was recorded and passed its check. Now the
judgment is missing (``judge_http_error``) and the case errored, each saying what the status
means; a reply under 201 or 203 is still read.
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

MEANING = {
    202: "Accepted: the work was queued, not done",
    206: "Partial Content: a part of a body",
}


@pytest.mark.parametrize("status", [202, 206])
def test_a_judge_reply_under_a_status_that_is_no_answer_gives_no_verdict(
    tmp_path: Path, status: int
) -> None:
    cases = [case(f"c{n}", "Notes sync across devices every five minutes.") for n in range(2)]
    reply = raw(json.dumps(chat()), status=status, content_type="application/json")
    with ScriptedJudgeServer(default=reply) as server:
        base = server.openai_base_url
        root = write_project(tmp_path / "p", base, cases, max_retries=0)
        done = run(root, "run", "--json")
    assert done.code == 0, done.err
    found = metric_of(json.loads(done.out), "groundedness")
    # Was: 2 / 2 observed, both passed.
    assert (found["observed"], found["missing"]) == (0, 2), found
    assert found["missing_reasons"] == {"judge_http_error": 2}, found
    error = judgment_of(root, "c0")["detail"]["error"]
    assert error == (
        f"openai model small-local-model at {base}/chat/completions: "
        f"HTTP {status} ({MEANING[status]}), which is not a reply"
    )


@pytest.mark.parametrize("status", [201, 203])
def test_a_judge_reply_under_a_status_that_answers_is_read(tmp_path: Path, status: int) -> None:
    cases = [case(f"c{n}", "Notes sync across devices every five minutes.") for n in range(2)]
    reply = raw(json.dumps(chat()), status=status, content_type="application/json")
    with ScriptedJudgeServer(default=reply) as server:
        root = write_project(tmp_path / "p", server.openai_base_url, cases, max_retries=0)
        done = run(root, "run", "--json")
    assert done.code == 0, done.err
    found = metric_of(json.loads(done.out), "groundedness")
    assert (found["observed"], found["missing"], found["estimate"]) == (2, 0, 1.0), found


class NotAnswered(QuietHandler):
    """Answers "MODE:<status>" with a well-formed reply holding "Paris", under that status."""

    def do_POST(self) -> None:
        asked = self.rfile.read(int(self.headers["Content-Length"])).decode()
        status = next(s for s in (202, 206, 200) if f"MODE:{s}" in asked)
        body = chat(content="The capital of France is Paris")
        self.reply(status, json.dumps(body).encode())


@pytest.fixture
def base() -> Iterator[str]:
    with http_server(NotAnswered) as url:
        yield url


def test_a_model_reply_under_a_status_that_is_no_answer_errors_its_case(
    tmp_path: Path, base: str
) -> None:
    root = project(tmp_path / "p", base, "openai", ["202", "206", "200"])
    done = oloproof("run", cwd=root)
    # Was: 3 / 3 observed, the answers under 202 and 206 recorded and passed.
    assert "1 / 1 observed · 2 missing" in done.out, done.out
    what = f"openai model m at {base}/v1/chat/completions: HTTP"
    assert errors(root) == {
        str(status): f"{what} {status} ({meaning}), which is not a reply"
        for status, meaning in MEANING.items()
    }
