"""The evaluator config models: parsing, defaults, names and config-time errors."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel, TypeAdapter, ValidationError

from oloproof.evaluator_config import (
    CitationValidityConfig,
    ContainsConfig,
    EqualsConfig,
    EvaluatorConfig,
    HitRateConfig,
    JsonSchemaConfig,
    MrrConfig,
    NdcgConfig,
    PrecisionConfig,
    RecallConfig,
    RegexConfig,
)

ADAPTER: TypeAdapter[EvaluatorConfig] = TypeAdapter(EvaluatorConfig)
ALL_MODELS: list[type[BaseModel]] = [
    ContainsConfig,
    EqualsConfig,
    RegexConfig,
    JsonSchemaConfig,
    HitRateConfig,
    RecallConfig,
    PrecisionConfig,
    MrrConfig,
    NdcgConfig,
    CitationValidityConfig,
]


def parse(data: dict[str, Any]) -> EvaluatorConfig:
    return ADAPTER.validate_python(data)


def test_the_guide_evaluators_parse() -> None:
    configs = [
        parse({"type": "contains", "criterion": "answer_correct", "field": "answer"}),
        parse({"type": "hit_rate", "k": 2}),
        parse({"type": "recall", "k": 2}),
        parse({"type": "ndcg", "k": 6}),
        parse({"type": "citation_validity"}),
    ]
    assert [c.criterion for c in configs] == [
        "answer_correct",
        "hit_rate_at_2",
        "recall_at_2",
        "ndcg_at_6",
        "citations_valid",
    ]


@pytest.mark.parametrize("kind", ["hit_rate", "recall", "precision", "mrr", "ndcg"])
def test_retrieval_metrics_name_themselves_from_k(kind: str) -> None:
    config = parse({"type": kind, "k": 3})
    assert config.criterion == f"{kind}_at_3"
    assert config.model_dump(mode="json")["criterion"] == f"{kind}_at_3"
    assert parse({"type": kind, "k": 3, "criterion": "mine"}).criterion == "mine"


def test_retrieval_defaults() -> None:
    config = parse({"type": "mrr", "k": 1})
    assert isinstance(config, MrrConfig)
    assert config.relevance_unit == "document"
    chunked = parse({"type": "mrr", "k": 1, "relevance_unit": "chunk"})
    assert isinstance(chunked, MrrConfig)
    assert chunked.relevance_unit == "chunk"


@pytest.mark.parametrize(
    "data",
    [
        {"type": "hit_rate"},
        {"type": "hit_rate", "k": 0},
        {"type": "ndcg", "k": -2},
        {"type": "recall", "k": 2, "relevance_unit": "sentence"},
        {"type": "recall", "k": 2, "criterion": "has space"},
        {"type": "precision", "k": 2, "depth": 5},
    ],
)
def test_bad_retrieval_configs_are_refused(data: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        parse(data)


def test_text_defaults() -> None:
    contains = parse({"type": "contains", "criterion": "c"})
    assert isinstance(contains, ContainsConfig)
    assert (contains.field, contains.expected_field, contains.case_sensitive) == (
        "answer",
        "answer",
        False,
    )
    equals = parse({"type": "equals", "criterion": "e"})
    assert isinstance(equals, EqualsConfig)
    assert (equals.case_sensitive, equals.strip) == (True, True)


def test_exact_is_equals_under_another_name() -> None:
    config = parse({"type": "exact", "criterion": "e"})
    assert isinstance(config, EqualsConfig)
    assert config.type == "exact"


@pytest.mark.parametrize("kind", ["contains", "equals", "regex", "json_schema"])
def test_text_checks_need_a_criterion(kind: str) -> None:
    extras: dict[str, dict[str, Any]] = {
        "regex": {"pattern": "x"},
        "json_schema": {"schema": {"type": "object"}},
    }
    extra = extras.get(kind, {})
    with pytest.raises(ValidationError, match="criterion"):
        parse({"type": kind, **extra})


def test_unknown_type_and_unknown_keys_are_refused() -> None:
    with pytest.raises(ValidationError):
        parse({"type": "bleu", "criterion": "b"})
    with pytest.raises(ValidationError, match="Extra inputs"):
        parse({"type": "contains", "criterion": "c", "casesensitive": True})


def test_a_bad_regex_is_a_config_error() -> None:
    with pytest.raises(ValidationError, match="not a valid regular expression"):
        parse({"type": "regex", "criterion": "r", "pattern": "(unclosed"})
    config = parse({"type": "regex", "criterion": "r", "pattern": r"\d+", "ignore_case": True})
    assert isinstance(config, RegexConfig)
    assert config.ignore_case


def test_json_schema_needs_exactly_one_schema() -> None:
    with pytest.raises(ValidationError, match="exactly one"):
        parse({"type": "json_schema", "criterion": "j"})
    with pytest.raises(ValidationError, match="exactly one"):
        parse({"type": "json_schema", "criterion": "j", "schema": {}, "schema_path": "s.json"})


def test_an_inline_schema_is_checked_at_config_time() -> None:
    with pytest.raises(ValidationError, match="not a valid JSON Schema"):
        parse({"type": "json_schema", "criterion": "j", "schema": {"type": "objekt"}})
    config = parse({"type": "json_schema", "criterion": "j", "schema": {"type": "object"}})
    assert isinstance(config, JsonSchemaConfig)
    assert config.model_dump(mode="json", by_alias=True)["schema"] == {"type": "object"}


def test_citation_validity_defaults() -> None:
    config = parse({"type": "citation_validity", "require_citations": True})
    assert isinstance(config, CitationValidityConfig)
    assert (config.criterion, config.require_citations) == ("citations_valid", True)


@pytest.mark.parametrize("model", ALL_MODELS, ids=lambda m: m.__name__)
def test_every_field_is_described(model: type[BaseModel]) -> None:
    undocumented = [name for name, info in model.model_fields.items() if not info.description]
    assert undocumented == []
    assert model.model_config.get("extra") == "forbid"


def test_the_union_has_a_json_schema() -> None:
    schema = ADAPTER.json_schema()
    assert set(schema["discriminator"]["mapping"]) == {
        "contains",
        "equals",
        "exact",
        "regex",
        "json_schema",
        "hit_rate",
        "recall",
        "precision",
        "mrr",
        "ndcg",
        "citation_validity",
    }


@pytest.mark.parametrize(
    "data",
    [
        {"type": "contains", "criterion": "c", "field": None},
        {"type": "exact", "criterion": "e", "strip": False},
        {"type": "regex", "criterion": "r", "pattern": "a+", "ignore_case": True},
        {"type": "json_schema", "criterion": "j", "schema": {"type": "object"}},
        {"type": "json_schema", "criterion": "j", "schema_path": "s.json", "field": "a.b"},
        {"type": "ndcg", "k": 4, "relevance_unit": "chunk"},
        {"type": "citation_validity", "require_citations": True},
    ],
)
def test_a_dump_validates_back_to_the_same_config(data: dict[str, Any]) -> None:
    config = parse(data)
    dumped = config.model_dump(mode="json")
    assert parse(dumped) == config
    assert set(data) <= set(dumped)  # keys as users write them (`schema`, not `json_schema`)
