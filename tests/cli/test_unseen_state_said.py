"""A run that reuses results says what its code fingerprint could not see, and the fingerprint
follows what it can.

A seeded ``random.Random`` is state the fingerprint cannot read (its state is the generator's, not
plain data): a new seed reuses every execution made with the old one. ``run --dry-run`` listed such state; a run that
reused results on the strength of the fingerprint said nothing, so the old answers read as the
new template's.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.support import oloproof

APP = """
import random

from oloproof import system

RNG = random.Random(SEED)


@system(name="seeded", version="1")
def answer(case):
    return {"answer": f"{case['q']} {RNG.randrange(1000)}"}
"""

CONFIG = """
system: {name: seeded, version: "1", callable: app:answer}
dataset: cases.jsonl
evaluators:
  - {type: contains, criterion: answered, field: answer, expected_field: answer}
"""

NOT_SEEN = "Not seen by the code fingerprint (change system.version when they change): "
UNSEEN = f"{NOT_SEEN}app.RNG: a random.Random object"


def test_a_run_that_reused_results_names_what_the_fingerprint_cannot_see(tmp_path: Path) -> None:
    root = tmp_path / "seeded"
    root.mkdir()
    (root / "app.py").write_text(APP.replace("SEED", "1"))
    (root / "oloproof.yaml").write_text(CONFIG)
    (root / "cases.jsonl").write_text(
        json.dumps({"id": "c1", "input": {"q": "q1"}, "expected": {"answer": "q1"}}) + "\n"
    )
    first = oloproof("run", cwd=root)
    assert first.code == 0, first.out + first.err
    assert UNSEEN not in first.lines  # nothing was reused
    (root / "app.py").write_text(APP.replace("SEED", "2"))
    again = oloproof("run", cwd=root)
    assert again.code == 0, again.out + again.err
    assert "Cache: execution 1 hit/0 miss; judgment 1 hit/0 miss" in again.lines
    assert UNSEEN in again.lines
    assert UNSEEN in oloproof("inspect", "latest", cwd=root).lines
    assert UNSEEN in oloproof("run", "--dry-run", cwd=root).lines


# Read while the system runs, where the fingerprint cannot follow: a prompt kept in a file, a
# model named by an environment variable. A run that reused results said nothing of either,
# and the answers of the old prompt read as the new one's.
READS_OUTSIDE = """
import os
from pathlib import Path

from oloproof import system

HERE = Path(__file__).parent


@system(name="outside", version="1")
def answer(case):
    prompt = (HERE / "prompt.txt").read_text().strip()
    model = os.environ.get("ANSWER_MODEL", "small")
    return {"answer": f"{prompt} {model} {case['q']}"}
"""


def test_files_and_environment_variables_read_while_running_are_said(tmp_path: Path) -> None:
    root = tmp_path / "outside"
    root.mkdir()
    (root / "app.py").write_text(READS_OUTSIDE)
    (root / "prompt.txt").write_text("Answer briefly.\n")
    (root / "oloproof.yaml").write_text(CONFIG.replace("seeded", "outside"))
    (root / "cases.jsonl").write_text(
        json.dumps({"id": "c1", "input": {"q": "q1"}, "expected": {"answer": "q1"}}) + "\n"
    )
    said = (
        f"{NOT_SEEN}environment variables it reads while it runs (it uses environ); "
        "files it opens or reads while it runs (it uses read_text)"
    )
    assert said in oloproof("run", "--dry-run", cwd=root).lines
    first = oloproof("run", cwd=root)
    assert first.code == 0, first.out + first.err
    (root / "prompt.txt").write_text("Answer at length.\n")
    again = oloproof("run", cwd=root)
    assert "Cache: execution 1 hit/0 miss; judgment 1 hit/0 miss" in again.lines
    assert said in again.lines, again.out


# A module imported by name while the code runs (importlib.import_module("helper")) was not
# followed: an edit to it reused every execution made by the old code, and the run said nothing.
# A name written as text is followed as an import statement is; one made while the code runs is
# said to be unseen.

BY_NAME = """
import importlib

from oloproof import system


@system(name="plugins", version="1")
def answer(case):
    helper = {load}
    return {{"answer": helper.reply(case["q"])}}
"""

HELPER = """
def reply(question):
    return question
"""

COMPUTED = (
    f"{NOT_SEEN}a module imported by a name made while the code runs "
    "(importlib.import_module or __import__)"
)


def _by_name(root: Path, load: str) -> Path:
    root.mkdir()
    (root / "app.py").write_text(BY_NAME.format(load=load))
    (root / "helper.py").write_text(HELPER)
    (root / "oloproof.yaml").write_text(CONFIG.replace("seeded", "plugins"))
    (root / "cases.jsonl").write_text(
        json.dumps({"id": "c1", "input": {"q": "yes"}, "expected": {"answer": "yes"}}) + "\n"
    )
    return root


@pytest.mark.parametrize("load", ['importlib.import_module("helper")', '__import__("helper")'])
def test_an_edit_to_a_module_imported_by_name_executes_again(tmp_path: Path, load: str) -> None:
    root = _by_name(tmp_path / "p", load)
    first = oloproof("run", cwd=root)
    assert first.code == 0, first.out + first.err
    (root / "helper.py").write_text(HELPER.replace("return question", 'return "no"'))
    again = oloproof("run", cwd=root)
    assert "Cache: execution 0 hit/1 miss; judgment 0 hit/1 miss" in again.lines, again.out
    assert "answered │ 0.0%" in again.out, again.out


def test_a_module_name_made_at_run_time_is_said_to_be_unseen(tmp_path: Path) -> None:
    root = _by_name(tmp_path / "p", 'importlib.import_module("HELPER".lower())')
    first = oloproof("run", cwd=root)
    assert first.code == 0, first.out + first.err
    assert COMPUTED in oloproof("run", "--dry-run", cwd=root).lines
    again = oloproof("run", cwd=root)
    assert "Cache: execution 1 hit/0 miss; judgment 1 hit/0 miss" in again.lines, again.out
    assert COMPUTED in again.lines, again.out
