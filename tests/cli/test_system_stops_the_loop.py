"""A system that stops the event loop it runs on does not end the run.

An async system runs on Oloproof's own event loop, and `asyncio.get_running_loop().stop()` in
it (a leftover of a script that ran its own loop) ended the run with a traceback and exit code
1, which reads as a FAILed rule, leaving the run unfinished. (A sync system never sees that
loop, on a thread or on the loop: it has none to stop.)
The loop is Oloproof's: a stop asked for by code running in a case is ignored, and the case's
answer is recorded as any other.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.support import oloproof

APP = """
import asyncio

from oloproof import system


@system(name="s", version="1")
async def answer(case):
    if case["q"] == "stop":
        asyncio.get_running_loop().stop()
    return {"answer": case["q"]}
"""

CONFIG = """
system: {name: s, version: "1", callable: app:answer}
dataset: cases.jsonl
evaluators:
  - {type: contains, criterion: answered, field: answer, expected_field: answer}
"""


def test_a_case_that_stops_the_loop_is_recorded_and_the_run_goes_on(tmp_path: Path) -> None:
    root = tmp_path / "p"
    root.mkdir()
    (root / "app.py").write_text(APP)
    (root / "oloproof.yaml").write_text(CONFIG)
    questions = [f"q{i}" for i in range(20)] + ["stop"] + [f"r{i}" for i in range(20)]
    (root / "cases.jsonl").write_text(
        "".join(
            json.dumps({"id": q, "input": {"q": q}, "expected": {"answer": q}}) + "\n"
            for q in questions
        )
    )
    result = oloproof("run", cwd=root)
    assert (result.code, result.err) == (0, ""), result.out + result.err
    assert "[NO_POLICY/COMPLETE]" in result.out
    assert "41 / 41 observed" in result.out, result.out
