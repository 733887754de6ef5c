"""A `json_schema` evaluator whose schema's `$schema` names no dialect jsonschema knows is
refused when the project is loaded, with file, line and field, and the known URI suggested when
only the scheme (or a `#`) differs. Real CLI runs in a subprocess.

(Before: jsonschema validated such a schema as Draft 2020-12, warning only through a hidden
DeprecationWarning, so draft-07's `dependencies` meant nothing and an output breaking the schema
passed.)
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.support import oloproof, write_project

APP = """
from oloproof import system

@system(name="echo", version="1")
def run(case):
    return case["out"]
"""

DRAFT_07 = "http://json-schema.org/draft-07/schema#"
# A refund needs an amount: draft-07 writes that with `dependencies`, which 2020-12 dropped.
REFUNDS = {
    "type": "object",
    "properties": {"refund": {"type": "boolean"}, "amount": {"type": "number"}},
    "dependencies": {"refund": ["amount"]},
}


def project(root: Path, **schemas: dict[str, object]) -> Path:
    """A project judging one refund without an amount by a schema file per criterion."""
    evaluators = "".join(
        f"  - {{type: json_schema, criterion: {name}, schema_path: {name}.json}}\n"
        for name in schemas
    )
    root = write_project(
        root,
        app=APP,
        config=(
            'system: {name: echo, version: "1", callable: app:run}\ndataset: cases.jsonl\n'
            "evaluators:\n" + evaluators
        ),
        policy="version: 1\nrules:\n  - {id: r, metric: shape, min: 0.5}\n",  # not read
        cases=[{"id": "refund_without_amount", "input": {"out": {"refund": True}}}],
    )
    for name, schema in schemas.items():
        (root / f"{name}.json").write_text(json.dumps(schema, indent=2), encoding="utf-8")
    return root


def test_a_dialect_uri_written_with_https_is_refused_with_the_known_one(tmp_path: Path) -> None:
    https = DRAFT_07.replace("http://", "https://")
    root = project(tmp_path / "p", shape={"$schema": https, **REFUNDS})
    result = oloproof("run", cwd=root)
    assert result.code == 2, result.out
    assert result.err == (
        f"error: {root}/shape.json, line 2: $schema: {https!r} names no JSON Schema dialect "
        "this Oloproof knows, and would be validated as Draft 2020-12; did you mean "
        f"{DRAFT_07!r}?\n"
    )
    assert not (root / ".oloproof").exists()


def test_an_unknown_inline_dialect_is_refused_with_the_known_ones(tmp_path: Path) -> None:
    root = write_project(
        tmp_path / "p",
        app=APP,
        config=(
            'system: {name: echo, version: "1", callable: app:run}\ndataset: cases.jsonl\n'
            "evaluators:\n"
            "  - {type: contains, criterion: said}\n"
            "  - {type: json_schema, criterion: shape,\n"
            "     schema: {$schema: 'https://example.com/my-dialect', type: object}}\n"
        ),
        policy="version: 1\nrules:\n  - {id: r, metric: shape, min: 0.5}\n",  # not read
        cases=[{"id": "a", "input": {"out": {}}}],
    )
    result = oloproof("run", cwd=root)
    assert result.code == 2, result.out
    assert result.err == (
        f"error: {root}/oloproof.yaml, line 6: evaluators.1.schema.$schema: "
        "'https://example.com/my-dialect' names no JSON Schema dialect this Oloproof knows, "
        "and would be validated as Draft 2020-12 (known: "
        "http://json-schema.org/draft-03/schema#, http://json-schema.org/draft-04/schema#, "
        "http://json-schema.org/draft-06/schema#, http://json-schema.org/draft-07/schema#, "
        "https://json-schema.org/draft/2019-09/schema, "
        "https://json-schema.org/draft/2020-12/schema)\n"
    )


def test_a_dialect_that_is_not_a_uri_is_refused(tmp_path: Path) -> None:
    root = project(tmp_path / "p", shape={"$schema": 7, **REFUNDS})
    result = oloproof("run", cwd=root)
    assert result.code == 2, result.out
    assert result.err == (
        f"error: {root}/shape.json, line 2: $schema: must be the URI of a JSON Schema dialect\n"
    )


def test_known_dialects_with_or_without_their_hash_judge_by_their_own_keywords(
    tmp_path: Path,
) -> None:
    root = project(
        tmp_path / "p",
        draft_07={"$schema": DRAFT_07, **REFUNDS},
        draft_07_no_hash={"$schema": DRAFT_07.removesuffix("#"), **REFUNDS},
    )
    result = oloproof("run", "--json", cwd=root)
    assert result.code == 0, result.err
    tallies = {m["criterion"]: m for m in json.loads(result.out)["metrics"]}
    for name in ("draft_07", "draft_07_no_hash"):
        assert (tallies[name]["successes"], tallies[name]["observed"]) == (0, 1), name
