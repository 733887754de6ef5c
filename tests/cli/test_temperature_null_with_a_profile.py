"""``temperature: null`` sends no temperature, with a ``server`` profile too, as the docs say of
an unset one ("not sent"): the profile's 0 is its default, and null is a choice of its own, as
``api_key_env: null`` is. Real CLI, judge server on 127.0.0.1 noting each request's body.

(Before: a judge with ``server: vllm`` and ``temperature: null`` sent ``"temperature": 0.0``:
the file asked for the model's own temperature, and the judge sampled at 0 without a word.)
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, ClassVar

import pytest
from tests.support import QuietHandler, http_server, oloproof, toy_project

JUDGE = """\
system: {{name: toy, version: "1", callable: app:run}}
evaluators:
  - type: answer_judge
    provider: openai
    server: vllm
    model: m
    base_url: {url}/v1
    max_retries: 0
{temperature}"""


class Noting(QuietHandler):
    """Notes each request's body; answers 503 (the verdict does not matter here)."""

    bodies: ClassVar[list[dict[str, Any]]] = []

    def do_POST(self) -> None:
        self.bodies.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
        self.reply(503, b"{}")


@pytest.mark.parametrize(
    ("given", "sent"),
    [("    temperature: null\n", None), ("", 0.0), ("    temperature: 0.7\n", 0.7)],
)
def test_null_sends_no_temperature(tmp_path: Path, given: str, sent: float | None) -> None:
    Noting.bodies.clear()
    with http_server(Noting) as base:
        root = toy_project(tmp_path / "p", config=JUDGE.format(url=base, temperature=given))
        done = oloproof("run", cwd=root)
    assert done.code == 0, done.out + done.err  # no policy: only the request is looked at
    (body,) = Noting.bodies
    assert body.get("temperature") == sent, body
    assert ("temperature" in body) == (sent is not None)
