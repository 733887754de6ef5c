"""The judge settings: defaults per provider, strictness, and keys kept out of errors."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel, TypeAdapter, ValidationError

from oloproof.events import JUDGE_TYPES
from oloproof.judge_config import (
    AnswerJudgeConfig,
    CitationSupportJudgeConfig,
    GroundednessJudgeConfig,
    JudgeConfig,
    RubricJudgeConfig,
)
from oloproof.prompts import available_versions, load_template

ADAPTER: TypeAdapter[Any] = TypeAdapter(JudgeConfig)


def parse(**data: Any) -> Any:
    return ADAPTER.validate_python(data)


def test_openai_defaults() -> None:
    config = parse(type="groundedness_judge", provider="openai", model="gpt-4o-mini")
    assert isinstance(config, GroundednessJudgeConfig)
    assert config.criterion == "groundedness"
    assert config.base_url == "https://api.openai.com/v1"
    assert config.api_key_env == "OPENAI_API_KEY"
    assert (config.temperature, config.field, config.input_field) == (None, "answer", "question")
    assert (config.concurrency, config.timeout_s, config.max_retries) == (4, 60.0, 4)
    assert (config.retry_on_timeout, config.max_tokens_field) == (True, "max_completion_tokens")
    assert config.resolved_instructions == "system"


def test_anthropic_defaults() -> None:
    config = parse(type="citation_support_judge", provider="anthropic", model="claude")
    assert isinstance(config, CitationSupportJudgeConfig)
    assert config.criterion == "citations_supported"
    assert config.base_url == "https://api.anthropic.com"
    assert config.api_key_env == "ANTHROPIC_API_KEY"


def test_answer_judge_defaults() -> None:
    config = parse(type="answer_judge", provider="openai", model="m")
    assert isinstance(config, AnswerJudgeConfig)
    assert (config.criterion, config.expected_field) == ("answer_equivalent", "answer")


def test_explicit_null_key_env_means_no_key() -> None:
    config = parse(
        type="answer_judge",
        provider="openai",
        model="llama",
        api_key_env=None,
        base_url="http://localhost:8000/v1/",
    )
    assert config.api_key_env is None
    assert config.resolved_base_url == "http://localhost:8000/v1"


def test_rubric_judge_needs_a_criterion_and_exactly_one_rubric() -> None:
    config = parse(
        type="rubric_judge", provider="openai", model="m", criterion="tone", rubric="Polite."
    )
    assert isinstance(config, RubricJudgeConfig) and config.scale == "pass_fail"
    with pytest.raises(ValidationError, match="criterion"):
        parse(type="rubric_judge", provider="openai", model="m", rubric="Polite.")
    with pytest.raises(ValidationError, match="exactly one"):
        parse(type="rubric_judge", provider="openai", model="m", criterion="t")
    with pytest.raises(ValidationError, match="exactly one"):
        parse(
            type="rubric_judge",
            provider="openai",
            model="m",
            criterion="t",
            rubric="a",
            rubric_file="b.md",
        )


@pytest.mark.parametrize(
    "bad",
    [
        {"provider": "mistral"},
        {"model": ""},
        {"temperature": -0.1},
        {"max_tokens": 0},
        {"timeout_s": 0},
        {"concurrency": 0},
        {"base_url": "ftp://example.com"},
        {"criterion": "has space"},
        {"unknown_key": 1},
        {"template_version": 0},
    ],
)
def test_bad_settings_are_refused(bad: dict[str, Any]) -> None:
    data = {"type": "groundedness_judge", "provider": "openai", "model": "m", **bad}
    with pytest.raises(ValidationError):
        ADAPTER.validate_python(data)


def test_a_key_pasted_into_api_key_env_is_refused_and_not_echoed() -> None:
    key = "sk-proj-THIS-IS-A-REAL-LOOKING-KEY-123"
    with pytest.raises(ValidationError) as info:
        parse(type="groundedness_judge", provider="openai", model="m", api_key_env=key)
    assert key not in str(info.value)
    assert all(key not in repr(err) for err in info.value.errors())


def test_the_key_is_not_echoed_inside_a_larger_config() -> None:
    class Outer(BaseModel):
        evaluators: list[JudgeConfig]

    key = "sk-ant-THIS-IS-A-REAL-LOOKING-KEY-456"
    with pytest.raises(ValidationError) as info:
        Outer.model_validate(
            {
                "evaluators": [
                    {
                        "type": "answer_judge",
                        "provider": "anthropic",
                        "model": "m",
                        "api_key_env": key,
                    }
                ]
            }
        )
    assert key not in str(info.value)


def test_every_field_has_a_description() -> None:
    for model in (
        GroundednessJudgeConfig,
        CitationSupportJudgeConfig,
        AnswerJudgeConfig,
        RubricJudgeConfig,
    ):
        for name, field in model.model_fields.items():
            assert field.description, f"{model.__name__}.{name} has no description"
    assert {
        m.model_fields["type"].default
        for m in (
            GroundednessJudgeConfig,
            CitationSupportJudgeConfig,
            AnswerJudgeConfig,
            RubricJudgeConfig,
        )
    } == JUDGE_TYPES


def test_the_project_config_accepts_judges() -> None:
    from oloproof.config import ProjectConfig

    config = ProjectConfig.model_validate(
        {
            "system": {"name": "s", "version": "1", "callable": "m:f"},
            "evaluators": [
                {"type": "contains", "criterion": "answer_correct"},
                {"type": "groundedness_judge", "provider": "openai", "model": "gpt-4o-mini"},
            ],
        }
    )
    assert isinstance(config.evaluators[1], GroundednessJudgeConfig)


# --- templates ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "placeholders"),
    [
        ("groundedness", {"question", "passages", "answer"}),
        ("citation_support", {"question", "passages", "cited_ids", "answer"}),
        ("answer_equivalence", {"question", "reference", "answer"}),
        ("rubric_pass_fail", {"rubric", "question", "answer"}),
        ("rubric_score", {"rubric", "question", "answer"}),
    ],
)
def test_every_template_ships_and_uses_exactly_its_placeholders(
    name: str, placeholders: set[str]
) -> None:
    import string

    assert available_versions(name) == [1]
    template = load_template(name)
    used = {
        match.group("named") or match.group("braced")
        for text in (template.system, template.user)
        for match in string.Template.pattern.finditer(text)
        if match.group("named") or match.group("braced")
    }
    assert used == placeholders
    system, user = template.render({key: f"<{key}>" for key in placeholders})
    assert "JSON" in system and "$" not in user


def test_an_unknown_template_version_is_a_config_error() -> None:
    from oloproof.errors import ConfigError

    with pytest.raises(ConfigError, match="no version 9"):
        load_template("groundedness", 9)
    with pytest.raises(ConfigError, match="no prompt template"):
        load_template("nonexistent")
