"""A policy's ``version`` is the number 1: a boolean or a float standing for it is refused,
through the real CLI.

Before the fix ``version: true`` (and ``version: 1.0``) passed as format version 1: pydantic
compares a literal by equality, and ``True == 1``. A policy file is held strictly elsewhere
(``min: true`` is refused), so a gate ran on a file whose version said nothing.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.support import oloproof

APP = """
from oloproof import system

@system(name="toy", version="1")
def run(case):
    return {"answer": case["q"]}
"""
CONFIG = """\
system:
  name: toy
  version: "1"
  callable: app:run
evaluators:
  - {type: contains, criterion: echo, field: answer, expected_field: answer}
policy: policy.yaml
"""
POLICY = "version: 1\nrules:\n  - {id: floor, metric: echo, min: 0.5}\n"


@pytest.mark.parametrize(("version", "found"), [("true", "the boolean true"), ("1.0", "1.0")])
def test_a_version_that_is_not_the_number_1_is_refused(
    tmp_path: Path, version: str, found: str
) -> None:
    (tmp_path / "app.py").write_text(APP)
    (tmp_path / "oloproof.yaml").write_text(CONFIG)
    (tmp_path / "policy.yaml").write_text(POLICY.replace("version: 1", f"version: {version}"))
    case = {"id": "c1", "input": {"q": "x"}, "expected": {"answer": "x"}}
    (tmp_path / "cases.jsonl").write_text(json.dumps(case) + "\n")
    result = oloproof("run", cwd=tmp_path)
    assert (result.code, result.out, result.err) == (
        2,
        "",
        f"error: {tmp_path}/policy.yaml, line 1: version: the policy format version is the "
        f"number 1, not {found}\n",
    )
    assert not (tmp_path / ".oloproof").exists()
