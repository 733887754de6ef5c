"""A JSON Schema whose `$ref` leads back to itself without looking into any part of the output
(through `$ref`, `allOf`, `anyOf`, `oneOf`, `not`, `if`/`then`/`else`) can validate nothing:
`json_schema` refuses it before any case runs, naming file, line and path (exit 2). A
recursive schema that descends into the output on its way round (a tree) still runs. Real CLI
runs in a subprocess.

(Before: the run went ahead and every case's judgment was missing, `evaluator_raised` with a
RecursionError: 8 of 8 missing, exit 0 with no rule on the criterion.)
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.support import oloproof, write_project

APP = """
from oloproof import system

@system(name="s", version="1")
def run(case):
    return {"answer": "x", "tree": {"kids": [{"kids": []}]}}
"""


def project(root: Path, evaluator: str, files: dict[str, object] | None = None) -> Path:
    root = write_project(
        root,
        app=APP,
        config=(
            'system: {name: s, version: "1", callable: app:run}\ndataset: cases.jsonl\n'
            f"evaluators:\n  - {evaluator}\n"
        ),
        policy="version: 1\nrules: []\n",
        cases=[{"id": f"q{i}", "input": {}} for i in range(3)],
    )
    for name, content in (files or {}).items():
        (root / name).write_text(json.dumps(content, indent=1))
    return root


@pytest.mark.parametrize(
    ("schema", "at"),
    [
        ({"$ref": "#"}, "$ref"),
        ({"$defs": {"a": {"$ref": "#/$defs/a"}}, "$ref": "#/$defs/a"}, "$defs.a.$ref"),
        (
            {
                "$defs": {
                    "a": {"anyOf": [{"type": "string"}, {"$ref": "#/$defs/b"}]},
                    "b": {"allOf": [{"$ref": "#/$defs/a"}]},
                },
                "properties": {"answer": {"$ref": "#/$defs/a"}},
            },
            "$defs.b.allOf.0.$ref",
        ),
        ({"if": {"$ref": "#"}, "then": {"type": "object"}}, "if.$ref"),
    ],
)
def test_a_ref_cycle_that_reads_nothing_is_refused(
    tmp_path: Path, schema: dict[str, object], at: str
) -> None:
    inline = project(
        tmp_path / "inline",
        "{type: json_schema, criterion: ok, schema: " + json.dumps(schema) + "}",
    )
    result = oloproof("run", cwd=inline)
    assert result.code == 2, result.out + result.err
    line = result.err.strip()
    assert line.startswith(f"error: {inline / 'oloproof.yaml'}, line 4: "), line
    assert f"schema.{at}: " in line and "refers back to" in line, line
    assert not (inline / ".oloproof").exists()  # refused before anything was written

    in_file = project(
        tmp_path / "file",
        "{type: json_schema, criterion: ok, schema_path: schema.json}",
        {"schema.json": schema},
    )
    result = oloproof("run", cwd=in_file)
    assert result.code == 2, result.out + result.err
    assert result.err.startswith(f"error: {in_file / 'schema.json'}, line "), result.err
    assert f": {at}: " in result.err and "refers back to" in result.err
    assert not (in_file / ".oloproof").exists()


def test_a_recursive_schema_that_descends_into_the_output_runs(tmp_path: Path) -> None:
    schema = {
        "$defs": {
            "node": {
                "type": "object",
                "properties": {"kids": {"type": "array", "items": {"$ref": "#/$defs/node"}}},
            },
            "named": {"required": ["answer"]},
        },
        "properties": {"tree": {"$ref": "#/$defs/node"}},
        # A $ref to a schema with no reference back is no cycle.
        "allOf": [{"$ref": "#/$defs/named"}],
    }
    root = project(
        tmp_path / "p", "{type: json_schema, criterion: ok, schema: " + json.dumps(schema) + "}"
    )
    result = oloproof("run", "--json", cwd=root)
    assert result.code == 0, result.err
    (tally,) = json.loads(result.out)["metrics"]
    assert (tally["successes"], tally["observed"], tally["missing"]) == (3, 3, 0)
