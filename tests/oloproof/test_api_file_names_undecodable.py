"""``evaluate`` and ``plan_run`` given a project or policy file whose name holds bytes that are
not UTF-8 (``c\\xff.yaml`` on Linux) refuse it naming the file, before anything is written, as
``oloproof run --config``/``--policy`` does.

Measured before: ``evaluate(config=os.fsdecode(b"c\\xff.yaml"))`` made the project's ledger and
then raised ``CodecError: cannot encode value: 'utf-8' codec can't encode character '\\udcff'
... surrogates not allowed`` (no ``OloproofError``, naming no file): the run records both paths,
and the ledger holds no lone surrogate. The calls run in a Python process of their own."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from tests.support import SAID, api_said, toy_project

SCRIPT = (
    SAID
    + """
import json, os, oloproof
config, policy = os.fsdecode(b"c\\xff.yaml"), os.fsdecode(b"p\\xff.yaml")
for call in [
    lambda: oloproof.evaluate(config),
    lambda: oloproof.evaluate(policy=policy),
    lambda: oloproof.plan_run(config),
    lambda: oloproof.plan_run("oloproof.yaml", policy_path=policy),
]:
    print(json.dumps(said(call) + [os.path.exists(".oloproof")]))
"""
)

SENTENCE = (
    ": its name holds bytes that are not UTF-8 text (written here as \\udcXX), which the "
    "ledger cannot record; rename it"
)


def test_a_settings_file_of_undecodable_name_is_refused_naming_it(tmp_path: Path) -> None:
    root = toy_project(tmp_path / "p")
    shutil.copy(root / "oloproof.yaml", root / os.fsdecode(b"c\xff.yaml"))
    shutil.copy(root / "policy.yaml", root / os.fsdecode(b"p\xff.yaml"))
    config = "c\\udcff.yaml" + SENTENCE
    policy = f"{root}/p\\udcff.yaml" + SENTENCE
    assert api_said(SCRIPT, root) == [
        ["ConfigError", config, False],
        ["ConfigError", policy, False],
        ["ConfigError", config, False],
        ["ConfigError", policy, False],
    ]
