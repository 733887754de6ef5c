"""An ``http`` system that answers with a redirect has not answered.

A real server on 127.0.0.1 answers every POST with ``302`` and, beside it, a JSON body that
would pass. Oloproof does not follow redirects, so that body is not the system's answer: the
case errors, naming the status and where it pointed, and the gate does not pass. (It used to
read the body as the answer: 1 of 1 passed, ``Gate: PASS (exit 0)``.)
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
  name: redirecting
  version: "1"
  http: {{url: "{url}", output_path: result, retries: 0}}
evaluators:
  - {{type: contains, criterion: answer_correct, field: answer, expected_field: answer}}
policy: policy.yaml
"""
POLICY = "version: 1\nrules:\n  - {id: floor, metric: answer_correct, min: 0.01}\n"


class Redirecting(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        payload = json.dumps({"result": {"answer": "Paris"}}).encode()
        self.send_response(302)
        self.send_header("Location", "http://example.com/x")
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def url() -> Iterator[str]:
    with http_server(Redirecting) as base:
        yield base + "/answer"


def test_a_redirect_errors_the_case_and_the_gate_does_not_pass(tmp_path: Path, url: str) -> None:
    (tmp_path / "oloproof.yaml").write_text(CONFIG.format(url=url))
    (tmp_path / "policy.yaml").write_text(POLICY)
    case = {"id": "capital", "input": {"q": "capital of France?"}, "expected": {"answer": "Paris"}}
    (tmp_path / "cases.jsonl").write_text(json.dumps(case) + "\n")
    done = oloproof("run", cwd=tmp_path)
    assert done.code == 3, done.out + done.err
    assert "Gate: BLOCK (exit 3)" in done.lines
    shown = oloproof("inspect", "latest", "--case", "capital", cwd=tmp_path)
    assert "case capital (errored)" in shown.out, shown.out
    assert "answered HTTP 302, a redirect to http://example.com/x, which is not followed" in (
        " ".join(shown.out.split())
    ), shown.out


class NoAnswer(BaseHTTPRequestHandler):
    """``300``, ``304`` or ``305`` (the status the path names), with no body: no redirect to
    follow, and no answer either."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        self.send_response(int(self.path.strip("/")))
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.mark.parametrize("status", [300, 304, 305])
def test_a_3xx_that_is_no_redirect_is_not_called_one(tmp_path: Path, status: int) -> None:
    # Was: "answered HTTP 304, a redirect, which is not followed: set url to the endpoint
    # itself", advice that fits no such reply (304 answers a conditional GET, 305 is obsolete).
    with http_server(NoAnswer) as base:
        (tmp_path / "oloproof.yaml").write_text(CONFIG.format(url=f"{base}/{status}"))
        (tmp_path / "policy.yaml").write_text(POLICY)
        case = {"id": "capital", "input": {"q": "?"}, "expected": {"answer": "Paris"}}
        (tmp_path / "cases.jsonl").write_text(json.dumps(case) + "\n")
        done = oloproof("run", cwd=tmp_path)
    assert done.code == 3, done.out + done.err
    shown = " ".join(oloproof("inspect", "latest", "--case", "capital", cwd=tmp_path).out.split())
    assert f"answered HTTP {status}, which is no answer to a POST" in shown, shown
    assert "redirect" not in shown
