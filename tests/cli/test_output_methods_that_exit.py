"""An output holding objects whose own methods (`__repr__`, `__lt__`, `__str__`) call
`sys.exit`, raise `KeyboardInterrupt` (no signal sent) or `GeneratorExit` as Oloproof writes it
down, through the real CLI.

The probe: a set of members whose `__lt__` called `sys.exit(0)` ended `oloproof run` with
exit 0, printing nothing, the run left interrupted; one whose `__lt__` raised
KeyboardInterrupt, and an object whose `__repr__` did, interrupted the run (exit 130, 'finish
with: oloproof run --resume'); a `__repr__` raising GeneratorExit ended it in a traceback
('RuntimeError: coroutine ignored GeneratorExit', exit 1); and two keys written as one text
whose `__repr__` raised ValueError ended it in that ValueError's traceback (exit 1), or, calling
`sys.exit(0)`, with exit 0 printing nothing. Now a set whose members do not compare is written
in the order of their text, as for any other failing `__lt__`, and the run is decided; the others
stop the run naming the case, as any output that cannot be written down does, exit 2.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.support import TOY_CONFIG, oloproof, toy_project

APP = """
import os
import sys

from oloproof import system


class Member:
    def __lt__(self, other):
        LT

    def __repr__(self):
        return "m"


class Shown:
    def __repr__(self):
        REPR


class Key:
    def __init__(self, n):
        self.n = n

    def __hash__(self):
        return self.n

    def __str__(self):
        return "k"

    def __repr__(self):
        REPR


@system(name="toy", version="1")
def run(case):
    if case["q"] == "set":
        return {"answer": {Member(), Member()}}
    if case["q"] == "shown":
        return {"answer": Shown()}
    if case["q"] == "keys":
        return {"answer": {Key(1): 1, Key(2): 2}}
    return {"answer": case["q"]}
"""

EXITS = ["sys.exit(0)", "raise KeyboardInterrupt", "raise GeneratorExit"]


def project(root: Path, q: str, lt: str = "pass", shown: str = "return 'r'") -> Path:
    toy_project(root, config=TOY_CONFIG.replace("policy: policy.yaml\n", ""))
    (root / "app.py").write_text(APP.replace("LT", lt).replace("REPR", shown))
    case = {"id": "c2", "input": {"q": q}, "expected": {"answer": "x"}}
    with (root / "cases.jsonl").open("a") as cases:
        cases.write(json.dumps(case) + "\n")
    return root


@pytest.mark.parametrize("lt", EXITS)
def test_a_set_whose_members_exit_as_compared_is_written_in_the_order_of_their_text(
    tmp_path: Path, lt: str
) -> None:
    root = project(tmp_path / "p", "set", lt=lt)
    done = oloproof("run", cwd=root)
    # Was exit 0 printing nothing (sys.exit), 130, interrupted (KeyboardInterrupt), or 1.
    assert done.code == 0, done.out + done.err
    assert done.err == ""
    shown = oloproof("inspect", done.lines[0].split()[1], "--case", "c2", cwd=root)
    assert "    answer: {m, m}\n" in shown.out, shown.out


@pytest.mark.parametrize("exits", EXITS)
def test_an_object_whose_text_exits_stops_the_run_naming_the_case(
    tmp_path: Path, exits: str
) -> None:
    root = project(tmp_path / "p", "shown", shown=exits)
    done = oloproof("run", cwd=root)
    assert done.code == 2, done.out + done.err  # was 0, 130 or a traceback (1)
    assert done.err.startswith(
        "error: case 'c2': the output cannot be recorded: output.answer is a value of type "
        "Shown, whose text could not be made: "
    ), done.err
    assert "Traceback" not in done.err


@pytest.mark.parametrize("exits", ["raise ValueError('no text')", *EXITS])
def test_two_keys_of_one_text_whose_repr_fails_stop_the_run_naming_the_case(
    tmp_path: Path, exits: str
) -> None:
    root = project(tmp_path / "p", "keys", shown=exits)
    done = oloproof("run", cwd=root)
    assert done.code == 2, done.out + done.err  # was a traceback (1), 0 or 130
    assert done.err == (
        "error: case 'c2': the output cannot be recorded: two keys of one mapping in it are "
        "the same text once written as text, <exception repr() failed> and "
        "<exception repr() failed>: one of their values would be lost\n"
    )
