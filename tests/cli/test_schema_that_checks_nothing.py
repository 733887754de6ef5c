"""A ``json_schema`` evaluator's schema that would check nothing is refused at the key (and,
in a schema file, the line) that says so, through the real CLI, before anything is recorded.

Before the fix a misspelt keyword (``requried``, ``minLenght``), which JSON Schema ignores,
ran: the check it was meant to make passed every output, and the gate passed on it (exit 0).
So did a schema of no checking keyword at all (``schema: {}``, or a title alone), which an
empty regex ``pattern`` is refused for.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.support import TOY_CONFIG, oloproof, toy_project

CHECK = "  - {type: contains, criterion: echo, field: answer, expected_field: answer}\n"
IGNORED = (
    " (JSON Schema ignores a keyword it does not know, so what it was meant to check would "
    "pass every output)"
)


def _with_schema(root: Path, entry: str) -> Path:
    (root / "oloproof.yaml").write_text(
        TOY_CONFIG.replace(CHECK, f"  - {{type: json_schema, criterion: echo, {entry}}}\n")
    )
    return root


@pytest.mark.parametrize(
    ("schema", "sentence"),
    [
        (
            "{type: object, requried: [answer]}",
            "evaluators.0.schema.requried: unknown keyword 'requried'; did you mean 'required'?"
            + IGNORED,
        ),
        (
            "{type: object, properties: {answer: {type: string, minLenght: 3}}}",
            "evaluators.0.schema.properties.answer.minLenght: unknown keyword 'minLenght'; did "
            "you mean 'minLength'?" + IGNORED,
        ),
        (
            "{}",
            "evaluators.0.schema: the schema has no keyword that checks anything (such as type, "
            "properties or required), so every output would pass it",
        ),
        (
            "{title: answer}",
            "evaluators.0.schema: the schema has no keyword that checks anything (such as type, "
            "properties or required), so every output would pass it",
        ),
    ],
)
def test_an_inline_schema_that_checks_nothing_is_refused(
    tmp_path: Path, schema: str, sentence: str
) -> None:
    root = _with_schema(toy_project(tmp_path), f"schema: {schema}")
    result = oloproof("run", cwd=root)
    assert (result.code, result.out, result.err) == (
        2,
        "",
        f"error: {root}/oloproof.yaml, line 7: {sentence}\n",
    )
    assert not (root / ".oloproof").exists()


def test_a_misspelt_keyword_in_a_schema_file_is_named_at_its_line(tmp_path: Path) -> None:
    root = _with_schema(toy_project(tmp_path), "schema_path: s.json")
    schema = {"type": "object", "properties": {"answer": {"type": "string", "patern": "x"}}}
    (root / "s.json").write_text(json.dumps(schema, indent=2))
    result = oloproof("run", cwd=root)
    assert (result.code, result.out, result.err) == (
        2,
        "",
        f"error: {root}/s.json, line 6: properties.answer.patern: unknown keyword 'patern'; "
        "did you mean 'pattern'?" + IGNORED + "\n",
    )


def test_an_annotation_of_its_own_is_left_alone(tmp_path: Path) -> None:
    schema = "{type: object, required: [answer], x-order: 1}"
    root = _with_schema(toy_project(tmp_path, cases=30), f"schema: {schema}")
    result = oloproof("run", cwd=root)
    assert result.code == 0, result.err
