"""A constant whose class is the user's subclass of ``collections.deque``, ``array.array`` or
``collections.ChainMap`` holds its items outside its attributes: an edit to them is an edit to
the system, so its cached executions are not reused, through the real CLI. The items are read
by the base type's own methods, so an override in the subclass does not run."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.support import answered_project, oloproof

APP = """
import array
import collections

from oloproof import system


class Held({base}):
    def __iter__(self):
        raise RuntimeError("the fingerprint ran the subclass's code")

    def tobytes(self):
        raise RuntimeError("the fingerprint ran the subclass's code")


HELD = Held({value})


@system(name="s", version="1")
def answer(case):
    return {{"answer": case["q"] + " " * (len(HELD) - len(HELD))}}
"""

# Per base type: the constant's arguments before and after the edit.
EDITS = {
    "collections.deque": ("['kept']", "['edited']"),
    "array.array": ("'i', [1]", "'i', [2]"),
    "collections.ChainMap": ("{'k': 'kept'}", "{'k': 'edited'}"),
}


@pytest.mark.parametrize("base", list(EDITS))
def test_editing_the_items_executes_again(tmp_path: Path, base: str) -> None:
    before, after = EDITS[base]
    root = answered_project(tmp_path / "p", APP.format(base=base, value=before), cases=2)
    first = oloproof("run", cwd=root)
    assert "Cache: execution 0 hit/2 miss; judgment 0 hit/2 miss" in first.lines, first.err
    again = oloproof("run", cwd=root)
    assert "Cache: execution 2 hit/0 miss; judgment 2 hit/0 miss" in again.lines, again.out
    assert "Not seen" not in again.out, again.out
    app = root / "app.py"
    app.write_text(app.read_text().replace(f"Held({before})", f"Held({after})"))

    dry = oloproof("run", "--dry-run", cwd=root)
    assert "  2 executions: constant HELD in app.py changed" in dry.lines, dry.out + dry.err
    second = oloproof("run", cwd=root)
    assert "Cache: execution 0 hit/2 miss; judgment 0 hit/2 miss" in second.lines, second.out
