"""An HTTP system's retries: the doubling backoff stops at 30 s, as a judge's call's does, and a
case stopped at its timeout while retrying records the failure it was retrying past, redacted
as every record is. Real CLI, endpoint on 127.0.0.1.

(Before: an endpoint answering 503 to every try, retried with ``backoff_s: 1`` under a case
``timeout_s`` of 2.5, recorded only 'the case took longer than 2.5 s': the 503 and its body,
why the case was still trying, were lost; and the wait doubled without end, so ``backoff_s:
31`` waited 31 s where the judges' backoff waits at most 30.)
"""

from __future__ import annotations

import json
import threading
from pathlib import Path

from tests.support import QuietHandler, oloproof, served_project

CONFIG = """\
system:
  name: echo
  version: "1"
  http:
    url: {{url}}
    output_path: result
    timeout_s: 2
    retries: {retries}
    backoff_s: {backoff}
    headers:
      Authorization: Bearer ${{{{SVC_TOKEN}}}}
timeout_s: {case}
evaluators:
  - {{{{type: contains, criterion: ok, field: answer, expected_field: answer}}}}
"""
CASES = [{"id": "c1", "input": {"q": "x"}, "expected": {"answer": "x"}}]
TOKEN = "sk-svc-0123456789abcdef"


class Overloaded(QuietHandler):
    """503 to every try, its body echoing the token the request carried."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["Content-Length"]))
        echoed = self.headers["Authorization"].encode()
        self.reply(503, b"Service Unavailable: overloaded (" + echoed + b")")


class OverloadedTwice(QuietHandler):
    """503 to the first two tries, then the answer."""

    tries = 0
    lock = threading.Lock()

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["Content-Length"]))
        with self.lock:
            type(self).tries += 1
            early = self.tries <= 2
        if early:
            self.reply(503, b"Service Unavailable")
        else:
            self.reply(200, json.dumps({"result": {"answer": "x"}}).encode())


def errors_of(root: Path) -> dict[str, str]:
    shown = oloproof("inspect", "latest", "--failures", "--json", cwd=root)
    assert shown.code == 0, shown.err
    assert TOKEN not in shown.out
    return {case["case_id"]: case["error"]["message"] for case in json.loads(shown.out)["failed"]}


def test_a_case_timed_out_while_retrying_keeps_the_failure(tmp_path: Path) -> None:
    # Tries at 0 s and 1 s fail; the wait for the third (2 s) outlasts the case's 2.5 s.
    config = CONFIG.format(retries=8, backoff=1, case=2.5)
    with served_project(tmp_path / "p", Overloaded, config, CASES) as root:
        done = oloproof("run", cwd=root, env={"SVC_TOKEN": TOKEN})
        assert done.code == 0, done.out + done.err
        assert errors_of(root) == {
            "c1": "the case took longer than 2.5 s; try 2 of 9 had failed: HTTP 503: Service "
            "Unavailable: overloaded (Bearer [redacted])"
        }


def test_a_thousand_tries_without_a_wait_end_in_the_503(tmp_path: Path) -> None:
    # The 1,025th wait would be 0 s times 2 ** 1024, more than a float holds.
    config = CONFIG.format(retries=1100, backoff=0, case=110)
    with served_project(tmp_path / "p", Overloaded, config, CASES) as root:
        done = oloproof("run", cwd=root, env={"SVC_TOKEN": TOKEN})
        assert done.code == 0, done.out + done.err
        (message,) = errors_of(root).values()
    assert message.endswith(
        "failed after 1101 tries: HTTP 503: Service Unavailable: overloaded (Bearer [redacted])"
    ), message


def test_the_backoff_stops_at_30_s(tmp_path: Path) -> None:
    # A first wait of 16 s, then 30 rather than 32: the third try answers within the case's
    # 46.5 s. (A first wait above 30 is refused: test_backoff_above_the_cap.)
    config = CONFIG.format(retries=2, backoff=16, case=46.5)
    with served_project(tmp_path / "p", OverloadedTwice, config, CASES) as root:
        done = oloproof("run", "--json", cwd=root, env={"SVC_TOKEN": TOKEN}, timeout=120)
    assert done.code == 0, done.out + done.err
    (metric,) = json.loads(done.out)["metrics"]
    assert (metric["observed"], metric["missing"]) == (1, 0), metric
