"""An http system's ``Accept-Encoding`` header asking for a coding Oloproof cannot decode (``br``,
``*``) is refused when the run is planned, naming the header, exit 2: a configured header wins
over the one Oloproof sends, and a reply in that coding would error every case. Real CLI,
endpoint on 127.0.0.1.

(Before: ``Accept-Encoding: br`` was sent, the endpoint answered in br, and every case errored
saying the body 'is in Content-Encoding br, which Oloproof does not ask for', which it had;
with no policy the run exited 0.)
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.support import QuietHandler, echo_http_config, oloproof, served_project


class Brotli(QuietHandler):
    """Answers in the coding asked for (bytes standing for a br stream)."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["Content-Length"]))
        coding = self.headers.get("Accept-Encoding", "").split(",")[0].split(";")[0].strip()
        if coding in ("br", "*"):
            self.reply(200, b"\x8b\x02\x80{}\x03", **{"Content-Encoding": "br"})
        else:
            self.reply(200, b'{"result": {"answer": "x"}}')


CASES = [{"id": "c1", "input": {"q": "x"}, "expected": {"answer": "x"}}]


@pytest.mark.parametrize(
    ("value", "named"), [("br", "br"), ("'br;q=1.0, gzip'", "br"), ("'*'", "*")]
)
def test_a_coding_oloproof_cannot_read_is_refused(tmp_path: Path, value: str, named: str) -> None:
    config = echo_http_config(f"Accept-Encoding: {value}")
    with served_project(tmp_path / "p", Brotli, config, CASES) as root:
        done = oloproof("run", cwd=root)
    assert (done.code, done.out) == (2, ""), done.out + done.err
    assert done.err.endswith(
        f"system.http.headers.Accept-Encoding: asks for {named}, which Oloproof cannot decode (it "
        "reads gzip and deflate, and asks for them itself); leave the header out\n"
    ), done.err
    assert not (root / ".oloproof").exists()


def test_codings_it_reads_are_sent(tmp_path: Path) -> None:
    config = echo_http_config("Accept-Encoding: 'gzip, identity'")
    with served_project(tmp_path / "p", Brotli, config, CASES) as root:
        done = oloproof("run", cwd=root)
    assert done.code == 0, done.out + done.err
