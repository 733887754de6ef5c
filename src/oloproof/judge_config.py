"""The settings of the LLM judges, as they appear under ``evaluators:`` in oloproof.yaml.

A judge entry carries its own provider settings, flattened beside the judge's own keys, so one
entry reads as one sentence::

    - type: groundedness_judge
      provider: openai
      model: gpt-4o-mini

``ProviderSettings`` holds the provider keys every judge shares; each judge model extends it.
``JudgeConfig`` is the union of the judge models, discriminated on ``type``;
``oloproof.evaluators.judges.build_judge`` turns one into the evaluator that judges cases.

Keys are never part of a config: ``api_key_env`` names the environment variable that holds
the key, read at call time. Validation errors never echo the input (a key pasted by mistake
into ``api_key_env`` is not repeated back in an error message).
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

ProviderName = Literal["openai", "anthropic"]

DEFAULT_BASE_URLS: dict[str, str] = {
    "openai": "https://api.openai.com/v1",
    "anthropic": "https://api.anthropic.com",
}
"""Where each provider is reached when ``base_url`` is not given."""

DEFAULT_KEY_ENVS: dict[str, str] = {
    "openai": "OPENAI_API_KEY",
    "anthropic": "ANTHROPIC_API_KEY",
}
"""The environment variable each provider's key is read from when ``api_key_env`` is not given."""

# The same rule as the other evaluators' criterion names (oloproof.evaluator_config).
_CRITERION_PATTERN = r"^[A-Za-z0-9_][A-Za-z0-9_.\-]*$"
_CRITERION_DOC = (
    "The metric this judge's verdicts feed, as policy rules and reports name it "
    "(letters, digits, `_`, `.`, `-`)."
)
_ENV_NAME_PATTERN = r"^[A-Za-z_][A-Za-z0-9_]*$"
# What stands in for an api_key_env that is not a variable name (a key pasted there by mistake),
# so no validation error, however it is printed, repeats the value.
_HIDDEN = "[hidden: not an environment variable name]"
_URL_PATTERN = r"^https?://\S+$"


class ProviderSettings(BaseModel):
    """How a judge reaches its model: the provider keys every judge entry shares."""

    # Strict, as oloproof.config's models are: `temperature: true` is not 1.
    model_config = ConfigDict(
        extra="forbid", frozen=True, hide_input_in_errors=True, allow_inf_nan=False, strict=True
    )

    provider: ProviderName = Field(
        description=(
            "`openai`: the chat-completions protocol (OpenAI, or any compatible server: vLLM, "
            "llama.cpp's server, Ollama); `anthropic`: the messages protocol."
        )
    )
    model: str = Field(min_length=1, description="The model name the provider knows it by.")
    base_url: str | None = Field(
        default=None,
        pattern=_URL_PATTERN,
        description=(
            "Where the provider is reached. openai: up to and including `/v1` "
            "(default `https://api.openai.com/v1`; requests go to `{base_url}/chat/completions`); "
            "anthropic: the host (default `https://api.anthropic.com`; requests go to "
            "`{base_url}/v1/messages`)."
        ),
    )
    api_key_env: str | None = Field(
        default=None,
        json_schema_extra={"pattern": _ENV_NAME_PATTERN},
        description=(
            "The name of the environment variable holding the key, read at call time (default "
            "`OPENAI_API_KEY` or `ANTHROPIC_API_KEY`). Null sends no key, for local servers. "
            "The key itself never goes in this file."
        ),
    )
    temperature: float = Field(default=0.0, ge=0.0, le=2.0, description="Sampling temperature.")
    max_tokens: int = Field(
        default=1024, ge=1, description="The most tokens the judge's reply may have."
    )
    timeout_s: float = Field(
        default=60.0, gt=0, description="Seconds one call may take before it counts as failed."
    )
    max_retries: int = Field(
        default=4,
        ge=0,
        le=20,
        description="Extra tries after a timeout, a connection error, 408, 409, 429 or a 5xx.",
    )
    retry_backoff_s: float = Field(
        default=0.5,
        ge=0,
        description=(
            "The first wait before a retry; it doubles each try (at most 30 s). A 429 with "
            "Retry-After waits what the server asks instead (up to 60 s)."
        ),
    )
    concurrency: int = Field(
        default=4, ge=1, description="Calls in flight at once to this judge's provider."
    )
    price_per_input_token: float | None = Field(
        default=None,
        ge=0,
        description=(
            "Price of one input token, in your currency; with both prices the report shows cost."
        ),
    )
    price_per_output_token: float | None = Field(
        default=None, ge=0, description="Price of one output token, in the same currency."
    )

    @model_validator(mode="before")
    @classmethod
    def _provider_defaults(cls, data: Any) -> Any:
        # Fill the per-provider defaults in the data, so the model holds the values it uses.
        # An explicit `api_key_env: null` is kept: it means "send no key".
        if isinstance(data, dict) and data.get("provider") in DEFAULT_BASE_URLS:
            provider = data["provider"]
            data = dict(data)
            if data.get("base_url") is None:
                data["base_url"] = DEFAULT_BASE_URLS[provider]
            if "api_key_env" not in data:
                data["api_key_env"] = DEFAULT_KEY_ENVS[provider]
        if isinstance(data, dict):
            env = data.get("api_key_env")
            if env is not None and not (isinstance(env, str) and re.match(_ENV_NAME_PATTERN, env)):
                data = {**data, "api_key_env": _HIDDEN}
        return data

    @field_validator("api_key_env")
    @classmethod
    def _env_name(cls, value: str | None) -> str | None:
        if value is not None and not re.match(_ENV_NAME_PATTERN, value):
            raise ValueError(
                "must be the name of an environment variable that holds the key "
                "(letters, digits and _), never the key itself"
            )
        return value

    @property
    def resolved_base_url(self) -> str:
        """``base_url`` with the provider's default filled in, without a trailing slash."""
        return (self.base_url or DEFAULT_BASE_URLS[self.provider]).rstrip("/")


