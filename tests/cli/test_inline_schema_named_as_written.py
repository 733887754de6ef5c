"""A fault in a `json_schema` evaluator's schema is named at the key the user wrote: the
`schema` key and the path inside it, on the line of the faulty keyword (a schema file's fault
likewise on its line). Real CLI runs in a subprocess.

(Before: the error named `evaluators.N.json_schema`, the evaluator's type tag, which is not a
key of the file, on the evaluator's first line, with the path inside the schema written with
slashes after the message: `line 5: evaluators.1.json_schema: not a valid JSON Schema at
properties/answer/minLength: ...`. A schema file's invalid keyword had no line at all.)
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
    return case["out"]
"""

HEAD = 'system: {name: echo, version: "1", callable: app:run}\ndataset: cases.jsonl\n'


def refusal(root: Path, evaluators: str, schema_file: str = "") -> str:
    """The one sentence (exit 2) a run of a project with these evaluators (and ``s.json``
    holding ``schema_file``) is refused with."""
    write_project(
        root,
        app=APP,
        config=HEAD + "evaluators:\n" + evaluators,
        policy="version: 1\nrules:\n  - {id: r, metric: shape, min: 0.5}\n",  # not read
        cases=[{"id": "a", "input": {"out": {"answer": "x"}}}],
    )
    (root / "s.json").write_text(schema_file, encoding="utf-8")
    result = oloproof("run", cwd=root)
    assert result.code == 2, result.out + result.err
    assert not (root / ".oloproof").exists()
    return result.err


@pytest.mark.parametrize(
    ("schema", "said"),
    [
        (
            "      type: object\n      properties:\n        answer: {type: string, minLength: x}\n",
            "line 10: evaluators.1.schema.properties.answer.minLength: not a valid JSON Schema: "
            "'x' is not of type 'integer'",
        ),
        (
            "      type: objekt\n",
            "line 8: evaluators.1.schema.type: not a valid JSON Schema: 'objekt' is not valid "
            "under any of the given schemas",
        ),
    ],
)
def test_an_invalid_inline_schema_is_named_at_its_keyword(
    tmp_path: Path, schema: str, said: str
) -> None:
    root = tmp_path / "p"
    err = refusal(
        root,
        "  - {type: contains, criterion: said}\n"
        "  - type: json_schema\n    criterion: shape\n    schema:\n" + schema,
    )
    assert err == f"error: {root}/oloproof.yaml, {said}\n"


def test_a_schema_and_a_schema_path_together_name_the_evaluator_not_its_type(
    tmp_path: Path,
) -> None:
    root = tmp_path / "p"
    err = refusal(
        root,
        "  - {type: json_schema, criterion: shape, schema: {type: object}, schema_path: s.json}\n",
    )
    assert err == (
        f"error: {root}/oloproof.yaml, line 4: evaluators.0: give exactly one of `schema` "
        "(inline) or `schema_path` (a file)\n"
    )


def test_an_invalid_keyword_in_a_schema_file_is_named_at_its_line(tmp_path: Path) -> None:
    schema = {"type": "object", "properties": {"answer": {"type": "string", "maxLength": -1}}}
    root = tmp_path / "p"
    err = refusal(
        root,
        "  - {type: json_schema, criterion: shape, schema_path: s.json}\n",
        json.dumps(schema, indent=2),
    )
    assert err == (
        f"error: {root}/s.json, line 6: properties.answer.maxLength: not a valid JSON "
        "Schema: -1 is less than the minimum of 0\n"
    )
