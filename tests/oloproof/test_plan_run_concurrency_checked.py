"""``oloproof.plan_run(concurrency=...)`` refuses what the project file's ``concurrency:``
refuses (a whole number from 1 to 10000, not a bool), with one ``ConfigError`` naming the
argument. It used to take 0, -1, ``True``, ``'4'`` and a million into the plan unchecked
(``model_copy`` does not validate), where a run would then have executed at that setting. Each
call runs in a Python process of its own, as a user's script would."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from tests.support import toy_project

SCRIPT = """
import json, sys
import oloproof
try:
    plan = oloproof.plan_run("oloproof.yaml", concurrency=eval(sys.argv[1]))
    said = ["planned", plan.config.concurrency]
except oloproof.ConfigError as e:
    said = ["ConfigError", str(e)]
except BaseException as e:
    said = [type(e).__name__, str(e)]
print(json.dumps(said))
"""

SAID = "plan_run(): concurrency is how many cases run at once (an int from 1 to 10000), not "


def _planned(root: Path, concurrency: str) -> list[object]:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, concurrency],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    said: list[object] = json.loads(done.stdout)
    return said


@pytest.mark.parametrize("concurrency", ["0", "-1", "True", "'4'", "10001", "2.0"])
def test_a_bad_concurrency_is_refused_naming_it(tmp_path: Path, concurrency: str) -> None:
    root = toy_project(tmp_path / "p")
    assert _planned(root, concurrency) == ["ConfigError", SAID + concurrency]


@pytest.mark.parametrize(("concurrency", "planned"), [("None", 2), ("1", 1), ("10000", 10000)])
def test_a_good_concurrency_is_planned(tmp_path: Path, concurrency: str, planned: int) -> None:
    # None keeps the project file's (the toy project sets 2).
    root = toy_project(tmp_path / "p")
    assert _planned(root, concurrency) == ["planned", planned]
