"""A judge server that sends one reply too many while ``oloproof calibrate`` measures it: the
spare is no example's verdict.

A real server on 127.0.0.1 keeps its connection open and fails every labelled example but one,
which it answers with two ``pass`` replies in one write. The judge runs one call at a time
(``concurrency: 1``), so calibrate sends the next example's request after that reply. Calibrate
used to send it on the same kept-alive connection and read the spare ``pass`` waiting there as
the next example's verdict: the calibration counted two passes where the server had passed one
example (measured: true_pass 2 of the 40 examples). Now each call opens a connection of its own,
and the calibration counts the one pass the server gave.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

from tests.support import copy_example, http_server, oloproof

ENV = {"JUDGE_GATE_KEY": "sk-spare-reply-0123456789"}
# The first example's answer, as the groundedness prompt sets it out (others quote it as a passage).
MARKED = "<answer>\nNotes sync across devices every five minutes.\n</answer>"


def completion(verdict: str) -> bytes:
    content = json.dumps({"verdict": verdict, "reason": f"the server says {verdict}"})
    body = json.dumps(
        {
            "id": "c",
            "model": "m",
            # A whole reply says why it ended: one that does not is not read as a verdict.
            "choices": [{"message": {"content": content}, "finish_reason": "stop"}],
        }
    ).encode()
    head = f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {len(body)}"
    return f"{head}\r\n\r\n".encode() + body


class PassingOneTwice(BaseHTTPRequestHandler):
    """Passes the marked example with two replies in one write, fails any other; the
    connection stays open for the next request."""

    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:
        request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        asked = request["messages"][-1]["content"]
        if MARKED in asked:
            self.wfile.write(completion("pass") + completion("pass"))
        else:
            self.wfile.write(completion("fail"))

    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextlib.contextmanager
def served(tmp_path: Path) -> Iterator[Path]:
    """A copy of the judge_gate example judged by ``PassingOneTwice``, one call at a time."""
    root = copy_example("judge_gate", tmp_path)
    config = root / "oloproof.yaml"
    with http_server(PassingOneTwice) as base:
        text = config.read_text().replace("http://127.0.0.1:8767/v1", f"{base}/v1")
        config.write_text(text.replace("max_retries: 1", "max_retries: 0\n    concurrency: 1"))
        yield root


def test_a_spare_reply_is_not_read_as_the_next_examples_verdict(tmp_path: Path) -> None:
    with served(tmp_path) as root:
        args = ("calibrate", "--evaluator", "groundedness", "--labels", "labels.jsonl")
        calibrated = oloproof(*args, cwd=root, env=ENV)
    assert calibrated.code == 0, calibrated.out + calibrated.err
    address = calibrated.lines[-1].split()[-1]
    shown = oloproof("inspect", address, "--json", cwd=root)
    counts = json.loads(shown.out)["counts"]
    assert counts["true_pass"] + counts["false_pass"] == 1, counts
    assert counts["missing"] == 0, counts