class _JudgeSettings(ProviderSettings):
    field: str | None = Field(
        default="answer",
        min_length=1,
        description=(
            "Where to read the answer in the output: a key of a mapping output, dotted for "
            "nested keys. A plain-string output is read whole when this keeps its default or is "
            "null."
        ),
    )
    input_field: str | None = Field(
        default="question",
        min_length=1,
        description=(
            "The key of the case input shown to the judge as the question (dotted allowed); "
            "when absent or null the whole input is shown as JSON."
        ),
    )
    template_version: int | None = Field(
        default=None,
        ge=1,
        description=(
            "Pin the prompt template version; by default the newest one this Oloproof ships. "
            "Pinning keeps a calibration valid across upgrades that add a newer template."
        ),
    )


class GroundednessJudgeConfig(_JudgeSettings):
    """Pass when every claim of the answer is supported by the context the answer was given."""

    type: Literal["groundedness_judge"] = Field(
        default="groundedness_judge", description="Selects this judge."
    )
    criterion: str = Field(
        default="groundedness", pattern=_CRITERION_PATTERN, description=_CRITERION_DOC
    )


class CitationSupportJudgeConfig(_JudgeSettings):
    """Pass when each cited passage supports what the answer cites it for."""

    type: Literal["citation_support_judge"] = Field(
        default="citation_support_judge", description="Selects this judge."
    )
    criterion: str = Field(
        default="citations_supported", pattern=_CRITERION_PATTERN, description=_CRITERION_DOC
    )


class AnswerJudgeConfig(_JudgeSettings):
    """Pass when the answer means the same as the expected answer, whatever its wording."""

    type: Literal["answer_judge"] = Field(default="answer_judge", description="Selects this judge.")
    criterion: str = Field(
        default="answer_equivalent", pattern=_CRITERION_PATTERN, description=_CRITERION_DOC
    )
    expected_field: str = Field(
        default="answer",
        min_length=1,
        description=(
            "The key of the case's `expected` object holding the reference answer (dotted allowed)."
        ),
    )


class RubricJudgeConfig(_JudgeSettings):
    """Judge the answer against a rubric you write: pass/fail, or a score in [0, 1]."""

    type: Literal["rubric_judge"] = Field(default="rubric_judge", description="Selects this judge.")
    criterion: str = Field(pattern=_CRITERION_PATTERN, description=_CRITERION_DOC)
    rubric: str | None = Field(
        default=None,
        min_length=1,
        description="The rubric, inline. Give this or `rubric_file`, not both.",
    )
    rubric_file: str | None = Field(
        default=None,
        min_length=1,
        description=(
            "A UTF-8 text file holding the rubric, relative to the directory of the "
            "configuration file. Its text, not its path, is part of the judge's identity."
        ),
    )
    scale: Literal["pass_fail", "score"] = Field(
        default="pass_fail",
        description=(
            "`pass_fail`: a pass/fail metric; `score`: a graded metric, the judge's score "
            "in [0, 1]."
        ),
    )

    @model_validator(mode="after")
    def _one_rubric(self) -> RubricJudgeConfig:
        if (self.rubric is None) == (self.rubric_file is None):
            raise ValueError("give exactly one of `rubric` (inline) or `rubric_file` (a file)")
        return self


JudgeConfig = Annotated[
    GroundednessJudgeConfig | CitationSupportJudgeConfig | AnswerJudgeConfig | RubricJudgeConfig,
    Field(discriminator="type"),
]
"""Any LLM judge's settings, selected by ``type``."""

JUDGE_TYPES: frozenset[str] = frozenset(
    {"groundedness_judge", "citation_support_judge", "answer_judge", "rubric_judge"}
)
"""The ``type`` values that name an LLM judge."""
