"""An ``http`` system's server that sends one reply too many: the spare is no case's answer.

A real server on 127.0.0.1 keeps its connection open and answers the first case's request with
two replies in one write, the second one a correct answer to the next case. The next case's own
reply is wrong. Oloproof used to send the next case on the same kept-alive connection and read
the spare reply waiting there as that case's answer: ``{"answer": "Paris"}`` was recorded for
the second case, which the server had answered ``I don't know``, it passed, and the gate said
``PASS (exit 0)``. Now each case's request has a connection of its own, so the second case
records the reply the server sent to it, fails, and the gate blocks (exit 1).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest
from tests.support import http_server, oloproof

CONFIG = """\
system:
  name: answering-twice
  version: "1"
  http: {{url: "{url}", output_path: result, retries: 0}}
concurrency: 1
evaluators:
  - {{type: contains, criterion: answer_correct, field: answer, expected_field: answer}}
policy: policy.yaml
"""
POLICY = (
    "version: 1\nrules:\n"
    "  - {id: never-wrong, metric: answer_correct, kind: observed_count, max_failures: 0}\n"
)


def reply(answer: str) -> bytes:
    body = json.dumps({"result": {"answer": answer}}).encode()
    head = f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {len(body)}"
    return f"{head}\r\n\r\n".encode() + body


class AnsweringTwice(BaseHTTPRequestHandler):
    """Answers ``twice`` with its own reply and, in the same write, a spare one; any other
    request with ``I don't know``. The connection stays open for the next request."""

    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:
        asked = json.loads(self.rfile.read(int(self.headers["Content-Length"])))["ask"]
        if asked == "twice":
            self.wfile.write(reply("Paris") + reply("Paris"))
        else:
            self.wfile.write(reply("I don't know"))

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def url() -> Iterator[str]:
    with http_server(AnsweringTwice) as base:
        yield base + "/answer"


def test_a_spare_reply_is_not_read_as_the_next_cases_answer(tmp_path: Path, url: str) -> None:
    (tmp_path / "oloproof.yaml").write_text(CONFIG.format(url=url))
    (tmp_path / "policy.yaml").write_text(POLICY)
    cases = [
        {"id": "first", "input": {"ask": "twice"}, "expected": {"answer": "Paris"}},
        {"id": "second", "input": {"ask": "once"}, "expected": {"answer": "Paris"}},
    ]
    (tmp_path / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases))
    done = oloproof("run", cwd=tmp_path)
    shown = oloproof("inspect", "latest", "--case", "second", "--json", cwd=tmp_path)
    assert shown.code == 0, shown.err
    assert json.loads(shown.out)["output"] == {"answer": "I don't know"}
    assert done.code == 1, done.out + done.err
    assert "Gate: BLOCK (exit 1)" in done.lines
