"""A secret a library cut short in its error is kept out of what is stored all the same.

Through the real CLI, on a real ledger. A system checks its settings with pydantic, and its
service key (declared under ``secrets:``, 64 characters) is given where a port number should be.
pydantic shortens an input value over 48 characters in its message to its first and last 24
(``input_value='sk-svc-…...…'``), so neither piece is the whole secret, and 48 of its 64
characters were stored in the case's error (message and traceback) and printed by ``inspect``.
Each run of at least 12 characters of a secret in an error of user code is now replaced as the
whole is, and counted among the occurrences the run kept out.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.support import oloproof, stored_bytes

SECRET = "sk-svc-" + "7d41c2f09b3e8a6f" * 3 + "Qx9Tz4LmW8rNp2Va5"

APP = """
import os

from pydantic import BaseModel

from oloproof import system


class Settings(BaseModel):
    port: int


@system(name="s", version="1")
def answer(case):
    if case["q"] == "misconfigured":
        Settings(port=os.environ["SERVICE_KEY"])  # the key where the port belongs
    return {"answer": case["q"]}
"""

CONFIG = """
system: {name: s, version: "1", callable: app:answer}
dataset: cases.jsonl
secrets: [SERVICE_KEY]
evaluators:
  - {type: contains, criterion: answered, field: answer, expected_field: answer}
"""


def test_the_pieces_of_a_secret_a_library_cut_are_kept_out(tmp_path: Path) -> None:
    root = tmp_path / "p"
    root.mkdir()
    (root / "app.py").write_text(APP)
    (root / "oloproof.yaml").write_text(CONFIG)
    (root / "cases.jsonl").write_text(
        "".join(
            json.dumps({"id": q, "input": {"q": q}, "expected": {"answer": q}}) + "\n"
            for q in ("plain", "misconfigured")
        )
    )
    env = {"SERVICE_KEY": SECRET}
    run = oloproof("run", cwd=root, env=env)
    assert run.code == 0, run.out + run.err
    # Two pieces, each in the error's message and in its traceback
    assert "Redacted: 4 occurrences of configured secrets" in run.out, run.out
    shown = oloproof("inspect", "latest", "--case", "misconfigured", cwd=root, env=env)
    assert shown.code == 0, shown.out + shown.err
    assert "input_value='[redacted]...[redacted]', input_type=str" in shown.out, shown.out
    stored = stored_bytes(root)
    for piece in (SECRET[:24], SECRET[-24:], SECRET[20:32]):
        assert piece not in shown.out + run.out + run.err, piece
        assert piece.encode() not in stored, piece
