"""An ``http`` system whose server answers a case with a body that is not a usable JSON object.

The server is the user's code: a body cut off part way, bytes that are not UTF-8, an HTML page
from a proxy, JSON that is not an object, names a key twice, nests 100,000 levels deep or holds
a number the ledger cannot record errors that case, with a record naming the status and what
was wrong (with a short excerpt at most, never the whole body, never a configured secret), and
the run goes on with the other cases. A real server on 127.0.0.1 picks each case's reply from
the case's input. (Each of these stopped the whole run, exit 2, as ``the response is not JSON``
or ``the output cannot be recorded``; a ``NaN`` outside ``output_path`` was accepted.)
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest
from tests.support import Result, http_server, oloproof

TOKEN = "tok-HTTPBODY-7d1e5a90c3b24f6e8a1d"
GOOD = json.dumps({"result": {"answer": "Paris"}}).encode()
CUT = b'{"result": {"answer": "Pa'
# A proxy's error page, far longer than an excerpt; the token it repeats starts 20 characters
# before the excerpt would end.
PAGE_HEAD = "<html><body><h1>502 Bad Gateway</h1><p>upstream refused:"


def proxy_page(seen: str) -> bytes:
    head = PAGE_HEAD + "." * (180 - len(PAGE_HEAD) - len("Bearer "))
    return f"{head}{seen}</p>{'<p>padding</p>' * 300}</body></html>".encode()


BODIES = {
    "not_utf8": b'{"result": {"answer": "Par\xffis"}}',
    "list": b"[1, 2]",
    "string": b'"Paris"',
    "null": b"null",
    "empty": b"",
    "duplicate": b'{"result": {"answer": "Rome"}, "result": {"answer": "Paris"}}',
    "deep": b'{"result": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
    "deep150": b'{"result": {"answer": "Paris", "x": ' + b"[" * 150 + b"]" * 150 + b"}}",
    "e999": b'{"result": {"answer": "Paris", "score": 1e999}}',
    "int400": b'{"result": {"answer": "Paris", "n": ' + b"9" * 400 + b"}}",
    "int5000": b'{"result": {"answer": "Paris", "n": ' + b"9" * 5000 + b"}}",
    "nan": b'{"result": {"answer": "Paris", "score": NaN}}',
    "minus_infinity": b'{"result": {"answer": "Paris", "score": -Infinity}}',
    "nan_beside_the_output": b'{"result": {"answer": "Paris"}, "debug": NaN}',
    "lone_surrogate": b'{"result": {"answer": "Paris \\ud800"}}',
    "text_plain": GOOD,  # JSON labelled as plain text: the body is what is read
}


class Garbage(BaseHTTPRequestHandler):
    """Answers each POST as its input's ``reply`` asks; ``good`` is a correct answer."""

    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        kind = json.loads(self.rfile.read(int(self.headers["Content-Length"])))["reply"]
        seen = self.headers.get("Authorization", "")
        self.close_connection = True
        if kind == "cut_close":  # no Content-Length: the body ends where the connection does
            self._head(200, "application/json", {"Connection": "close"})
            self.wfile.write(CUT)
        elif kind == "cut_declared":  # fewer bytes than Content-Length says
            self._head(200, "application/json", {"Content-Length": str(len(GOOD))})
            self.wfile.write(CUT)
        elif kind == "cut_chunked":  # the closing chunk never comes
            self._head(200, "application/json", {"Transfer-Encoding": "chunked"})
            self.wfile.write(b"%x\r\n%s\r\n" % (len(CUT), CUT))
        elif kind in ("html", "refused_html"):
            page = proxy_page(seen)
            status = 200 if kind == "html" else 403
            self._head(status, "text/html", {"Content-Length": str(len(page))})
            self.wfile.write(page)
        else:
            body = BODIES.get(kind, GOOD)
            ctype = "text/plain" if kind == "text_plain" else "application/json"
            self._head(200, ctype, {"Content-Length": str(len(body))})
            self.wfile.write(body)

    def _head(self, status: int, content_type: str, headers: dict[str, str]) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        # Every connection is closed after its reply, and each reply says so: a client that
        # took the connection for kept alive could send the next case on it as it closes.
        for name, value in {"Connection": "close", **headers}.items():
            self.send_header(name, value)
        self.end_headers()


CONFIG = """\
system:
  name: garbage
  version: "1"
  http:
    url: "{url}"
    output_path: result
    retries: 0
    headers: {{Authorization: "Bearer ${{HTTPBODY_TOKEN}}"}}
evaluators:
  - {{type: contains, criterion: answer_correct, field: answer, expected_field: answer}}
policy: policy.yaml
"""
# No failure allowed: an errored case might have been one, so it keeps the gate from passing.
POLICY = (
    "version: 1\nrules:\n"
    "  - {id: never-wrong, metric: answer_correct, kind: observed_count, max_failures: 0}\n"
)
ENV = {"HTTPBODY_TOKEN": TOKEN}


@pytest.fixture
def url() -> Iterator[str]:
    with http_server(Garbage) as base:
        yield base + "/answer"


