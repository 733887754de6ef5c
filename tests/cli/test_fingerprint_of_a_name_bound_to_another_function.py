"""A module-level name or class attribute bound to a function or class of another name
(``PICK = max``, ``from math import floor as rounding``, ``Number = int``, a staged
system's ``pick = max`` or ``staticmethod(max)`` read as ``self.pick``) is seen by the code
fingerprint for which one it holds, through the real CLI.

Only the referent was counted, under its own name, and a built-in or library one by no more than
Python's version: editing ``PICK = max`` to ``PICK = min`` reused every answer of the old code
(``Cache: execution 2 hit/0 miss``) with no ``Not seen by the code fingerprint`` line, and the
answers the run reported were those of ``max``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.support import answered_project, oloproof, write_project

APP = """
import math
from math import floor as rounding
from oloproof import system

PICK = max
Number = int


@system(name="s", version="1")
def answer(case):
    return {{"answer": case["q"] + str({read})[:0]}}
"""

# What the system reads, and the edit that rebinds the name to another function or class.
EDITS = {
    "a built-in function": ("PICK([1, 2])", "PICK = max", "PICK = min", "constant PICK"),
    "an import under another name": (
        "rounding(1.5)",
        "from math import floor as rounding",
        "from math import ceil as rounding",
        "constant rounding",
    ),
    "a built-in class": ('Number("7")', "Number = int", "Number = float", "constant Number"),
}


@pytest.mark.parametrize("edit", list(EDITS))
def test_rebinding_the_name_executes_again(tmp_path: Path, edit: str) -> None:
    read, old, new, named = EDITS[edit]
    root = answered_project(tmp_path / "p", APP.format(read=read), cases=2)
    first = oloproof("run", cwd=root)
    assert "Cache: execution 0 hit/2 miss; judgment 0 hit/2 miss" in first.lines, first.err
    again = oloproof("run", cwd=root)
    assert "Cache: execution 2 hit/0 miss; judgment 2 hit/0 miss" in again.lines, again.out
    app = root / "app.py"
    app.write_text(app.read_text().replace(old, new))

    dry = oloproof("run", "--dry-run", cwd=root)
    assert f"  2 executions: {named} in app.py changed" in dry.lines, dry.out
    rerun = oloproof("run", cwd=root)
    assert "Cache: execution 0 hit/2 miss; judgment 0 hit/2 miss" in rerun.lines, rerun.out


STAGED = """
from oloproof import Retrieval, rag_system


@rag_system(name="s", version="1", depth=2, top_k=1)
class Staged:
    pick = max
    wrapped = staticmethod(max)

    def retrieve(self, input, depth):
        return Retrieval(query=input["q"], depth=depth, candidates=())

    def generate(self, input, context):
        return {"answer": input["q"] + str(self.{read}([1, 2]))[:0]}
"""
STAGED_CONFIG = """
system: {name: s, version: "1", rag: {object: "app:Staged"}}
dataset: cases.jsonl
policy: policy.yaml
evaluators:
  - {type: contains, criterion: answered, field: answer, expected_field: answer}
"""


# A class attribute the stage reads, and the edit that rebinds it.
CLASS_EDITS = {
    "a built-in function": ("pick", "pick = max", "pick = min"),
    "a staticmethod": ("wrapped", "staticmethod(max)", "staticmethod(min)"),
}


@pytest.mark.parametrize("edit", list(CLASS_EDITS))
def test_rebinding_a_stage_s_class_attribute_generates_again(tmp_path: Path, edit: str) -> None:
    read, old, new = CLASS_EDITS[edit]
    cases = (
        {"id": f"q{i}", "input": {"q": f"q{i}"}, "expected": {"answer": f"q{i}"}} for i in (0, 1)
    )
    policy = "version: 1\nrules:\n  - {id: answers, metric: answered, min: 0.5}\n"
    app = STAGED.replace("{read}", read)
    root = write_project(tmp_path / "p", app=app, config=STAGED_CONFIG, policy=policy, cases=cases)
    first = oloproof("run", cwd=root)
    assert "Stages: retrieve 0 hit/2 miss; generate 0 hit/2 miss" in first.lines, first.err
    path = root / "app.py"
    path.write_text(path.read_text().replace(old, new))

    rerun = oloproof("run", cwd=root)
    assert "Cache: execution 0 hit/2 miss; judgment 0 hit/2 miss" in rerun.lines, rerun.out
    assert "Stages: retrieve 2 hit/0 miss; generate 0 hit/2 miss" in rerun.lines, rerun.out
