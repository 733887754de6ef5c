"""A constant whose class is the user's subclass of a built-in value type (``class
Prompt(str)``) holds its value outside its attributes: an edit to that value is an edit to the
system, so its cached executions are not reused."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.support import answered_project, oloproof

APP = """
import datetime
import decimal

from oloproof import system


class Value({base}):
    pass


SUFFIX = Value({value})


@system(name="s", version="1")
def answer(case):
    return {{"answer": case["q"] + " " + str(SUFFIX)}}
"""

# Per base type: the constant's arguments before and after the edit.
EDITS = {
    "str": ("'kept'", "'edited'"),
    "int": ("1", "2"),
    "float": ("0.5", "0.25"),
    "bytes": ("b'kept'", "b'edited'"),
    "decimal.Decimal": ("'1.5'", "'2.5'"),
    "datetime.date": ("2026, 1, 1", "2026, 1, 2"),
}


@pytest.mark.parametrize("base", list(EDITS))
def test_editing_the_value_executes_again(tmp_path: Path, base: str) -> None:
    before, after = EDITS[base]
    root = answered_project(tmp_path / "p", APP.format(base=base, value=before), cases=2)
    first = oloproof("run", cwd=root)
    assert "Cache: execution 0 hit/2 miss; judgment 0 hit/2 miss" in first.lines, first.err
    app = root / "app.py"
    app.write_text(app.read_text().replace(f"Value({before})", f"Value({after})"))

    dry = oloproof("run", "--dry-run", cwd=root)
    assert "  2 executions: constant SUFFIX in app.py changed" in dry.lines, dry.out + dry.err
    second = oloproof("run", cwd=root)
    assert "Cache: execution 0 hit/2 miss; judgment 0 hit/2 miss" in second.lines, second.out
