"""A settings value YAML types by its form, but that PyYAML cannot read as that type, is
refused at its line, exit 2, through the real CLI.

A tag on text not written as what it names (``concurrency: !!int 2.5``, ``!!float ''``,
``!!timestamp soon``) and a bare word of a number's form that is none (``max_failures: 0b_``,
binary without a digit) ended ``oloproof run`` in a traceback (exit 1); ``!!bool maybe`` was
refused as "read by YAML as the boolean false", which PyYAML does not do (it fails on it); and
``max: !!null 0.9`` was read as null whatever the text says, so the rule's upper bound was
silently dropped.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.support import TOY_CONFIG, TOY_POLICY, oloproof, toy_project

COUNT = TOY_POLICY.replace("min: 0.5", "kind: observed_count, max_failures: 0")

REFUSED = {
    "a bare number of no digits": (
        "policy.yaml",
        COUNT.replace("max_failures: 0", "max_failures: 0b_"),
        "policy.yaml, line 3: rules.0.max_failures: a bare 0b_ has the form of an integer to "
        'YAML 1.1, which cannot read it as one; write an integer, or "0b_" for the text',
    ),
    "an integer tag on a fraction": (
        "oloproof.yaml",
        TOY_CONFIG.replace("concurrency: 2", "concurrency: !!int 2.5"),
        "oloproof.yaml, line 5: concurrency: 2.5 tagged !!int is not an integer as YAML "
        "writes one; remove the tag, or write an integer",
    ),
    "a number tag on nothing": (
        "oloproof.yaml",
        TOY_CONFIG + "timeout_s: !!float ''\n",
        "oloproof.yaml, line 9: timeout_s: '' tagged !!float is not a number as YAML writes "
        "one; remove the tag, or write a number",
    ),
    "a date tag on a word": (
        "oloproof.yaml",
        TOY_CONFIG.replace('version: "1"', "version: !!timestamp soon"),
        "oloproof.yaml, line 3: system.version: soon tagged !!timestamp is not a date as YAML "
        "writes one; remove the tag, or write a date",
    ),
    "a boolean tag on a word": (
        "oloproof.yaml",
        TOY_CONFIG.replace("answer}", "answer, case_sensitive: !!bool maybe}"),
        "oloproof.yaml, line 7: evaluators.0.case_sensitive: maybe tagged !!bool is not a "
        "boolean as YAML writes one; remove the tag, or write a boolean",
    ),
    "a null tag on a bound": (
        "policy.yaml",
        TOY_POLICY.replace("min: 0.5", "min: 0.5, max: !!null 0.9"),
        "policy.yaml, line 3: rules.0.max: 0.9 tagged !!null is not null as YAML writes one; "
        "remove the tag, or write null",
    ),
}


@pytest.mark.parametrize("name", list(REFUSED))
def test_a_value_yaml_cannot_read_as_its_type_is_refused(tmp_path: Path, name: str) -> None:
    file, text, sentence = REFUSED[name]
    root = toy_project(tmp_path, policy=COUNT, cases=3)
    (root / file).write_text(text)
    result = oloproof("run", cwd=root)
    assert (result.code, result.out, result.err) == (2, "", f"error: {root}/{sentence}\n")
    assert not (root / ".oloproof").exists()


def test_a_tag_on_text_written_as_what_it_names_is_taken(tmp_path: Path) -> None:
    config = (
        TOY_CONFIG.replace("concurrency: 2", "concurrency: !!int 2") + "timeout_s: !!float 30\n"
    )
    root = toy_project(tmp_path, config=config, policy=COUNT, cases=3)
    result = oloproof("run", cwd=root)
    assert result.code == 0, result.err
