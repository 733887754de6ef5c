"""A policy's ``version`` is the number 1: a boolean or a float standing for it is refused,
through the real CLI.

Before the fix ``version: true`` (and ``version: 1.0``) passed as format version 1: pydantic
compares a literal by equality, and ``True == 1``. A policy file is held strictly elsewhere
(``min: true`` is refused), so a gate ran on a file whose version said nothing.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.support import TOY_POLICY, oloproof, toy_project


@pytest.mark.parametrize(("version", "found"), [("true", "the boolean true"), ("1.0", "1.0")])
def test_a_version_that_is_not_the_number_1_is_refused(
    tmp_path: Path, version: str, found: str
) -> None:
    toy_project(tmp_path, policy=TOY_POLICY.replace("version: 1", f"version: {version}"))
    result = oloproof("run", cwd=tmp_path)
    assert (result.code, result.out, result.err) == (
        2,
        "",
        f"error: {tmp_path}/policy.yaml, line 1: version: the policy format version is the "
        f"number 1, not {found}\n",
    )
    assert not (tmp_path / ".oloproof").exists()
