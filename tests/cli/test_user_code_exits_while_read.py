"""User code that calls `sys.exit` (or raises its own KeyboardInterrupt) while Oloproof reads
what it made, an exception's text or an output's values, costs only its case, through the real
CLI.

The probe: a system raising an exception whose `__str__` calls `sys.exit(0)` ended
`oloproof run` with exit 0, printing nothing, the run left interrupted: a green exit code for a
run that never finished. One whose `__str__` raised KeyboardInterrupt (no signal sent) ended it
as interrupted (exit 130). An output holding an array-like object whose `tolist()` called
`sys.exit(0)` ended it with exit 0, printing nothing, too. Now the first two errored their case
(`<exception str() failed>`, as Python's tracebacks print it) and the run is decided; the
third stops the run naming the case, as any output whose values cannot be read does.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.support import TOY_CONFIG, oloproof, toy_project

APP = """
import sys

from oloproof import system


class Odd(Exception):
    def __str__(self):
        STR


class Values:
    dtype = "float64"

    def tolist(self):
        sys.exit(0)


@system(name="toy", version="1")
def run(case):
    if case["q"] == "odd":
        raise Odd()
    if case["q"] == "values":
        return {"answer": Values()}
    return {"answer": case["q"]}
"""


def project(root: Path, q: str, text: str = "sys.exit(0)") -> Path:
    toy_project(root, config=TOY_CONFIG.replace("policy: policy.yaml\n", ""))
    (root / "app.py").write_text(APP.replace("STR", text))
    case = {"id": "c2", "input": {"q": q}, "expected": {"answer": "x"}}
    with (root / "cases.jsonl").open("a") as cases:
        cases.write(json.dumps(case) + "\n")
    return root


@pytest.mark.parametrize("text", ["sys.exit(0)", "raise KeyboardInterrupt"])
def test_an_error_whose_text_exits_errors_its_case(tmp_path: Path, text: str) -> None:
    root = project(tmp_path / "p", "odd", text)
    done = oloproof("run", cwd=root)
    # Was exit 0 printing nothing (sys.exit), or 130, interrupted (KeyboardInterrupt).
    assert done.code == 0, done.out + done.err
    assert done.lines[0].endswith("[NO_POLICY/PARTIAL]"), done.out
    assert "1 of 2 cases errored: Odd: <exception str() failed>" in done.out


def test_an_output_whose_values_exit_stops_the_run_naming_the_case(tmp_path: Path) -> None:
    root = project(tmp_path / "p", "values")
    done = oloproof("run", cwd=root)
    assert done.code == 2, done.out + done.err  # was 0, printing nothing
    assert done.err == (
        "error: case 'c2': the output cannot be recorded: output.answer is a value of type "
        "Values, whose values could not be read: it called sys.exit(0)\n"
    )
