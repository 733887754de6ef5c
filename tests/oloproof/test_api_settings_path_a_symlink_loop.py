"""``evaluate`` and ``plan_run`` given a project or policy file that is a loop of symbolic links
refuse it in one ``ConfigError`` naming it, before anything is written, as ``oloproof run
--config``/``--policy`` does (``loop: cannot read it (a loop of symbolic links)``, exit 2).

Measured before: each raised Python's own ``RuntimeError: Symlink loop from '.../loop'``
(``Path.resolve``), which is no ``OloproofError``: a caller catching those, as the docs say
bad input raises, was stopped by it. The calls run in a Python process of their own."""

from __future__ import annotations

import os
from pathlib import Path

from tests.support import SAID, api_said, oloproof, toy_project

SCRIPT = (
    SAID
    + """
import json, os, oloproof
for call in [
    lambda: oloproof.evaluate("loop"),
    lambda: oloproof.evaluate(policy="loop"),
    lambda: oloproof.plan_run("loop"),
    lambda: oloproof.plan_run("oloproof.yaml", policy_path="loop"),
]:
    print(json.dumps(said(call) + [os.path.exists(".oloproof")]))
"""
)


def test_a_settings_file_that_loops_is_refused_naming_it(tmp_path: Path) -> None:
    root = toy_project(tmp_path / "p")
    os.symlink("loop2", root / "loop")
    os.symlink("loop", root / "loop2")
    refused = ["ConfigError", "loop: cannot read it (a loop of symbolic links)", False]
    assert api_said(SCRIPT, root) == [refused] * 4
    done = oloproof("run", "--policy", "loop", cwd=root)  # the command, for reference
    assert (done.code, done.err) == (2, f"error: {refused[1]}\n")
