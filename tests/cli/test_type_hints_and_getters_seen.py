"""Module-level type hints (``typing.Literal``, ``Optional``, ``list[str]``, a ``TypeVar``), an
``operator.itemgetter`` / ``attrgetter`` / ``methodcaller`` and a ``datetime.timezone`` that the
code reads are seen by the code fingerprint, through the real CLI: an edit to one executes
again, and a run that reuses results does not list them as unseen.

Each was read as an opaque object: a run that reused results said ``Not seen by the code
fingerprint ...: app.MODES: a typing._LiteralGenericAlias object; app.KEY: a operator.itemgetter
object; ...``, and an edit to one (``Literal["a", "b"]`` to ``Literal["a", "c"]``,
``itemgetter("score")`` to ``itemgetter("rank")``) reused every answer of the old code.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.support import answered_project, oloproof

APP = """
import datetime
import operator
import typing

from oloproof import system

MODES = typing.Literal["a", "b"]
MAYBE = typing.Optional[typing.List[str]]
UNION = int | None
T = typing.TypeVar("T", bound=str)
KEY = operator.itemgetter("score")
NAME = operator.attrgetter("real")
CALL = operator.methodcaller("strip", "x")
TZ = datetime.timezone(datetime.timedelta(hours=1))


@system(name="s", version="1")
def answer(case):
    used = (typing.get_args(MODES), MAYBE, UNION, T, KEY, NAME, CALL, TZ)
    return {"answer": case["q"] + " " * (len(used) > 99)}
"""

# Per constant: its text before and after the edit.
EDITS = {
    "MODES": ('Literal["a", "b"]', 'Literal["a", "c"]'),
    "MAYBE": ("List[str]]", "List[int]]"),
    "UNION": ("int | None", "str | None"),
    "T": ("bound=str", "bound=int"),
    "KEY": ('itemgetter("score")', 'itemgetter("rank")'),
    "NAME": ('attrgetter("real")', 'attrgetter("imag")'),
    "CALL": ('"strip", "x"', '"strip", "y"'),
    "TZ": ("hours=1", "hours=2"),
}


def test_a_reused_run_lists_none_of_them_as_unseen(tmp_path: Path) -> None:
    root = answered_project(tmp_path / "p", APP, cases=2)
    first = oloproof("run", cwd=root)
    assert "Cache: execution 0 hit/2 miss; judgment 0 hit/2 miss" in first.lines, first.err
    again = oloproof("run", cwd=root)
    assert "Cache: execution 2 hit/0 miss; judgment 2 hit/0 miss" in again.lines, again.out
    assert "Not seen" not in again.out, again.out


@pytest.mark.parametrize("name", list(EDITS))
def test_an_edit_to_one_executes_again(tmp_path: Path, name: str) -> None:
    before, after = EDITS[name]
    root = answered_project(tmp_path / "p", APP, cases=2)
    first = oloproof("run", cwd=root)
    assert "Cache: execution 0 hit/2 miss; judgment 0 hit/2 miss" in first.lines, first.err
    app = root / "app.py"
    assert app.read_text().count(before) == 1
    app.write_text(app.read_text().replace(before, after))
    dry = oloproof("run", "--dry-run", cwd=root)
    assert f"  2 executions: constant {name} in app.py changed" in dry.lines, dry.out
