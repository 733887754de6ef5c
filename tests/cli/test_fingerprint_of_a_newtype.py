"""A ``typing.NewType`` the code reads (``UserId = NewType("UserId", int)``), directly or as a
field's annotation, is seen by the code fingerprint, through the real CLI.

It was read as an opaque object: a run that reused results said ``Not seen by the code
fingerprint ...: app.UserId: a typing.NewType object``, and editing it to ``NewType("UserId",
str)`` reused every answer of the old code.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.support import answered_project, oloproof

APP = """
from typing import NewType
from pydantic import BaseModel
from oloproof import system

UserId = NewType("UserId", int)


class Settings(BaseModel):
    uid: UserId = 1


@system(name="s", version="1")
def answer(case):
    return {{"answer": case["q"] + str({read})[:0]}}
"""

READS = {"by the code": "UserId", "as an annotation": "Settings().uid"}


@pytest.mark.parametrize("read", list(READS))
def test_a_reused_run_does_not_list_it_and_an_edit_executes_again(
    tmp_path: Path, read: str
) -> None:
    root = answered_project(tmp_path / "p", APP.format(read=READS[read]), cases=2)
    first = oloproof("run", cwd=root)
    assert "Cache: execution 0 hit/2 miss; judgment 0 hit/2 miss" in first.lines, first.err
    again = oloproof("run", cwd=root)
    assert "Cache: execution 2 hit/0 miss; judgment 2 hit/0 miss" in again.lines, again.out
    assert "Not seen" not in again.out, again.out
    app = root / "app.py"
    app.write_text(app.read_text().replace('NewType("UserId", int)', 'NewType("UserId", str)'))

    dry = oloproof("run", "--dry-run", cwd=root)
    assert "  2 executions: constant UserId in app.py changed" in dry.lines, dry.out
