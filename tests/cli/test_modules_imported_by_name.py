"""A module a system imports by name at run time is part of its code fingerprint.

`importlib.import_module("helper")` (or `__import__`) inside the system's function loads its
module while the case runs, where the fingerprint, which follows `import` statements, did not
look: an edit to the helper reused every execution made by the old code, and the run said
nothing of it. A name given as text is now followed as an `import` statement is; a name made
while the system runs is named among what the fingerprint cannot see.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.support import oloproof

APP = """
import importlib

from oloproof import system


@system(name="plugins", version="1")
def answer(case):
    helper = {load}
    return {{"answer": helper.reply(case["q"])}}
"""

HELPER = """
def reply(question):
    return question
"""

CONFIG = """
system: {name: plugins, version: "1", callable: app:answer}
dataset: cases.jsonl
evaluators:
  - {type: contains, criterion: answered, field: answer, expected_field: answer}
"""

UNSEEN = (
    "Not seen by the code fingerprint (change system.version when they change): a module "
    "imported by a name made while the code runs (importlib.import_module or __import__)"
)


def _project(root: Path, load: str) -> Path:
    root.mkdir()
    (root / "app.py").write_text(APP.format(load=load))
    (root / "helper.py").write_text(HELPER)
    (root / "oloproof.yaml").write_text(CONFIG)
    (root / "cases.jsonl").write_text(
        json.dumps({"id": "c1", "input": {"q": "yes"}, "expected": {"answer": "yes"}}) + "\n"
    )
    return root


@pytest.mark.parametrize("load", ['importlib.import_module("helper")', '__import__("helper")'])
def test_an_edit_to_a_module_imported_by_name_executes_again(tmp_path: Path, load: str) -> None:
    root = _project(tmp_path / "p", load)
    first = oloproof("run", cwd=root)
    assert first.code == 0, first.out + first.err
    (root / "helper.py").write_text(HELPER.replace("return question", 'return "no"'))
    again = oloproof("run", cwd=root)
    assert "Cache: execution 0 hit/1 miss; judgment 0 hit/1 miss" in again.lines, again.out
    assert "answered │ 0.0%" in again.out, again.out


def test_a_module_name_made_at_run_time_is_said_to_be_unseen(tmp_path: Path) -> None:
    root = _project(tmp_path / "p", 'importlib.import_module("HELPER".lower())')
    first = oloproof("run", cwd=root)
    assert first.code == 0, first.out + first.err
    assert UNSEEN in oloproof("run", "--dry-run", cwd=root).lines
    again = oloproof("run", cwd=root)
    assert "Cache: execution 1 hit/0 miss; judgment 1 hit/0 miss" in again.lines, again.out
    assert UNSEEN in again.lines, again.out
