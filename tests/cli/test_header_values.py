"""An HTTP header that cannot be sent as configured is refused when the run is planned.

A header value read from the environment (``Bearer ${TOKEN}``) whose text an HTTP/1.1 request
cannot carry (bytes that are not text, a line break, a character outside ASCII) made every
case error at its first call, one by one, with a UnicodeEncodeError or a LocalProtocolError.
Now the run is refused before anything is written: one sentence naming the variable, the header
and the place in oloproof.yaml, never the value (it is a secret). The endpoint is a real server
on 127.0.0.1 that counts the requests it is sent.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest
from tests.support import echo_http_config, http_server, oloproof

CONFIG = echo_http_config("X-Team: search", "Authorization: {authorization}")
CASES = [{"id": f"c{i}", "input": {"q": str(i)}, "expected": {"answer": "ok"}} for i in range(3)]
SECRET = "SECRET-7d1f0a"
REQUESTS: list[dict[str, str]] = []


class Answer(BaseHTTPRequestHandler):
    """Answers "ok" and keeps the headers of every request."""

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["Content-Length"]))
        REQUESTS.append(dict(self.headers.items()))
        data = json.dumps({"result": {"answer": "ok"}}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture
def serving() -> Iterator[str]:
    REQUESTS.clear()
    with http_server(Answer) as base:
        yield base + "/answer"


def _project(root: Path, url: str, authorization: str = '"Bearer ${TOKEN}"') -> Path:
    root.mkdir()
    config = CONFIG.format(url=url, authorization=authorization)
    (root / "oloproof.yaml").write_text(config)
    (root / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in CASES))
    return root


# The variable's bytes, as the process environment holds them, and what the refusal says of them.
BAD_VALUES = {
    "not_utf8": (b"tok-\xff\xfe-" + SECRET.encode(), "bytes that are not text"),
    "line_break": (f"tok-\n{SECRET}".encode(), "a line break"),
    "carriage_return": (f"tok-\r\nX-Injected: {SECRET}".encode(), "a line break"),
    "control": (f"tok-\x07{SECRET}".encode(), "a control character"),
    "non_ascii": (f"tok-€{SECRET}".encode(), "a character outside ASCII"),
    "edge_space": (f"{SECRET} ".encode(), "white space at the start or end of the header's value"),
}


@pytest.mark.parametrize("name", list(BAD_VALUES))
def test_a_header_variable_an_http_header_cannot_carry_is_refused(
    tmp_path: Path, serving: str, name: str
) -> None:
    raw, problem = BAD_VALUES[name]
    root = _project(tmp_path / "p", serving)
    result = oloproof("run", cwd=root, env={"TOKEN": os.fsdecode(raw)})
    assert (result.code, result.err) == (
        2,
        f"error: {root}/oloproof.yaml, line 10: system.http.headers.Authorization: environment "
        f"variable TOKEN holds {problem}, which an HTTP header cannot carry\n",
    )
    assert SECRET not in result.out + result.err
    assert result.out == ""
    assert not (root / ".oloproof").exists()
    assert REQUESTS == []


def test_an_empty_variable_that_leaves_the_header_ending_in_white_space(
    tmp_path: Path, serving: str
) -> None:
    root = _project(tmp_path / "p", serving)
    result = oloproof("run", cwd=root, env={"TOKEN": ""})
    assert (result.code, result.err) == (
        2,
        f"error: {root}/oloproof.yaml, line 10: system.http.headers.Authorization: environment "
        "variable TOKEN is empty, which leaves white space at the end of the header's value, "
        "which an HTTP header cannot carry\n",
    )
    assert not (root / ".oloproof").exists()
    assert REQUESTS == []


def test_a_header_whose_configured_text_cannot_be_sent(tmp_path: Path, serving: str) -> None:
    # A YAML block scalar keeps its last line break: "Bearer ${TOKEN}\n".
    root = _project(tmp_path / "p", serving, authorization="|\n        Bearer ${TOKEN}")
    result = oloproof("run", cwd=root, env={"TOKEN": SECRET})
    assert (result.code, result.err) == (
        2,
        f"error: {root}/oloproof.yaml, line 10: system.http.headers.Authorization: its "
        "configured value holds a line break, which an HTTP header cannot carry\n",
    )
    assert SECRET not in result.err
    assert not (root / ".oloproof").exists()


def test_a_header_name_that_is_not_a_token(tmp_path: Path, serving: str) -> None:
    root = _project(tmp_path / "p", serving)
    config = root / "oloproof.yaml"
    config.write_text(config.read_text().replace("X-Team:", "X Team:"))
    result = oloproof("run", cwd=root, env={"TOKEN": SECRET})
    assert (result.code, result.err) == (
        2,
        f"error: {root}/oloproof.yaml, line 9: system.http.headers: 'X Team' is not an HTTP "
        "header name (letters, digits and !#$%&'*+-.^_`|~ only)\n",
    )
    assert not (root / ".oloproof").exists()


def test_a_header_value_it_can_send_reaches_the_endpoint(tmp_path: Path, serving: str) -> None:
    root = _project(tmp_path / "p", serving)
    result = oloproof("run", cwd=root, env={"TOKEN": f"tok\t{SECRET}"})
    assert result.code == 0, result.err
    assert [r["Authorization"] for r in REQUESTS] == [f"Bearer tok\t{SECRET}"] * len(CASES)
    assert SECRET not in result.out + result.err


MEANT = {
    '"Bearer $TOKEN"': ("$TOKEN", "TOKEN"),
    '"Bearer ${TOKEN} $T"': ("$T", "T"),
    '"Bearer ${TOKEN"': ("${TOKEN", "TOKEN"),
}


@pytest.mark.parametrize("written", list(MEANT))
def test_a_variable_written_as_a_shell_reads_it_is_refused(
    tmp_path: Path, serving: str, written: str
) -> None:
    # `$TOKEN` without braces (or `${TOKEN` left open) was sent as written: every call failed
    # its authentication, one case at a time, the key never read.
    root = _project(tmp_path / "p", serving, authorization=written)
    fragment, name = MEANT[written]
    result = oloproof("run", cwd=root, env={"TOKEN": SECRET, "T": SECRET})
    assert (result.code, result.err) == (
        2,
        f"error: {root}/oloproof.yaml, line 10: system.http.headers.Authorization: {fragment} "
        f"would be sent as written: a header value reads a variable written ${{{name}}} (to "
        "send a '$' itself, give the whole value in a variable)\n",
    )
    assert SECRET not in result.out + result.err
    assert not (root / ".oloproof").exists()
    assert REQUESTS == []
