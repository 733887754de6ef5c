"""A plan ``plan_run`` returns cannot be changed in place: measured before, a caller that set
``plan.selection = Selection(sample=2, seed=1)`` and ``plan.repeats = 3`` on a plan of 4 cases
had ``execute_run`` run all 4 cases once each as it recorded ``Subset: 4 of 4 cases (sample 2,
seed 1)`` and 3 repeats (what ``oloproof inspect`` then printed), neither checked nor what ran.
Now such an assignment raises, and ``plan.restrict`` is the way to a subset. The calls run in a
Python process of their own."""

from __future__ import annotations

from pathlib import Path

from tests.support import SAID, api_said, toy_project

SCRIPT = (
    SAID
    + """
import json, oloproof
from oloproof.subset import Selection
plan = oloproof.plan_run("oloproof.yaml")
def assign(name, value):
    return lambda: setattr(plan, name, value)
for call in [assign("selection", Selection(sample=2, seed=1)), assign("repeats", 3)]:
    print(json.dumps(said(call)))
print(json.dumps([plan.selection.everything, plan.repeats, len(plan.cases)]))
"""
)


def test_a_plan_is_not_changed_in_place(tmp_path: Path) -> None:
    root = toy_project(tmp_path / "toy", cases=4)
    said = api_said(SCRIPT, root)
    assert [kind for kind, _ in said[:2]] == ["FrozenInstanceError"] * 2
    assert said[2] == [True, 1, 4]
