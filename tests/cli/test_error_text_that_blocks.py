"""A system's exception whose text (`__str__`) takes longer than the case may errors that case
as timed out, and the run carries on, through the real CLI.

The probe: a plain system raising an exception whose `__str__` sleeps 4 s, under `timeout_s: 1`.
The exception's text is made on the event loop once the call has ended; the watch on the loop
stopped it there past the deadline, and what it raised there (Oloproof's own `Overran`) escaped
the case: `oloproof run` ended in a traceback, exit 1, as if a rule had failed. Now the case is
errored `TimeoutError: the case took longer than 1 s` and the other case is judged.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.support import TOY_CONFIG, oloproof, toy_project

APP = """
import time

from oloproof import system


class Slow(Exception):
    def __str__(self):
        time.sleep(4)
        return "slow"


@system(name="toy", version="1")
def run(case):
    if case["q"] == "slow":
        raise Slow()
    return {"answer": case["q"]}
"""


def test_an_error_whose_text_takes_too_long_times_its_case_out(tmp_path: Path) -> None:
    config = TOY_CONFIG.replace("policy: policy.yaml\n", "timeout_s: 1\n")
    root = toy_project(tmp_path / "p", config=config)
    (root / "app.py").write_text(APP)
    slow = {"id": "c2", "input": {"q": "slow"}, "expected": {"answer": "x"}}
    with (root / "cases.jsonl").open("a") as cases:
        cases.write(json.dumps(slow) + "\n")
    done = oloproof("run", cwd=root)
    assert "Traceback" not in done.err  # was Overran's traceback, exit 1
    assert done.code == 0, done.out + done.err
    assert "1 of 2 cases errored: TimeoutError: the case took longer than 1 s" in done.out
    assert "1 / 1 observed · 1 missing" in done.out
