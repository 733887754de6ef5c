"""A secret the system's code prints in pieces is kept out of the terminal like one printed whole.

The command line wraps its output streams in a redactor that replaced each secret in each
``write``. A system that streams a model's reply as it arrives (``print(token, end="",
flush=True)``, as every streaming client's example does) writes a reply that repeats a
configured secret a few characters at a time: no single write held the secret, and it reached the
terminal (a CI log) whole, ``svc-Q7x9-hidden`` where the report said ``[redacted]``.

The redactor now holds back the end of what it was given that could begin a secret, until what
follows shows whether it does; what is held is written when the process ends.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.support import oloproof, toy_project

SECRET = "svc-Q7x9-hidden"

APP = """
import os
import sys

from oloproof import system


@system(name="toy", version="1")
def run(case):
    said = "key " + os.environ["SVC"] + " ends with s"
    for i in range(0, len(said), {size}):  # a model's reply, streamed as it arrives
        print(said[i : i + {size}], end="", flush=True)
    for i in range(0, len(said), {size}):
        sys.stderr.write(said[i : i + {size}])
    print(" and so it goes: s", end="")
    return {{"answer": case["q"]}}
"""

CONFIG = """\
system: {name: toy, version: "1", callable: app:run}
concurrency: 1
evaluators:
  - {type: contains, criterion: echo, field: answer, expected_field: answer}
secrets: [SVC]
"""


@pytest.mark.parametrize("size", [1, 4, 7])
def test_a_secret_streamed_a_few_characters_at_a_time(tmp_path: Path, size: int) -> None:
    root = toy_project(tmp_path / "p", config=CONFIG)
    (root / "app.py").write_text(APP.format(size=size))
    done = oloproof("run", cwd=root, env={"SVC": SECRET})
    assert done.code == 0, done.out + done.err
    printed = done.out + done.err
    assert SECRET not in printed, printed
    # What follows the secret is printed all the same, the last characters too (those that
    # could have begun a secret once the process ends), on standard error where the user's
    # code prints.
    assert printed.count("key [redacted] ends with") == 2, printed
    assert " and so it goes: s" in printed, printed
    assert done.err.count("s") == 2 * "ends with s".count("s") + " and so it goes: s".count("s")
