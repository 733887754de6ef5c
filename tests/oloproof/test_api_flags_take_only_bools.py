"""A public function's flag is ``True`` or ``False``: anything else is refused, naming the
argument, before anything is written. ``execute_run(..., use_cache="no")`` read ``"no"`` as
true and took every execution from the cache; ``use_stage_cache``, ``reuse_judgments``,
``open_project_ledger``'s ``create`` and ``plan_run``'s ``policy_as_recorded`` read any value
the same way. Each call runs in a Python process of its own, as a user's script would."""

from __future__ import annotations

from pathlib import Path

from tests.support import SAID, api_said, oloproof, toy_project

SCRIPT = (
    """
import asyncio, json, oloproof
"""
    + SAID
    + """

plan = oloproof.plan_run("oloproof.yaml")
with oloproof.open_project_ledger(".", create=False) as ledger:
    for flag, value in (("use_cache", "no"), ("use_stage_cache", 0), ("reuse_judgments", None)):
        run = lambda: asyncio.run(oloproof.execute_run(ledger, plan, **{flag: value}))
        print(json.dumps(said(run)))
print(json.dumps(said(lambda: oloproof.open_project_ledger("elsewhere", create="no"))))
print(json.dumps(said(lambda: oloproof.plan_run("oloproof.yaml", policy_as_recorded="no"))))
"""
)


def test_a_flag_that_is_not_a_bool_is_refused_by_name(tmp_path: Path) -> None:
    root = toy_project(tmp_path / "toy", cases=2)
    assert oloproof("run", cwd=root).code == 3  # recorded; too few cases to pass
    said = api_said(SCRIPT, root)
    assert said == [
        ["ConfigError", "execute_run(): use_cache is True or False, not 'no'"],
        ["ConfigError", "execute_run(): use_stage_cache is True or False, not 0"],
        ["ConfigError", "execute_run(): reuse_judgments is True or False, not None"],
        ["ConfigError", "open_project_ledger(): create is True or False, not 'no'"],
        ["ConfigError", "plan_run(): policy_as_recorded is True or False, not 'no'"],
    ]
    # Refused before anything was written: the first run is still the only one, and no
    # ledger was made where none was.
    assert len([line for line in oloproof("runs", cwd=root).lines if "run_" in line]) == 1
    assert not (root / "elsewhere").exists()
