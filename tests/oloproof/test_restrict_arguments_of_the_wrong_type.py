"""``plan.restrict(selection, repeats)`` refuses a selection or a count of the wrong type with
one ``ConfigError`` naming it, as ``evaluate`` does: ``repeats=2.5`` was taken (a run would
record 2.5 repeats), ``repeats=True`` and ``Selection(limit=True)`` read as 1, ``Selection(limit="5")``
raised ``TypeError: '<' not supported between instances of 'str' and 'int'`` and a selection
that is no ``Selection`` an ``AttributeError``. The range checks say what they said. The calls
run in a Python process of their own, as a user's script would."""

from __future__ import annotations

from pathlib import Path

from tests.support import api_said, toy_project

SCRIPT = """
import json, oloproof
from oloproof.subset import Selection

def said(call):
    try:
        result = call()
    except Exception as e:
        return [type(e).__name__, str(e)]
    return ["returned", len(result.cases), result.repeats]

plan = oloproof.plan_run("oloproof.yaml")
for call in [
    lambda: plan.restrict(Selection(), repeats=2.5),
    lambda: plan.restrict(Selection(), repeats=True),
    lambda: plan.restrict(Selection(limit=True)),
    lambda: plan.restrict(Selection(limit="5")),
    lambda: plan.restrict(Selection(sample=2, seed="x")),
    lambda: plan.restrict(Selection(filters="metadata.a=b")),
    lambda: plan.restrict(3),
    lambda: plan.restrict(Selection(limit=0)),
    lambda: plan.restrict(Selection(limit=2), repeats=2),
]:
    print(json.dumps(said(call)))
"""

WHERE = "plan.restrict(): "


def test_a_selection_or_count_of_the_wrong_type_is_refused_by_name(tmp_path: Path) -> None:
    root = toy_project(tmp_path / "toy", cases=3)
    said = api_said(SCRIPT, root)
    assert said == [
        ["ConfigError", WHERE + "repeats is how many times each case executes (an int), not 2.5"],
        ["ConfigError", WHERE + "repeats is how many times each case executes (an int), not True"],
        ["ConfigError", WHERE + "limit is a number of cases (an int) or None, not True"],
        ["ConfigError", WHERE + "limit is a number of cases (an int) or None, not '5'"],
        ["ConfigError", WHERE + "seed is the seed of sample's draw (an int) or None, not 'x'"],
        [
            "ConfigError",
            WHERE + "selection.filters is a tuple of (key, value) pairs of str, not 'metadata.a=b'",
        ],
        ["ConfigError", WHERE + "selection is an oloproof.subset.Selection, not 3"],
        ["ConfigError", WHERE + "limit must be 1 or more, not 0"],
        ["returned", 2, 2],
    ]
