"""An output holding a list (or tuple) of a class of its own whose `__iter__` fails, calls
`sys.exit` or raises its own KeyboardInterrupt stops the run naming the case, through the real
CLI, as a mapping of its own whose `items()` fails does.

The probe: `{"answer": L([1, 2])}`, `L` a list whose `__iter__` raised ValueError, ended
`oloproof run` in that ValueError's traceback (exit 1); calling `sys.exit(0)` it ended the run
with exit 0, printing nothing, the run left interrupted; raising KeyboardInterrupt (no signal
sent) it interrupted the run (exit 130).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.support import TOY_CONFIG, oloproof, toy_project

APP = """
import sys

from oloproof import system


class Items(list):
    def __iter__(self):
        FAILS


@system(name="toy", version="1")
def run(case):
    if case["q"] == "odd":
        return {"answer": Items([1, 2])}
    return {"answer": case["q"]}
"""


@pytest.mark.parametrize(
    ("fails", "why"),
    [
        ("raise ValueError('no items')", "ValueError: no items"),
        ("sys.exit(0)", "it called sys.exit(0)"),
        ("raise KeyboardInterrupt", "KeyboardInterrupt"),
    ],
)
def test_a_list_whose_items_cannot_be_read_stops_the_run_naming_the_case(
    tmp_path: Path, fails: str, why: str
) -> None:
    root = toy_project(tmp_path / "p", config=TOY_CONFIG.replace("policy: policy.yaml\n", ""))
    (root / "app.py").write_text(APP.replace("FAILS", fails))
    case = {"id": "c2", "input": {"q": "odd"}, "expected": {"answer": "x"}}
    with (root / "cases.jsonl").open("a") as cases:
        cases.write(json.dumps(case) + "\n")
    done = oloproof("run", cwd=root)
    assert done.code == 2, done.out + done.err  # was 1 (a traceback), 0 or 130
    assert done.err == (
        "error: case 'c2': the output cannot be recorded: output.answer is a value of type "
        f"Items, whose items could not be read: {why}\n"
    )
