"""A class built by ``ABCMeta`` (an ``abc.ABC`` subclass, a pydantic model) is not listed as state
the fingerprint cannot see, through the real CLI.

Such a class holds ``_abc_impl``, ``ABCMeta``'s record of its subclasses, which the fingerprint
read as an opaque object: every run that reused a result of such code said
``Not seen by the code fingerprint ...: helper.Answerer._abc_impl: a _abc._abc_data object``,
naming nothing the code reads, a warning to change ``system.version`` for no reason.
"""

from __future__ import annotations

from pathlib import Path

from tests.support import answered_project, oloproof

APP = """
from oloproof import system
from helper import Echo, Settings


@system(name="s", version="1")
def answer(case):
    return {"answer": Echo().answer(case["q"]) + Settings().suffix}
"""

HELPER = """
import abc

from pydantic import BaseModel


class Answerer(abc.ABC):
    @abc.abstractmethod
    def answer(self, question): ...


class Echo(Answerer):
    def answer(self, question):
        return question


class Settings(BaseModel):
    suffix: str = ""
"""


def test_a_reused_run_of_abstract_classes_lists_nothing_unseen(tmp_path: Path) -> None:
    root = answered_project(tmp_path / "p", APP, cases=2)
    (root / "helper.py").write_text(HELPER)
    first = oloproof("run", cwd=root)
    assert "Cache: execution 0 hit/2 miss; judgment 0 hit/2 miss" in first.lines, first.err

    dry = oloproof("run", "--dry-run", cwd=root)
    assert "Cases: 0 of 2 would execute; 2 reused from the execution cache" in dry.lines, dry.out
    again = oloproof("run", cwd=root)
    assert "Cache: execution 2 hit/0 miss; judgment 2 hit/0 miss" in again.lines, again.out
    for result in (first, dry, again):
        assert "Not seen" not in result.out, result.out
