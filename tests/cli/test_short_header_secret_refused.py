"""A header value read from the environment that is too short to be kept out is refused before
a run, not stored. Real CLI runs in a subprocess, the system a real HTTP server on 127.0.0.1.

(Before: ``Authorization: "Bearer ${PROBE_T}"`` with PROBE_T=zq9x1 ran, exit 0, and the
server's answer repeating the header, ``you sent Bearer zq9x1``, was stored in the ledger and
printed by ``inspect`` as it was: values shorter than six characters are not searched for, and
nothing said that this one, which the guide says is never stored or printed, was not kept out.)
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.support import QuietHandler, echo_http_config, oloproof, served_project

CONFIG = echo_http_config('Authorization: "Bearer ${{PROBE_T}}"')
CASES = [{"id": "c1", "input": {"q": "hi"}, "expected": {"answer": "Bearer"}}]


class Echo(QuietHandler):
    """Answers with the Authorization header it was sent."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["Content-Length"]))
        said = {"result": {"answer": f"you sent {self.headers['Authorization']}"}}
        self.reply(200, json.dumps(said).encode())


def test_a_short_header_secret_stops_the_run_before_anything_is_written(
    tmp_path: Path,
) -> None:
    with served_project(tmp_path / "p", Echo, CONFIG, CASES) as root:
        done = oloproof("run", cwd=root, env={"PROBE_T": "zq9x1"})
    assert (done.code, done.out) == (2, "")
    assert done.err == (
        f"error: {root}/oloproof.yaml, line 9: system.http.headers.Authorization: environment "
        "variable PROBE_T holds fewer than 6 characters, too short to be kept out of what a run "
        "stores and prints (so short a text occurs in ordinary text); give it a longer value, "
        "or write a value that is no secret in the header itself\n"
    )
    assert "zq9x1" not in done.err
    assert not (root / ".oloproof").exists()


def test_a_header_secret_long_enough_runs_and_is_kept_out(tmp_path: Path) -> None:
    with served_project(tmp_path / "p", Echo, CONFIG, CASES) as root:
        done = oloproof("run", cwd=root, env={"PROBE_T": "zq9x1a"})
        shown = oloproof("inspect", "latest", "--case", "c1", cwd=root, env={"PROBE_T": "zq9x1a"})
    assert done.code == 0, done.err
    assert "you sent Bearer [redacted]" in shown.out, shown.out
    assert "zq9x1a" not in done.out + done.err + shown.out
