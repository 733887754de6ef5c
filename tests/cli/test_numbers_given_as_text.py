"""A number given as text, or a fraction where a whole number belongs, is refused saying what
was found, through the real CLI.

Before the fix ``min: '0.9'`` was refused as "rules.0.min: Input should be a valid number" and
``concurrency: 2.0`` as "concurrency: Input should be a valid integer": both true, and neither
says that the quotes make the value text, or that 2.0 is not an integer; ``version: 1.10``
was refused as "Input should be a valid string", not saying that YAML read it as 1.1.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.support import TOY_CONFIG, TOY_POLICY, oloproof, toy_project

POLICY = TOY_POLICY.replace("version: 1\n", "version: 1\nconfidence_level: 0.95\n")

REFUSED = {
    "a quoted floor": (
        "policy.yaml",
        POLICY.replace("min: 0.5", "min: '0.9'"),
        "policy.yaml, line 4: rules.0.min: expected a number, found the text '0.9'",
    ),
    "a quoted level": (
        "policy.yaml",
        POLICY.replace("0.95", '"0.95"'),
        "policy.yaml, line 2: confidence_level: expected a number, found the text '0.95'",
    ),
    "a fraction for a count": (
        "oloproof.yaml",
        TOY_CONFIG.replace("concurrency: 2", "concurrency: 2.0"),
        "oloproof.yaml, line 5: concurrency: expected an integer, found 2.0",
    ),
    "a version read as a number": (
        "oloproof.yaml",
        TOY_CONFIG.replace('version: "1"', "version: 1.10"),
        "oloproof.yaml, line 3: system.version: expected text, found the number 1.1 (quote it "
        "to keep it as written)",
    ),
}


@pytest.mark.parametrize("name", list(REFUSED))
def test_the_value_found_is_said(tmp_path: Path, name: str) -> None:
    file, text, sentence = REFUSED[name]
    toy_project(tmp_path, policy=POLICY)
    (tmp_path / file).write_text(text)
    result = oloproof("run", cwd=tmp_path)
    assert (result.code, result.out, result.err) == (2, "", f"error: {tmp_path}/{sentence}\n")
    assert not (tmp_path / ".oloproof").exists()
