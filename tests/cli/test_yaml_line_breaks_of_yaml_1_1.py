"""A settings file holding U+0085, U+2028 or U+2029 as it is is refused at the line and column
an editor shows it on, naming the character; written as a double-quoted escape it is read.
Real CLI.

(Before: YAML 1.1, as PyYAML reads it, breaks a line at each, YAML 1.2 and most editors at none.
``concurrency: 2  # was<U+2028>dataset: other.jsonl`` is a comment to an editor, and the run
read its cases from other.jsonl, exit 0; a quoted ``version: "1<U+0085>2"`` was read as
``1 2``. Each error after such a character named a line the editor does not show.)

A ``%YAML 1.2`` directive is read as it was: what the reader lets through reads alike in YAML
1.1 and 1.2, so the forms the two read differently are refused under it too.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.support import oloproof, write_project

APP = """
from oloproof import system

@system(name="echo", version="1")
def run(case):
    return {"answer": case["q"]}
"""
CONFIG = """\
system: {{name: echo, version: {version}, callable: app:run}}
concurrency: 2  # was 1{comment}
evaluators:
  - {{type: contains, criterion: echo, field: answer, expected_field: answer}}
"""


def _project(root: Path, config: str) -> Path:
    cases = [{"id": "c1", "input": {"q": "x"}, "expected": {"answer": "x"}}]
    root = write_project(root, app=APP, config=config, policy="version: 1\n", cases=cases)
    (root / "other.jsonl").write_text(json.dumps({**cases[0], "id": "other"}) + "\n")
    return root


@pytest.mark.parametrize(
    ("char", "name", "escape"),
    [
        ("\x85", "U+0085 (NEXT LINE)", "\\N"),
        ("\u2028", "U+2028 (LINE SEPARATOR)", "\\L"),
        ("\u2029", "U+2029 (PARAGRAPH SEPARATOR)", "\\P"),
    ],
)
def test_a_comment_that_hides_a_setting(tmp_path: Path, char: str, name: str, escape: str) -> None:
    root = _project(
        tmp_path / "p", CONFIG.format(version='"1"', comment=f"{char}dataset: other.jsonl")
    )
    done = oloproof("run", cwd=root)
    assert (done.code, done.out) == (2, ""), done.err
    assert done.err == (
        f"error: {(root / 'oloproof.yaml').resolve()}, line 2: the character {name} at column "
        "24, which YAML 1.1 (how this file is read) takes for a line break and YAML 1.2 and "
        "most editors for an ordinary character, so what the file says depends on what reads "
        f'it; remove it, or write "{escape}" inside double quotes for the character itself\n'
    )
    assert not (root / ".oloproof").exists()


def test_a_quoted_value_that_would_fold(tmp_path: Path) -> None:
    root = _project(tmp_path / "p", CONFIG.format(version='"1\x852"', comment=""))
    done = oloproof("run", cwd=root)
    assert (done.code, done.out) == (2, ""), done.err
    assert ", line 1: the character U+0085 (NEXT LINE) at column 33, " in done.err


def test_a_yaml_1_2_directive(tmp_path: Path) -> None:
    config = "%YAML 1.2\n---\n" + CONFIG.format(version='"1"', comment="")
    root = _project(tmp_path / "p", config)
    done = oloproof("run", cwd=root)
    assert done.code == 0, done.out + done.err
    (root / "oloproof.yaml").write_text(config.replace("concurrency: 2", "concurrency: 010"))
    done = oloproof("run", cwd=root)
    assert done.code == 2, done.out + done.err
    assert "a bare 010 is read by YAML 1.1 as the octal number 8 and by YAML 1.2 as 10" in done.err
