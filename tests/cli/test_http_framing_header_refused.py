"""An http system's ``Content-Length`` or ``Transfer-Encoding`` header is refused when the run is
planned, naming the header, exit 2, nothing written: Oloproof frames the body it sends (the
case's input as JSON), and a configured header wins over the one it would send. Real CLI,
endpoint on 127.0.0.1.

(Before: the run started. ``Content-Length: '17'`` errored every case, each with a traceback,
as ``LocalProtocolError: Too little data for declared Content-Length``, naming no case and no
URL. ``Transfer-Encoding: chunked`` was sent beside the body's own ``Content-Length``, with the
body chunked: an endpoint reading the length got ``9\r\n{"q":"`` as the case's input, and
this one, which answers whatever it is sent, passed: ``NO_POLICY/COMPLETE``, exit 0.)
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.support import QuietHandler, echo_http_config, oloproof, served_project


class Answering(QuietHandler):
    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["Content-Length"]))
        self.reply(200, b'{"result": {"answer": "x"}}')


CASES = [{"id": "c1", "input": {"q": "x"}, "expected": {"answer": "x"}}]


@pytest.mark.parametrize(
    ("header", "named"),
    [
        ("Content-Length: '17'", "Content-Length"),
        ("transfer-encoding: chunked", "transfer-encoding"),
    ],
)
def test_a_header_framing_the_body_is_refused(tmp_path: Path, header: str, named: str) -> None:
    with served_project(tmp_path / "p", Answering, echo_http_config(header), CASES) as root:
        done = oloproof("run", cwd=root)
    assert (done.code, done.out) == (2, ""), done.out + done.err
    assert done.err.endswith(
        f"system.http.headers.{named}: Oloproof sends the case's input as the body and frames "
        "it itself; leave the header out\n"
    ), done.err
    assert not (root / ".oloproof").exists()
