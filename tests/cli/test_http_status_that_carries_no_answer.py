"""An ``http`` system's 2xx that does not carry the finished answer errors its case.

A real server on 127.0.0.1 answers every POST with the status its path names and, beside it, a
JSON body that would pass. A ``202 Accepted`` (the work was queued, not done: the body is a
ticket to poll, not the answer) was read as the answer: 1 of 1 passed, ``Gate: PASS (exit
0)``; so was a ``206 Partial Content`` (a part of a body) and every other 2xx. Now only 200,
201 and 203 carry the system's output; another 2xx errors the case, saying what its status
means, and the gate does not pass.
"""

from __future__ import annotations

import json
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest
from tests.support import http_server, oloproof

CONFIG = """\
system:
  name: status
  version: "1"
  http: {{url: "{url}", output_path: result, retries: 0}}
evaluators:
  - {{type: contains, criterion: answer_correct, field: answer, expected_field: answer}}
policy: policy.yaml
"""
POLICY = "version: 1\nrules:\n  - {id: floor, metric: answer_correct, min: 0.01}\n"


class Answering(BaseHTTPRequestHandler):
    """The status the path names, with a JSON body holding the right answer."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        payload = json.dumps({"result": {"answer": "Paris"}}).encode()
        self.send_response(int(self.path.strip("/")))
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, format: str, *args: Any) -> None:
        pass


def _run(tmp_path: Path, status: int) -> tuple[int, str]:
    """The exit code of a run of one case against a server answering ``status``, and what
    ``inspect`` shows of the case (its white space made single spaces)."""
    with http_server(Answering) as base:
        (tmp_path / "oloproof.yaml").write_text(CONFIG.format(url=f"{base}/{status}"))
        (tmp_path / "policy.yaml").write_text(POLICY)
        case = {"id": "capital", "input": {"q": "?"}, "expected": {"answer": "Paris"}}
        (tmp_path / "cases.jsonl").write_text(json.dumps(case) + "\n")
        done = oloproof("run", cwd=tmp_path)
    shown = oloproof("inspect", "latest", "--case", "capital", cwd=tmp_path)
    return done.code, " ".join(shown.out.split())


@pytest.mark.parametrize(
    ("status", "meaning"),
    [
        (202, "Accepted: the work was queued, not done"),
        (206, "Partial Content: a part of a body"),
        (207, "Multi-Status: the statuses of several operations"),
        (226, "IM Used: changes to an earlier body"),
        (299, "a status with no registered meaning"),
    ],
)
def test_a_2xx_without_the_answer_errors_the_case(
    tmp_path: Path, status: int, meaning: str
) -> None:
    code, shown = _run(tmp_path, status)
    assert code == 3, shown
    assert "case capital (errored)" in shown, shown
    assert (
        f"answered HTTP {status} ({meaning}), which carries no output: only a 200, 201 or 203 "
        "reply does"
    ) in shown, shown


@pytest.mark.parametrize("status", [200, 201, 203])
def test_a_2xx_with_the_answer_is_read(tmp_path: Path, status: int) -> None:
    code, shown = _run(tmp_path, status)
    assert code == 0, shown
    assert "errored" not in shown, shown
