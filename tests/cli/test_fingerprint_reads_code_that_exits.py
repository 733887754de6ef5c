"""A module constant of a class of the project's own whose `__iter__` calls `sys.exit` (or
raises its own KeyboardInterrupt) as the code fingerprint reads it leaves the fingerprint
unknown, as one that raises does, and the run goes on, through the real CLI.

The probe: `WORDS = Words(["x"])`, a list whose `__iter__` called `sys.exit(0)`, read by the
system, ended `oloproof run` with exit 0 printing nothing and recording nothing, before any case
ran (the fingerprint walk read it); raising KeyboardInterrupt, no signal sent, it ended the run
with exit 130 and not a word. One raising ValueError was already said to be unseen and nothing
it produced reused; the others now are too.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.support import TOY_CONFIG, oloproof, toy_project

APP = """
import sys

from oloproof import system


class Words(list):
    def __iter__(self):
        FAILS


WORDS = Words(["x"])


@system(name="toy", version="1")
def run(case):
    return {"answer": case["q"] if WORDS else "?"}
"""

UNSEEN = (
    "Not seen by the code fingerprint (change system.version when they change): the code "
    "could not be fingerprinted ({why}), so nothing it produced is reused"
)


@pytest.mark.parametrize(
    ("fails", "why"),
    [
        ("sys.exit(0)", "it called sys.exit(0)"),
        ("raise KeyboardInterrupt", "KeyboardInterrupt"),
        ("raise ValueError('no words')", "ValueError: no words"),
    ],
)
def test_code_that_exits_as_it_is_fingerprinted_is_said_unseen(
    tmp_path: Path, fails: str, why: str
) -> None:
    root = toy_project(tmp_path / "p", config=TOY_CONFIG.replace("policy: policy.yaml\n", ""))
    (root / "app.py").write_text(APP.replace("FAILS", fails))
    done = oloproof("run", cwd=root)
    assert done.code == 0, done.out + done.err  # was 0 printing nothing, or 130
    assert done.lines[0].endswith("[NO_POLICY/COMPLETE]"), done.out
    assert UNSEEN.format(why=why) in oloproof("run", "--dry-run", cwd=root).lines
    again = oloproof("run", cwd=root)
    assert "Cache: execution 0 hit/1 miss; judgment 0 hit/1 miss" in again.lines, again.out
