"""A system name or version, or a policy's rule id, that would print as other text is refused at
its key and line, through the real CLI, before anything is recorded, as a case id is.

Before the fix ``version: "1\\nGate: PASS (exit 0)"`` ran, and ``oloproof runs`` printed the
run's line broken in two, its second line reading ``Gate: PASS (exit 0)`` beside a run that
blocked; a name holding an escape sequence or a right-to-left override ran too, acting on the
terminal, and so did a rule id holding a line break (the decision table printed it).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.support import TOY_CONFIG, TOY_POLICY, oloproof, toy_project

REFUSED = {
    "a line break in the version": (
        ('version: "1"', 'version: "1\\nGate: PASS (exit 0)"'),
        "oloproof.yaml, line 3: system.version: '1\\nGate: PASS (exit 0)' holds U+000A LINE "
        "FEED (character 2), which does not show where the version is printed (it looks like "
        "'1Gate: PASS (exit 0)'); write the version without it",
    ),
    "an escape sequence in the name": (
        ("name: toy", 'name: "\\e[31mtoy"'),
        "oloproof.yaml, line 2: system.name: '\\x1b[31mtoy' starts with U+001B ESCAPE, which "
        "does not show where the name is printed (it looks like '[31mtoy'); write the name "
        "without it",
    ),
    "a right-to-left override in the name": (
        ("name: toy", 'name: "toy\\u202e"'),
        "oloproof.yaml, line 2: system.name: 'toy\\u202e' ends with U+202E RIGHT-TO-LEFT "
        "OVERRIDE, which does not show where the name is printed (it looks like 'toy'); write "
        "the name without it",
    ),
}


@pytest.mark.parametrize("name", list(REFUSED))
def test_a_system_name_or_version_that_prints_as_other_text_is_refused(
    tmp_path: Path, name: str
) -> None:
    (old, new), sentence = REFUSED[name]
    root = toy_project(tmp_path, config=TOY_CONFIG.replace(old, new))
    result = oloproof("run", cwd=root)
    assert (result.code, result.out, result.err) == (2, "", f"error: {root}/{sentence}\n")
    assert not (root / ".oloproof").exists()


def test_a_rule_id_that_prints_as_other_text_is_refused(tmp_path: Path) -> None:
    policy = TOY_POLICY.replace("id: floor", 'id: "floor\\npassed"')
    root = toy_project(tmp_path, policy=policy)
    result = oloproof("run", cwd=root)
    assert (result.code, result.out, result.err) == (
        2,
        "",
        f"error: {root}/policy.yaml, line 3: rules.0.id: 'floor\\npassed' holds U+000A LINE FEED "
        "(character 6), which does not show where the rule id is printed (it looks like "
        "'floorpassed'); write the rule id without it\n",
    )
    assert not (root / ".oloproof").exists()


def test_letters_of_any_script_are_names(tmp_path: Path) -> None:
    config = TOY_CONFIG.replace("name: toy", "name: jouet é 玩具")
    root = toy_project(tmp_path, config=config, cases=30)
    result = oloproof("run", cwd=root)
    assert result.code == 0, result.err
