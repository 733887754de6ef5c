"""``plan.restrict(selection, repeats)`` refuses, by name and before anything is written, what
``oloproof run`` and ``evaluate`` refuse of a subset: measured before, ``Selection(sample=2)``
ran a run recording ``seed: None`` (``random.Random(None)`` draws other cases each time, so
its resume and ``inspect`` would name cases it never drew), ``seed=-7`` was taken (it draws
what 7 draws), ``seed=3`` without a sample was dropped, ``repeats=1001`` ran past the 1000
the command takes, and a limit or seed of 2**70 stopped on a ``CodecError`` once the ledger
was made. The calls run in a Python process of their own, as a user's script would."""

from __future__ import annotations

from pathlib import Path

from tests.support import api_said, toy_project

SCRIPT = """
import asyncio, json, os, oloproof
from oloproof.subset import Selection

def said(selection, repeats=1):
    try:
        plan = oloproof.plan_run("oloproof.yaml").restrict(selection, repeats)
        with oloproof.open_project_ledger(plan.base_dir) as ledger:
            asyncio.run(oloproof.execute_run(ledger, plan))
    except Exception as e:
        return [type(e).__name__, str(e), os.path.exists(".oloproof")]
    return ["returned"]

for selection, repeats in [
    (Selection(sample=2), 1),
    (Selection(sample=2, seed=-7), 1),
    (Selection(seed=3), 1),
    (Selection(), 1001),
    (Selection(limit=2**70), 1),
    (Selection(sample=2, seed=2**70), 1),
]:
    print(json.dumps(said(selection, repeats)))
print(json.dumps(said(Selection(sample=2, seed=7), 2)))
"""

WHERE = "plan.restrict(): "


def test_a_subset_a_run_cannot_record_or_draw_again_is_refused(tmp_path: Path) -> None:
    root = toy_project(tmp_path / "toy", cases=3)
    said = api_said(SCRIPT, root)
    big = "18446744073709551615"
    assert said == [
        [
            "ConfigError",
            WHERE + "sample draws its cases with seed: without one, no resume could draw them "
            "again; give seed=N with it",
            False,
        ],
        ["ConfigError", WHERE + "seed=-7: a seed is 0 or more (7 draws what -7 would)", False],
        ["ConfigError", WHERE + "seed chooses the cases of sample; give sample=N with it", False],
        [
            "ConfigError",
            WHERE + "repeats=1001: at most 1000 (each repeat of a case is kept in the case's "
            "result)",
            False,
        ],
        [
            "ConfigError",
            WHERE + f"limit=1180591620717411303424 is larger than a run records (at most {big})",
            False,
        ],
        [
            "ConfigError",
            WHERE + f"seed=1180591620717411303424 is larger than a run records (at most {big})",
            False,
        ],
        ["returned"],
    ]
