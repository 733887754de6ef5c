"""contains, equals/exact, regex and json_schema on hand-made cases."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import TypeAdapter

from oloproof.errors import ConfigError, DatasetError
from oloproof.evaluator_config import EvaluatorConfig
from oloproof.evaluators import build_evaluator
from oloproof.evaluators.base import CaseView, Evaluator
from oloproof.results import Verdict

ADAPTER: TypeAdapter[EvaluatorConfig] = TypeAdapter(EvaluatorConfig)


def build(data: dict[str, Any], base_dir: Path = Path(".")) -> Evaluator:
    return build_evaluator(ADAPTER.validate_python(data), base_dir=base_dir)


def view(output: Any, expected: dict[str, Any] | None = None) -> CaseView:
    return CaseView(
        case_id="c1",
        input={"question": "q"},
        expected=expected if expected is not None else {},
        metadata={},
        output=output,
        artifacts={},
    )


# --- contains --------------------------------------------------------------------------------


def test_contains_passes_on_a_substring_ignoring_case_by_default() -> None:
    ev = build({"type": "contains", "criterion": "answer_correct"})
    expected = {"answer": "14 Days"}
    assert ev.judge(view({"answer": "Refunds take 14 days."}, expected)) == Verdict.passed()
    assert ev.judge(view({"answer": "Refunds take 2 weeks."}, expected)).status == "fail"
    assert (ev.criterion, ev.kind) == ("answer_correct", "pass_fail")


def test_contains_case_sensitive() -> None:
    ev = build({"type": "contains", "criterion": "c", "case_sensitive": True})
    assert ev.judge(view({"answer": "14 days"}, {"answer": "14 Days"})).status == "fail"
    assert ev.judge(view({"answer": "x 14 Days x"}, {"answer": "14 Days"})).status == "pass"


def test_contains_casefolds_beyond_lower() -> None:
    ev = build({"type": "contains", "criterion": "c"})
    assert ev.judge(view({"answer": "die STRASSE"}, {"answer": "straße"})).status == "pass"


def test_contains_reads_dotted_fields_on_both_sides() -> None:
    ev = build(
        {"type": "contains", "criterion": "c", "field": "result.text", "expected_field": "gold.a"}
    )
    verdict = ev.judge(view({"result": {"text": "It is blue."}}, {"gold": {"a": "blue"}}))
    assert verdict.status == "pass"


def test_a_list_index_in_a_field_path() -> None:
    ev = build({"type": "contains", "criterion": "c", "field": "choices.1"})
    assert ev.judge(view({"choices": ["no", "yes"]}, {"answer": "yes"})).status == "pass"
    assert ev.judge(view({"choices": ["no"]}, {"answer": "yes"})).reason == "field_missing"


def test_a_plain_string_output_is_read_whole() -> None:
    default = build({"type": "contains", "criterion": "c"})
    whole = build({"type": "contains", "criterion": "c", "field": None})
    for ev in (default, whole):
        assert ev.judge(view("Refunds take 14 days.", {"answer": "14 days"})).status == "pass"
    other = build({"type": "contains", "criterion": "c", "field": "text"})
    verdict = other.judge(view("Refunds take 14 days.", {"answer": "14 days"}))
    assert (verdict.status, verdict.reason) == ("missing", "field_missing")


# An output without text where the evaluator reads is no verdict (a fail would pass a `max:`
# rule on replies nobody read: tests/cli/test_output_without_the_field_is_no_verdict.py).
def test_a_missing_output_field_is_no_verdict() -> None:
    ev = build({"type": "contains", "criterion": "c"})
    verdict = ev.judge(view({"text": "14 days"}, {"answer": "14 days"}))
    assert (verdict.status, verdict.reason) == ("missing", "field_missing")
    assert verdict.detail == {"field": "answer"}


def test_an_output_field_that_is_not_text_is_no_verdict() -> None:
    ev = build({"type": "contains", "criterion": "c"})
    verdict = ev.judge(view({"answer": 14}, {"answer": "14"}))
    assert (verdict.status, verdict.reason) == ("missing", "field_not_text")


def test_a_case_without_the_expected_value_is_excluded() -> None:
    ev = build({"type": "contains", "criterion": "c"})
    verdict = ev.judge(view({"answer": "x"}, {}))
    assert (verdict.status, verdict.reason) == ("excluded", "no_expected_value")
    assert ev.judge(view({"answer": "x"}, {"answer": None})).reason == "no_expected_value"


def test_an_expected_value_that_is_not_text_is_a_dataset_error() -> None:
    ev = build({"type": "contains", "criterion": "c"})
    with pytest.raises(DatasetError, match=r"expected\.answer must be text") as raised:
        ev.judge(view({"answer": "14"}, {"answer": 14}))
    assert raised.value.where == "case c1"


# --- equals / exact --------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["equals", "exact"])
def test_equals_strips_and_is_case_sensitive_by_default(kind: str) -> None:
    ev = build({"type": kind, "criterion": "e"})
    assert ev.judge(view({"answer": "  Paris\n"}, {"answer": "Paris"})).status == "pass"
    assert ev.judge(view({"answer": "paris"}, {"answer": "Paris"})).status == "fail"
    assert ev.judge(view({"answer": "Paris, France"}, {"answer": "Paris"})).reason == "not_equal"


def test_equals_without_strip_or_case() -> None:
    ev = build({"type": "equals", "criterion": "e", "strip": False, "case_sensitive": False})
    assert ev.judge(view({"answer": "PARIS"}, {"answer": "paris"})).status == "pass"
    assert ev.judge(view({"answer": "paris "}, {"answer": "paris"})).status == "fail"


def test_equals_exclusions_and_failures() -> None:
    ev = build({"type": "equals", "criterion": "e"})
    assert ev.judge(view({"answer": "x"}, {})).reason == "no_expected_value"
    assert ev.judge(view({}, {"answer": "x"})).reason == "field_missing"


# --- regex -----------------------------------------------------------------------------------


def test_regex_searches_anywhere() -> None:
    ev = build({"type": "regex", "criterion": "r", "pattern": r"\b\d+ days\b"})
    assert ev.judge(view({"answer": "within 14 days of"})).status == "pass"
    verdict = ev.judge(view({"answer": "within two weeks"}))
    assert (verdict.status, verdict.reason) == ("fail", "no_match")


def test_regex_ignore_case() -> None:
    sensitive = build({"type": "regex", "criterion": "r", "pattern": "^yes"})
    insensitive = build({"type": "regex", "criterion": "r", "pattern": "^yes", "ignore_case": True})
    assert sensitive.judge(view("YES, it does")).status == "fail"
    assert insensitive.judge(view("YES, it does")).status == "pass"


def test_regex_needs_no_expected_value_but_fails_on_a_missing_field() -> None:
    ev = build({"type": "regex", "criterion": "r", "pattern": "."})
    assert ev.judge(view({"answer": "a"}, {})).status == "pass"
    assert ev.judge(view({"other": "a"})).reason == "field_missing"
    assert ev.judge(view({"answer": ["a"]})).reason == "field_not_text"


# --- json_schema -----------------------------------------------------------------------------

SCHEMA = {
    "type": "object",
    "required": ["answer", "citations"],
    "properties": {
        "answer": {"type": "string"},
        "citations": {"type": "array", "items": {"type": "string"}},
    },
}


def test_json_schema_inline_validates_the_whole_output() -> None:
    ev = build({"type": "json_schema", "criterion": "shape", "schema": SCHEMA})
    assert ev.judge(view({"answer": "a", "citations": ["kb-1"]})).status == "pass"
    verdict = ev.judge(view({"answer": "a", "citations": [3]}))
    assert (verdict.status, verdict.reason) == ("fail", "schema_violation")
    assert verdict.detail["path"] == "$.citations[0]"
    assert verdict.detail["validator"] == "type"
    assert "3 is not of type 'string'" in verdict.detail["message"]


def test_json_schema_of_one_field() -> None:
    ev = build(
        {"type": "json_schema", "criterion": "s", "field": "meta", "schema": {"type": "object"}}
    )
    assert ev.judge(view({"meta": {}})).status == "pass"
    assert ev.judge(view({"meta": "x"})).reason == "schema_violation"
    assert ev.judge(view({"answer": "x"})).reason == "field_missing"


def test_json_schema_from_a_file_relative_to_the_config(tmp_path: Path) -> None:
    (tmp_path / "schemas").mkdir()
    (tmp_path / "schemas" / "answer.json").write_text(json.dumps(SCHEMA), encoding="utf-8")
    config = {"type": "json_schema", "criterion": "s", "schema_path": "schemas/answer.json"}
    ev = build(config, base_dir=tmp_path)
    assert ev.judge(view({"answer": "a", "citations": []})).status == "pass"
    assert ev.judge(view({"answer": "a"})).detail["validator"] == "required"
    spec = ev.spec()
    assert spec["schema"] == SCHEMA
    assert spec["schema_path"] == "schemas/answer.json"
    assert str(tmp_path) not in json.dumps(spec)


def test_json_schema_file_problems_are_config_errors(tmp_path: Path) -> None:
    config = {"type": "json_schema", "criterion": "s", "schema_path": "absent.json"}
    with pytest.raises(ConfigError, match="absent.json: no such file"):
        build(config, base_dir=tmp_path)
    (tmp_path / "bad.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(ConfigError, match="not JSON"):
        build({**config, "schema_path": "bad.json"}, base_dir=tmp_path)
    (tmp_path / "list.json").write_text("[]", encoding="utf-8")
    with pytest.raises(ConfigError, match="must hold an object"):
        build({**config, "schema_path": "list.json"}, base_dir=tmp_path)
    (tmp_path / "invalid.json").write_text('{"type": 5}', encoding="utf-8")
    with pytest.raises(ConfigError, match="line 1: type: not a valid JSON Schema") as raised:
        build({**config, "schema_path": "invalid.json"}, base_dir=tmp_path)
    assert raised.value.where == f"{tmp_path / 'invalid.json'}, line 1"


def test_json_schema_dialect_comes_from_the_schema() -> None:
    draft4 = {"$schema": "http://json-schema.org/draft-04/schema#", "maximum": 5,
              "exclusiveMaximum": True}  # fmt: skip
    ev = build({"type": "json_schema", "criterion": "s", "schema": draft4})
    assert ev.judge(view(4)).status == "pass"
    assert ev.judge(view(5)).status == "fail"
