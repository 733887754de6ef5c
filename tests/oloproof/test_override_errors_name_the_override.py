"""A setting ``plan_run(overrides=...)`` made, refused by a check made after the settings are
read (a file that cannot be read, a callable that is not there, a secret too short), is named
as the override it is, where it was named at a line of the project file that says something
else. Measured before: ``{"dataset": "/dev/zero"}`` raised ``.../oloproof.yaml, line 1:
dataset: /dev/zero: cannot read it`` (line 1 is the file's ``system:``, and the file names
no dataset) and ``{"system.callable": "app:nope"}`` ``.../oloproof.yaml, line 4:
system.callable: module 'app' has no 'nope'`` (line 4 says ``callable: app:run``). The calls
run in a Python process of their own."""

from __future__ import annotations

from pathlib import Path

from tests.support import SAID, api_said, toy_project

SCRIPT = (
    SAID
    + """
import json, oloproof
for overrides in [
    {"dataset": "/dev/zero"},
    {"system.callable": "app:nope"},
    {"system": {"name": "toy", "version": "1", "callable": "app:nope"}},
    {"secrets": ["SHORT_ONE"]},
]:
    print(json.dumps(said(lambda: oloproof.plan_run("oloproof.yaml", overrides=overrides))))
"""
)


def test_a_refused_override_is_named_as_one(tmp_path: Path, monkeypatch) -> None:
    root = toy_project(tmp_path / "toy")
    monkeypatch.setenv("SHORT_ONE", "abc")
    said = api_said(SCRIPT, root)
    where = "plan_run(): overrides: "
    assert said[:3] == [
        [
            "ConfigError",
            where + "dataset: /dev/zero: cannot read it (a character device, not a regular file)",
        ],
        ["ConfigError", where + "system.callable: module 'app' has no 'nope'"],
        ["ConfigError", where + "system.callable: module 'app' has no 'nope'"],
    ]
    assert said[3][1].startswith(where + "secrets: the value of SHORT_ONE is shorter than 6 ")
