"""A `json_schema` evaluator's `$ref` must resolve within its own schema: one to a URL or to
another file is refused when the project is loaded, with file, line and field, and nothing is
fetched while judging. Real CLI runs in a subprocess, against a real HTTP server on 127.0.0.1.

(Before: the evaluator fetched a remote `$ref` with an HTTP GET for each case, the fetched
schema decided the verdict without being part of its identity, so `--no-cache` reused a verdict
the changed remote schema would not give; an unreachable URL made every case missing; a
relative `$ref` beside a `schema_path` file was not resolved at all.)
"""

from __future__ import annotations

import json
from http.server import BaseHTTPRequestHandler
from pathlib import Path

from tests.support import QuietHandler, http_server, oloproof, write_project

APP = """
from oloproof import system

@system(name="echo", version="1")
def run(case):
    return case["out"]
"""

HEAD = 'system: {name: echo, version: "1", callable: app:run}\ndataset: cases.jsonl\n'
CASES = [{"id": "a", "input": {"out": {"answer": 42}}}]


def project(root: Path, evaluators: str) -> Path:
    return write_project(
        root,
        app=APP,
        config=HEAD + "evaluators:\n" + evaluators,
        policy="version: 1\nrules:\n  - {id: r, metric: shape, min: 0.5}\n",  # not read
        cases=CASES,
    )


def served(requests: list[str]) -> type[BaseHTTPRequestHandler]:
    class Schemas(QuietHandler):
        def do_GET(self) -> None:
            requests.append(self.path)
            self.reply(200, b'{"type": "string"}')

    return Schemas


def assert_refused(root: Path, sentence: str) -> None:
    """The run stops with exit 2 and that one sentence, before anything is written."""
    result = oloproof("run", cwd=root)
    assert result.code == 2, result.out + result.err
    assert result.err == f"error: {sentence}\n"
    assert not (root / ".oloproof").exists()


def test_a_ref_to_a_url_is_refused_at_load_and_never_fetched(tmp_path: Path) -> None:
    requests: list[str] = []
    with http_server(served(requests)) as base:
        root = project(
            tmp_path / "p",
            "  - {type: contains, criterion: said}\n"
            "  - type: json_schema\n"
            "    criterion: shape\n"
            "    schema:\n"
            "      type: object\n"
            f"      properties: {{answer: {{$ref: '{base}/s.json'}}}}\n",
        )
        assert_refused(
            root,
            f"{root}/oloproof.yaml, line 9: evaluators.1.schema.properties.answer.$ref: "
            f"'{base}/s.json' does not resolve within the "
            "schema; a schema may refer only to its own parts, since Oloproof fetches nothing "
            "from a URL or another file while it judges (copy the definition under `$defs` and "
            "refer to it as '#/$defs/NAME')",
        )
        dry = oloproof("run", "--dry-run", cwd=root)
    assert dry.code == 2, dry.out
    assert requests == []


def test_a_ref_to_a_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "elsewhere.json").write_text('{"type": "string"}', encoding="utf-8")
    uri = (tmp_path / "elsewhere.json").as_uri()
    root = project(
        tmp_path / "p",
        f"  - {{type: json_schema, criterion: shape, schema: {{$ref: '{uri}'}}}}\n",
    )
    result = oloproof("run", cwd=root)
    assert result.code == 2, result.out
    assert result.err.startswith(
        f"error: {root}/oloproof.yaml, line 4: evaluators.0.schema.$ref: "
        f"'{uri}' does not resolve within the schema;"
    )
    assert not (root / ".oloproof").exists()


def test_a_relative_ref_beside_a_schema_file_is_refused_at_its_line(tmp_path: Path) -> None:
    root = project(
        tmp_path / "p", "  - {type: json_schema, criterion: shape, schema_path: main.json}\n"
    )
    (root / "defs.json").write_text('{"type": "string"}', encoding="utf-8")
    main = {"type": "object", "properties": {"id": {}, "answer": {"$ref": "defs.json"}}}
    (root / "main.json").write_text(json.dumps(main, indent=2), encoding="utf-8")
    assert_refused(
        root,
        f"{root}/main.json, line 6: properties.answer.$ref: 'defs.json' does not resolve "
        "within the schema; a schema may refer only to its own parts, since Oloproof fetches "
        "nothing from a URL or another file while it judges (copy the definition under `$defs` "
        "and refer to it as '#/$defs/NAME')",
    )


def test_a_pointer_to_nothing_in_the_schema_is_refused(tmp_path: Path) -> None:
    root = project(
        tmp_path / "p",
        "  - type: json_schema\n"
        "    criterion: shape\n"
        "    schema: {$defs: {text: {type: string}}, allOf: [{$ref: '#/$defs/txt'}]}\n",
    )
    result = oloproof("run", cwd=root)
    assert result.code == 2, result.out
    assert result.err.startswith(
        f"error: {root}/oloproof.yaml, line 6: evaluators.0.schema.allOf.0.$ref: "
        "'#/$defs/txt' does not resolve within the schema;"
    )


def test_references_within_the_schema_still_decide(tmp_path: Path) -> None:
    # A pointer, an anchor, an embedded resource named by its $id, and a property that is
    # merely called $ref: all resolve (or are no reference) without leaving the schema.
    schema = {
        "$id": "https://example.com/answer.json",
        "$defs": {
            "text": {"$anchor": "text", "type": "string"},
            "id": {"$id": "id.json", "type": "integer"},
        },
        "type": "object",
        "properties": {
            "answer": {"$ref": "#/$defs/text"},
            "again": {"$ref": "#text"},
            "n": {"$ref": "id.json"},
            "$ref": {"type": "boolean"},
        },
    }
    root = project(
        tmp_path / "p", "  - {type: json_schema, criterion: shape, schema_path: answer.json}\n"
    )
    (root / "answer.json").write_text(json.dumps(schema, indent=2), encoding="utf-8")
    outputs = [
        {"answer": "x", "again": "y", "n": 1, "$ref": True},
        {"answer": 42},
        {"n": "one"},
        {"$ref": "yes"},
    ]
    cases = [{"id": f"c{i}", "input": {"out": out}} for i, out in enumerate(outputs)]
    (root / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases))
    result = oloproof("run", "--json", cwd=root)
    assert result.code == 0, result.err
    (tally,) = json.loads(result.out)["metrics"]
    assert (tally["successes"], tally["observed"], tally["missing"]) == (1, 4, 0)
