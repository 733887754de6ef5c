"""Building evaluators from configs: the protocol, specs and criterion clashes."""

from __future__ import annotations

import json
from dataclasses import FrozenInstanceError
from pathlib import Path
from typing import Any

import pytest
from pydantic import TypeAdapter

from oloproof.errors import ConfigError
from oloproof.evaluator_config import EvaluatorConfig
from oloproof.evaluators import build_evaluator, build_evaluators
from oloproof.evaluators.base import Evaluator

ADAPTER: TypeAdapter[list[EvaluatorConfig]] = TypeAdapter(list[EvaluatorConfig])

EVERY_TYPE: list[dict[str, Any]] = [
    {"type": "contains", "criterion": "answer_correct"},
    {"type": "equals", "criterion": "answer_exact"},
    {"type": "exact", "criterion": "answer_exact_too"},
    {"type": "regex", "criterion": "mentions_days", "pattern": r"\d+ days"},
    {"type": "json_schema", "criterion": "shape", "schema": {"type": "object"}},
    {"type": "hit_rate", "k": 2},
    {"type": "recall", "k": 2},
    {"type": "precision", "k": 2},
    {"type": "mrr", "k": 10},
    {"type": "ndcg", "k": 6},
    {"type": "citation_validity"},
]


def test_every_type_builds_an_evaluator_with_a_json_able_spec() -> None:
    evaluators = build_evaluators(ADAPTER.validate_python(EVERY_TYPE), Path("."))
    assert [e.criterion for e in evaluators] == [
        "answer_correct",
        "answer_exact",
        "answer_exact_too",
        "mentions_days",
        "shape",
        "hit_rate_at_2",
        "recall_at_2",
        "precision_at_2",
        "mrr_at_10",
        "ndcg_at_6",
        "citations_valid",
    ]
    for evaluator, data in zip(evaluators, EVERY_TYPE, strict=True):
        assert isinstance(evaluator, Evaluator)
        spec = evaluator.spec()
        assert json.loads(json.dumps(spec)) == spec
        assert spec["type"] == data["type"]
        # contains is at version 5, equals (exact) at 4, citation_validity at 3, regex,
        # json_schema and the retrieval metrics at 2: see docs/evaluators.md.
        retrieval = dict.fromkeys(("hit_rate", "recall", "precision", "mrr", "ndcg"), 2)
        versions = {
            "contains": 5,
            "equals": 4,
            "exact": 4,
            "citation_validity": 3,
            "regex": 2,
            "json_schema": 2,
            **retrieval,
        }
        assert spec["version"] == versions.get(data["type"], 1)
        assert spec["criterion"] == evaluator.criterion
    assert [e.kind for e in evaluators].count("mean") == 4  # recall, precision, mrr, ndcg


def test_a_setting_that_changes_verdicts_changes_the_spec() -> None:
    a, b = build_evaluators(
        ADAPTER.validate_python(
            [
                {"type": "contains", "criterion": "x"},
                {"type": "contains", "criterion": "y", "case_sensitive": True},
            ]
        ),
        Path("."),
    )
    assert {**a.spec(), "criterion": "y"} != b.spec()


def test_evaluators_are_frozen() -> None:
    configs = ADAPTER.validate_python(EVERY_TYPE)
    for evaluator in build_evaluators(configs, Path(".")):
        with pytest.raises(FrozenInstanceError):
            evaluator.config = None  # type: ignore[attr-defined]
        with pytest.raises(FrozenInstanceError):
            evaluator.anything = 1  # type: ignore[attr-defined]


def test_two_evaluators_with_one_criterion_are_refused() -> None:
    configs = ADAPTER.validate_python(
        [
            {"type": "hit_rate", "k": 2},
            {"type": "contains", "criterion": "answer_correct"},
            {"type": "hit_rate", "k": 2, "relevance_unit": "chunk"},
        ]
    )
    with pytest.raises(ConfigError, match="evaluators 0 and 2 both name the criterion") as raised:
        build_evaluators(configs, Path("."))
    assert raised.value.where == "evaluators[2]"
    assert raised.value.hint is not None


def test_an_explicit_criterion_may_clash_with_a_derived_one() -> None:
    configs = ADAPTER.validate_python(
        [{"type": "recall", "k": 2}, {"type": "mrr", "k": 1, "criterion": "recall_at_2"}]
    )
    with pytest.raises(ConfigError, match="'recall_at_2'"):
        build_evaluators(configs, Path("."))


def test_build_evaluator_resolves_schema_paths_against_base_dir(tmp_path: Path) -> None:
    (tmp_path / "s.json").write_text('{"type": "string"}', encoding="utf-8")
    (config,) = ADAPTER.validate_python(
        [{"type": "json_schema", "criterion": "s", "schema_path": "s.json"}]
    )
    assert build_evaluator(config, base_dir=tmp_path).spec()["schema"] == {"type": "string"}
