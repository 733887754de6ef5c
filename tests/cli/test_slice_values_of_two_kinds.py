"""Two cases whose values of one slice are of different kinds but print alike are refused:
the number 1 and the string "1", true and "true", a list and the text of it, the string
"(none)" and no value. Real CLI.

(Before: each pair counted in one row of ``oloproof run --slices``, ``metadata.k │ 1`` with
both cases, and nothing anywhere said that the cases file held two values there.) Values of one
kind are never refused: 1 and 1.0 read "1" and "1.0", two rows.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.support import oloproof, write_project

APP = """
from oloproof import system

@system(name="echo", version="1")
def run(case):
    return {"answer": case["q"]}
"""
CONFIG = """\
system: {name: echo, version: "1", callable: app:run}
dataset: cases.jsonl
evaluators:
  - {type: contains, criterion: echo, field: answer, expected_field: answer}
slices: [metadata.k]
min_slice_support: 1
"""


def _run(root: Path, first: Any, second: Any) -> tuple[int, str, str]:
    """``run --slices --json`` of three cases: c1 holding ``first``, c2 no value, c3 holding
    ``second``."""
    cases = [
        {"id": f"c{i}", "input": {"q": "x"}, "expected": {"answer": "x"}, "metadata": {"k": v}}
        for i, v in ((1, first), (3, second))
    ]
    cases.insert(1, {"id": "c2", "input": {"q": "x"}, "expected": {"answer": "x"}})
    write_project(root, app=APP, config=CONFIG, policy="version: 1\nrules: []\n", cases=cases)
    done = oloproof("run", "--slices", "--json", cwd=root)
    return done.code, done.out, done.err


@pytest.mark.parametrize(
    ("first", "second", "held"),
    [
        (1, "1", "the number 1 on line 1 (case 'c1') and as the string \"1\" on line 3"),
        (
            True,
            "true",
            "the boolean true on line 1 (case 'c1') and as the string \"true\" on line 3",
        ),
        ([1], "[1]", "the list [1] on line 1 (case 'c1') and as the string \"[1]\" on line 3"),
        (2.5, "2.5", "the number 2.5 on line 1 (case 'c1') and as the string \"2.5\" on line 3"),
    ],
)
def test_two_kinds_in_one_row_are_refused(
    tmp_path: Path, first: Any, second: Any, held: str
) -> None:
    root = tmp_path / "p"
    code, out, err = _run(root, first, second)
    assert (code, out) == (2, ""), err
    row = json.dumps(first) if not isinstance(first, bool) else "true"
    assert err == (
        f"error: {(root / 'oloproof.yaml').resolve()}, line 5: slices: metadata.k: "
        f"{(root / 'cases.jsonl').resolve()} holds it as {held} (case 'c3'), which the report "
        f"would count in one row ({row}); write the value one way in both\n"
    )
    assert not (root / ".oloproof").exists()


def test_the_text_none_and_no_value(tmp_path: Path) -> None:
    code, out, err = _run(tmp_path / "p", "(none)", "a")
    assert (code, out) == (2, ""), err
    assert (
        "holds it as the string \"(none)\" on line 1 (case 'c1') and as no value on line 2 "
        "(case 'c2'), which the report would count in one row ((none))"
    ) in err


@pytest.mark.parametrize(
    ("first", "second", "rows"),
    [
        (1, 1.0, {"1": 1, "1.0": 1, "(none)": 1}),
        (1, 1, {"1": 2, "(none)": 1}),
        ("1", "1", {"1": 2, "(none)": 1}),
        (None, "a", {"a": 1, "(none)": 2}),  # null is no value, as a missing key is
        (1, True, {"1": 1, "true": 1, "(none)": 1}),
    ],
)
def test_values_of_one_kind_are_read(
    tmp_path: Path, first: Any, second: Any, rows: dict[str, int]
) -> None:
    code, out, err = _run(tmp_path / "p", first, second)
    assert code == 0, out + err
    found = {s["value"]: s["metric"]["observed"] for s in json.loads(out)["slices"]}
    assert found == rows
