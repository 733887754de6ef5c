"""An error ``oloproof.evaluate`` or ``oloproof.plan_run`` raises holds no secret a run keeps out.

The command line prints every error through the redactor, so a system whose module failed to
import with its key in the message (``RuntimeError: cannot reach the index with key …``) reads
``[redacted]`` there. The Python API raised the error as it was made:
``ConfigError: …: importing 'app' failed: RuntimeError: cannot reach the index with key
svc-Q7x9-hidden``, the key in its message, which a
caller that logs or prints the error (a notebook, a CI script, ``traceback.print_exc()``)
wrote out whole. So it did for a variable named like a credential and for one the project
declares, whose value the scope of the call released as the error left it.

An error leaving ``evaluate`` or ``diagnose`` (``oloproof.redaction.project_scope``), or
``plan_run``, now has the values kept out replaced in its message, and in the messages of the
exceptions it was raised from, before the project's declared values are released.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.support import oloproof, toy_project

SECRET = "svc-Q7x9-hidden-0123456789"

APP = """
import os

raise RuntimeError("cannot reach the index with key " + os.environ["{name}"])
"""

SCRIPT = """
import traceback

import oloproof

try:
    oloproof.{call}("oloproof.yaml")
except Exception:
    traceback.print_exc()
"""

CONFIG = """\
system: {name: toy, version: "1", callable: app:run}
evaluators:
  - {type: contains, criterion: echo, field: answer, expected_field: answer}
secrets: [SVC]
"""


@pytest.mark.parametrize("call", ["evaluate", "plan_run"])
@pytest.mark.parametrize("name", ["SVC", "SEARCH_API_KEY"])
def test_an_import_error_raised_by_the_api_holds_no_key(
    tmp_path: Path, name: str, call: str
) -> None:
    root = toy_project(tmp_path / "p", config=CONFIG)
    (root / "app.py").write_text(APP.format(name=name))
    env = {"SVC": SECRET, "SEARCH_API_KEY": SECRET}
    done = oloproof("-c", SCRIPT.format(call=call), cwd=root, env=env, command=())
    assert done.code == 0, done.err
    assert "importing 'app' failed: RuntimeError: cannot reach the index with key [redacted]" in (
        done.err
    ), done.err
    assert SECRET not in done.out + done.err
