"""Oloproof's own decorator is not taken for ``os.system`` in the ``Not seen`` line.

A system whose code looks a name up by a string (``globals()[NAME]``) has every name of its
module read, ``system`` among them (``from oloproof import system``, the decorator it is made
with). A library function held under another name is read by its own name (``from numpy import
load as np_load`` reads files), so ``system`` was taken for ``os.system``: ``oloproof run``
printed ``Not seen by the code fingerprint (change system.version when they change): programs it
starts while it runs (it uses system)`` for code that starts none. Oloproof's own functions do
nothing of what that line names; it is printed now only for what the code does.
"""

from __future__ import annotations

from pathlib import Path

from tests.support import answered_project, oloproof

APP = """
from oloproof import system

NAME = "echo"


def echo(q):
    return q


@system(name="s", version="1")
def answer(case):
    return {"answer": globals()[NAME](case["q"])}
"""


def test_a_lookup_by_name_names_no_program_started(tmp_path: Path) -> None:
    root = answered_project(tmp_path / "p", APP, cases=2)
    done = oloproof("run", cwd=root)
    assert "Cache: execution 0 hit/2 miss; judgment 0 hit/2 miss" in done.lines, done.err
    again = oloproof("run", cwd=root)
    assert "Cache: execution 2 hit/0 miss; judgment 2 hit/0 miss" in again.lines, again.out
    assert "Not seen" not in again.out + again.err, again.out
