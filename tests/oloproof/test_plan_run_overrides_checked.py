"""``plan_run``'s ``overrides`` is a mapping of dotted setting names to values: anything else,
or a name reaching inside a list or a value, is refused in one ``ConfigError`` naming it,
before anything is written, as ``plan_run``'s other arguments are. The call runs in a Python
process of its own, as a user's script would.

(Before: ``plan_run("oloproof.yaml", overrides=3)`` raised ``AttributeError: 'int' object has
no attribute 'items'``; a list of pairs, a key that is no str, and ``"evaluators.0.field"``
(a list has no ``setdefault``) each raised an AttributeError too.)
"""

from __future__ import annotations

from pathlib import Path

from tests.support import SAID, api_said, toy_project

SCRIPT = (
    """
import json, oloproof
"""
    + SAID
    + """
for overrides in (3, [("concurrency", 2)], {1: 2}, {"a..b": 1}, {"evaluators.0.field": "q"},
                  {"concurrency": 3}):
    print(json.dumps(said(lambda: oloproof.plan_run("oloproof.yaml", overrides=overrides))))
"""
)
WHAT = (
    "plan_run(): overrides is a mapping of dotted setting names to values ({'concurrency': 2}) "
    "or None"
)


def test_overrides_of_the_wrong_type_are_refused_by_name(tmp_path: Path) -> None:
    root = toy_project(tmp_path / "toy")
    assert api_said(SCRIPT, root) == [
        ["ConfigError", f"{WHAT}, not 3"],
        ["ConfigError", f"{WHAT}, not [('concurrency', 2)]"],
        ["ConfigError", f"{WHAT}; 1 names no setting"],
        ["ConfigError", f"{WHAT}; 'a..b' names no setting"],
        [
            "ConfigError",
            "plan_run(): overrides: 'evaluators.0.field' names a key inside evaluators, which "
            "holds no named settings: override evaluators whole",
        ],
        ["returned", "RunPlan"],
    ]
    assert not (root / ".oloproof").exists()