def project(root: Path, url: str, replies: dict[str, str]) -> Path:
    """A project whose case ``ID`` asks the server for ``replies[ID]``."""
    (root / "oloproof.yaml").write_text(CONFIG.format(url=url))
    (root / "policy.yaml").write_text(POLICY)
    cases = [
        {"id": case_id, "input": {"reply": kind}, "expected": {"answer": "Paris"}}
        for case_id, kind in replies.items()
    ]
    (root / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases))
    return root


def errors_of(root: Path) -> tuple[Result, dict[str, str]]:
    """``inspect latest --failures --json`` and each failed case's error message."""
    shown = oloproof("inspect", "latest", "--failures", "--json", cwd=root)
    assert shown.code == 0, shown.err
    failed = json.loads(shown.out)["failed"]
    assert all(case["status"] == "errored" for case in failed), failed
    return shown, {case["case_id"]: case["error"]["message"] for case in failed}


@pytest.mark.parametrize("kind", ["cut_close", "not_utf8", "html"])
def test_a_garbage_reply_errors_its_case_and_the_gate_does_not_pass(
    tmp_path: Path, url: str, kind: str
) -> None:
    replies = {"first": "good", "garbage": kind, "second": "good", "third": "good"}
    root = project(tmp_path, url, replies)
    done = oloproof("run", cwd=root, env=ENV)
    assert done.code == 3, done.out + done.err
    assert done.lines[0].endswith("[DECIDED/PARTIAL]"), done.out
    assert done.lines[1].startswith("1 of 4 cases errored: HttpSystemError: case 'garbage'")
    assert "Gate: BLOCK (exit 3)" in done.lines
    assert "3 / 3 observed · 1 missing" in done.out, done.out
    assert "it would be PASS (observed_failures_within_limit)" in done.out, done.out
    _, errors = errors_of(root)
    assert list(errors) == ["garbage"]
    assert f"case 'garbage': POST {url} answered HTTP 200 with " in errors["garbage"]


def test_each_malformed_body_errors_only_its_own_case(tmp_path: Path, url: str) -> None:
    kinds = ["cut_close", "cut_declared", "cut_chunked", "html", "refused_html", *BODIES]
    replies = {"before": "good", **{kind: kind for kind in kinds}, "after": "good"}
    root = project(tmp_path, url, replies)
    done = oloproof("run", cwd=root, env=ENV)
    assert done.code == 3, done.out + done.err
    assert done.lines[0].endswith("[DECIDED/PARTIAL]"), done.out
    errored = len(kinds) - 1  # all but text_plain
    assert f"3 / 3 observed · {errored} missing" in done.out, done.out  # text_plain passed
    shown, errors = errors_of(root)
    answered = f"case '{{}}': POST {url} answered HTTP 200 with "
    expected = {
        "cut_close": "a body that ends part way through its JSON (25 bytes, and no "
        'Content-Length: the connection closed there): {"result": {"answer": "Pa',
        "cut_declared": "failed after 1 try: RemoteProtocolError: peer closed connection "
        "without sending complete message body (received 25 bytes, expected 31)",
        "cut_chunked": "failed after 1 try: RemoteProtocolError: peer closed connection "
        "without sending complete message body (incomplete chunked read)",
        "html": "a body that is not JSON (Expecting value at line 1 column 1; Content-Type "
        "text/html): <html><body><h1>502 Bad Gateway</h1>",
        "refused_html": "was refused: HTTP 403: <html><body>",
        "not_utf8": "a body that is not UTF-8 (byte 0xff at offset 26)",
        "list": "JSON that is a list of 2, not an object: [1, 2]",
        "string": 'JSON that is a string, not an object: "Paris"',
        "null": "JSON that is null, not an object: null",
        "empty": "no body, so there is no output",
        "duplicate": "ambiguous JSON: the key 'result' appears twice in one object",
        "deep": "JSON nested deeper than 101 levels",
        "deep150": "JSON nested deeper than 101 levels",
        "e999": "JSON Oloproof cannot record (the number 1e999 is too large to record)",
        "int400": "(an integer of 400 digits is outside -2**64 .. 2**64-1)",
        "int5000": "(an integer of 5000 digits is outside -2**64 .. 2**64-1)",
        "nan": "JSON Oloproof cannot record (NaN is not a JSON number)",
        "minus_infinity": "(-Infinity is not a JSON number)",
        "nan_beside_the_output": "(NaN is not a JSON number)",
        "lone_surrogate": "a lone surrogate escape (\\uD800-\\uDFFF without its pair)",
    }
    assert sorted(errors) == sorted(expected)
    for kind, what in expected.items():
        message = errors[kind]
        assert what in message, (kind, message)
        if kind not in ("cut_declared", "cut_chunked", "refused_html"):
            assert message.startswith(answered.format(kind)), (kind, message)
        assert len(message) < 400, (kind, message)  # an excerpt at most, never the whole body
    # The excerpt stops before the token rather than part way through it, where it kept the
    # token's first 20 characters: redaction only recognises the whole token.
    before_the_token = proxy_page(f"Bearer {TOKEN}").decode()[:180]
    for kind in ("html", "refused_html"):
        assert errors[kind].endswith(before_the_token + "…"), errors[kind]
    printed = done.out + done.err + shown.out + shown.err
    assert TOKEN[:10] not in printed
    assert TOKEN[:10].encode() not in (root / ".oloproof" / "ledger" / "data.mdb").read_bytes()
