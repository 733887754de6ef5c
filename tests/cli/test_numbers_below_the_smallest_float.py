"""A JSON number too small for a float (``1e-400``, which Python reads as 0) is refused with
its line, exit 2, through the real CLI, as one too large for a float is.

Before the fix a case whose input held ``1e-400`` ran with 0.0 in its place: recorded and
judged as 0, a value the file does not hold; and ``qrels-to-cases``, which writes the cases
back (over the file by default), wrote ``0.0`` into the user's cases file. A zero written in
any form (``0e-400``, ``-0.0``) is a zero, and is taken.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.support import oloproof, toy_project

SMALL = ["1e-400", "-2.5E-330", "0.000001e-320"]


def _second_case(root: Path, number: str) -> bytes:
    line = '{"id": "c2", "input": {"q": "x", "n": ' + number + '}, "expected": {"answer": "x"}}'
    with (root / "cases.jsonl").open("a") as file:
        file.write(line + "\n")
    return (root / "cases.jsonl").read_bytes()


@pytest.mark.parametrize("number", SMALL)
def test_a_case_number_below_the_smallest_float_is_refused(tmp_path: Path, number: str) -> None:
    root = toy_project(tmp_path / "p")
    _second_case(root, number)
    result = oloproof("run", cwd=root)
    assert (result.code, result.out, result.err) == (
        2,
        "",
        f"error: {root}/cases.jsonl, line 2: the number {number} is too small to record (it "
        "would read as 0)\n",
    )
    assert not (root / ".oloproof").exists()


def test_qrels_to_cases_leaves_such_a_cases_file_as_it_was(tmp_path: Path) -> None:
    root = toy_project(tmp_path / "p")
    before = _second_case(root, "1e-400")
    (root / "qrels.txt").write_text("c1 0 d1 1\nc2 0 d2 1\n")
    result = oloproof("qrels-to-cases", "qrels.txt", cwd=root)
    assert (result.code, result.out, result.err) == (
        2,
        "",
        "error: cases.jsonl, line 2: the number 1e-400 is too small to record (it would read "
        "as 0)\n",
    )
    assert (root / "cases.jsonl").read_bytes() == before


@pytest.mark.parametrize("number", ["0e-400", "-0.0", "0.000e-5", "5e-324"])
def test_a_zero_or_the_smallest_float_is_taken(tmp_path: Path, number: str) -> None:
    root = toy_project(tmp_path / "p")
    _second_case(root, number)
    result = oloproof("run", "--json", cwd=root)
    assert result.code in (0, 3), result.err  # 2 cases are too few to pass the gate
    assert json.loads(result.out)["cases"] == 2
