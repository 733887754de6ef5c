"""A class with slots (``__slots__``, ``dataclass(slots=True)``) is not listed as state the code
fingerprint cannot see, through the real CLI, and an edit to what its instance holds still
executes again.

Each slot is a descriptor among the class's attributes, which the fingerprint read as an opaque
object: every run that reused a result of such code said ``Not seen by the code fingerprint
...: app.Settings.model: a builtins.member_descriptor object``, naming nothing the code reads
that the class's source and its instance's slots do not already count.
"""

from __future__ import annotations

from pathlib import Path

from tests.support import answered_project, oloproof

APP = """
import dataclasses

from oloproof import system


@dataclasses.dataclass(frozen=True, slots=True)
class Settings:
    model: str = "small"


class Prompt:
    __slots__ = ("suffix",)

    def __init__(self, suffix):
        self.suffix = suffix


SETTINGS = Settings()
PROMPT = Prompt("kept")


@system(name="s", version="1")
def answer(case):
    return {"answer": case["q"] + " " * (len(SETTINGS.model + PROMPT.suffix) > 99)}
"""


def test_slots_are_not_listed_and_what_they_hold_counts(tmp_path: Path) -> None:
    root = answered_project(tmp_path / "p", APP, cases=2)
    first = oloproof("run", cwd=root)
    assert "Cache: execution 0 hit/2 miss; judgment 0 hit/2 miss" in first.lines, first.err

    dry = oloproof("run", "--dry-run", cwd=root)
    again = oloproof("run", cwd=root)
    assert "Cache: execution 2 hit/0 miss; judgment 2 hit/0 miss" in again.lines, again.out
    for result in (dry, again):
        assert "Not seen" not in result.out, result.out

    app = root / "app.py"
    app.write_text(app.read_text().replace('Prompt("kept")', 'Prompt("edited")'))
    edited = oloproof("run", "--dry-run", cwd=root)
    assert "  2 executions: constant PROMPT in app.py changed" in edited.lines, edited.out
