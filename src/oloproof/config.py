"""pydantic models of oloproof.yaml and of policy files, and their YAML loader.

Every error names the file, the key and the line, in one sentence. The models are also the
source of the JSON Schemas under ``schemas/``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from functools import partial
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    ValidationInfo,
    WithJsonSchema,
    field_validator,
    model_validator,
)

from oloproof.callargs import path as path_argument
from oloproof.envnames import ENV_NAME_PATTERN, SHELL_REFERENCE, variable_name
from oloproof.errors import ConfigError
from oloproof.evaluator_config import EvaluatorConfig, SchemaProblem
from oloproof.idtext import id_problem, same_text
from oloproof.jsonkeys import first_repeat
from oloproof.judge_config import (
    WRITTEN,
    JudgeConfig,
    ModelSystemSettings,
    as_written,
    capped_backoff,
    literal_url,
)
from oloproof.suggest import allowed_keys, closest, did_you_mean, kind_naming_a_test, wrong_kind
from oloproof.yamlfile import input_fault, line_for, read_yaml

Outcome = Literal["PASS", "FAIL", "INSUFFICIENT_EVIDENCE", "MANUAL_REVIEW"]
_DEFAULT_BLOCK_ON: tuple[Outcome, ...] = ("FAIL", "INSUFFICIENT_EVIDENCE", "MANUAL_REVIEW")
# More cases at once than this is a typo, not a plan (each runs on a thread or a connection).
MAX_CONCURRENCY = 10_000
# About 31 years: no case is meant to take longer. A case's deadline is a timer the kernel
# holds (``oloproof.aio``), which cannot be set past about 9.2e9 seconds: a run given more
# ended in a traceback at its first case, with the run recorded as started.
MAX_TIMEOUT_S = 1e9
# The validation context of a policy read from the ledger (``recorded_policy``).
_RECORDED = "recorded"


# An entry of ``secrets``: a variable's name, never its value (the error does not repeat it).
SecretName = Annotated[str, AfterValidator(partial(variable_name, holding="the secret"))]


class _Model(BaseModel):
    # Strict: a value is taken only as the type it is (an int may stand for a float). Lax
    # pydantic reads `true` as 1 and "8" as 8, so `concurrency: true` or `min: true` would
    # quietly mean 1.
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False, strict=True)


def _shown_as_written(value: str, what: str) -> str:
    """``value`` (a system's name or version, a rule's id), refused when it would print as other
    text (``idtext.id_problem``): reports and ``oloproof runs`` print it on a line with
    others, where a line break in a version would start a line of its own (``Gate: PASS``)
    and a control character act on the terminal."""
    problem = id_problem(value, what)
    if problem is not None:
        raise ValueError(problem)
    return value


def _version_as_written(value: str | None, info: ValidationInfo) -> str | None:
    """A version (the system's, an endpoint's, an index's) when it holds no ``${NAME}`` or
    ``$NAME``: read as written, every run would carry the same version whatever the variable
    holds, and reuse what a run of another version made (an endpoint's executions, a
    retrieval). A run's recorded config is read as recorded."""
    found = None if value is None else SHELL_REFERENCE.search(value)
    if found is None or not as_written(info):
        return value
    raise ValueError(
        f"{found.group(0)} is kept as written: only header values read ${{NAME}} from the "
        "environment, so every run would have this same version whatever the variable holds, "
        "and reuse what a run of another made; write the version itself"
    )


class HttpReuse(_Model):
    """Opting in to reuse an HTTP system's executions across runs."""

    version: str = Field(
        min_length=1,
        description="What the endpoint serves, as you name it (a deploy tag, a model and index "
        "release); part of every execution's identity, so change it whenever the service "
        "changes. Oloproof cannot see the code behind an endpoint.",
    )

    _as_written = field_validator("version")(_version_as_written)


class HttpSystem(_Model):
    """A system reached over HTTP: the case input is POSTed as the JSON body."""

    url: str = Field(description="The endpoint; the case input is sent as the JSON body.")
    output_path: str | None = Field(
        default=None, description="Dotted path of the output in the response; none: the whole body."
    )
    artifacts: dict[str, str] = Field(
        default_factory=dict, description="Artifact kind → dotted path of it in the response."
    )
    headers: dict[str, str] = Field(
        default_factory=dict,
        description="Request headers; `${NAME}` in a value is read from the environment at call "
        "time and never stored.",
    )
    timeout_s: float = Field(
        default=30.0,
        gt=0,
        description="Seconds one whole response may take: at most the case's `timeout_s`.",
    )
    retries: int = Field(
        default=3, ge=0, description="Extra tries on connection errors, 429 and 5xx, with backoff."
    )
    backoff_s: float = Field(
        default=0.5,
        ge=0,
        description="First backoff, at most 30 s; doubles each try, up to 30 s.",
    )
    reuse: HttpReuse | None = Field(
        default=None,
        description="Reuse executions from earlier runs while `version` is unchanged; without "
        "it the endpoint is called for every case on every run.",
    )

    _capped_backoff = field_validator("backoff_s")(capped_backoff)

    @field_validator("headers")
    @classmethod
    def _each_header_once(cls, headers: dict[str, str], info: ValidationInfo) -> dict[str, str]:
        # HTTP header names ignore case: Authorization and authorization are one header, sent
        # twice with two values, and which one counts is the server's choice. A run's recorded
        # config is read as recorded (it ran so).
        repeat = first_repeat(headers, key=str.lower)
        if repeat is not None and as_written(info):
            first, again = repeat
            raise ValueError(
                f"{again!r} is the header {first!r} again (HTTP header names ignore case), so "
                "both values would be sent and the server would choose one; give it once"
            )
        return headers

    @field_validator("url")
    @classmethod
    def _sendable_url(cls, value: str, info: ValidationInfo) -> str:
        # Checked as a judge's base_url is, at the key's line. A run's recorded config is read
        # as recorded: a URL this check came after ran then, and is re-executed as it ran.
        if not as_written(info):
            return value
        return literal_url(
            value,
            "only header values read ${NAME} from the environment; give the URL itself, and a "
            "key in a header (headers: {Authorization: Bearer ${API_TOKEN}})",
        )


class RagSettings(_Model):
    """A staged RAG system: a class Oloproof runs stage by stage."""

    object: str = Field(description="`module:Class` decorated with @rag_system.")
    depth: int | None = Field(default=None, ge=1, description="Candidates to retrieve.")
    top_k: int | None = Field(default=None, ge=1, description="Candidates kept for the context.")
    token_budget: int | None = Field(default=None, ge=1, description="Context size limit.")
    index_version: str | None = Field(default=None, description="Changes when the index changes.")

    _as_written = field_validator("index_version")(_version_as_written)


class SystemConfig(_Model):
    """The system under test: exactly one of callable, http, rag or model."""

    name: str = Field(min_length=1, description="The system's name.")
    version: str = Field(min_length=1, description="The system's version, as you name it.")
    callable: str | None = Field(default=None, description="`module:function` decorated @system.")
    http: HttpSystem | None = Field(default=None, description="An HTTP endpoint.")
    rag: RagSettings | None = Field(default=None, description="A staged RAG class.")
    model: ModelSystemSettings | None = Field(
        default=None, description="A prompt template a model runs over the cases."
    )

    _as_written = field_validator("version")(_version_as_written)

    @field_validator("name", "version")
    @classmethod
    def _shown(cls, value: str, info: ValidationInfo) -> str:
        # A run's recorded config is read as recorded: what this check came after ran then.
        return _shown_as_written(value, str(info.field_name)) if as_written(info) else value

    @model_validator(mode="after")
    def _exactly_one(self) -> SystemConfig:
        kinds = ("callable", "http", "rag", "model")
        given = [k for k in kinds if getattr(self, k) is not None]
        if len(given) != 1:
            raise ValueError(
                "give exactly one of callable, http, rag or model"
                + (f" (found {', '.join(given)})" if given else "")
            )
        return self


# An address Ray connects to: `auto` (the cluster this machine belongs to), a Ray Client URL, or
# the GCS address of a head node.
RAY_ADDRESS = re.compile(r"auto|ray://[^\s/]+|[A-Za-z0-9._\-]+:[0-9]+")
_RAY_ONLY = (
    "address",
    "replicas",
    "concurrency",
    "num_cpus",
    "num_gpus",
    "memory_mib",
    "max_retries",
    "ship_project",
    "start_timeout_s",
)


class EngineConfig(_Model):
    """Where cases execute: in this process (`local`) or on a pool of Ray actors (`ray`).

    Every setting but `kind` belongs to the ray engine. Caches, judging and the ledger stay in
    the process that runs `oloproof`, whichever engine executes the cases.
    """

    kind: Literal["local", "ray"] = Field(
        default="local", description="`local` (this process) or `ray` (a pool of Ray actors)."
    )
    address: str | None = Field(
        default=None,
        description="The Ray cluster: `auto`, `ray://HOST:PORT` or a head node's `HOST:PORT`; "
        "none: start a Ray instance on this machine for the run.",
    )
    replicas: int | None = Field(
        default=None, ge=1, le=10_000, description="Actors that each build the system once (2)."
    )
    concurrency: int | None = Field(
        default=None,
        ge=1,
        le=MAX_CONCURRENCY,
        description="Cases each replica runs at once (default: the project's concurrency).",
    )
    num_cpus: float | None = Field(default=None, ge=0, description="CPUs per replica (1).")
    num_gpus: float | None = Field(default=None, ge=0, description="GPUs per replica (0).")
    memory_mib: int | None = Field(
        default=None, ge=1, description="Memory Ray reserves per replica, in MiB (none)."
    )
    max_retries: int | None = Field(
        default=None,
        ge=0,
        le=100,
        description="Times a case is sent again after the worker running it died, before it "
        "is recorded as errored (2).",
    )
    ship_project: bool | None = Field(
        default=None,
        description="Send the project folder to the cluster with the run (Ray's working_dir), "
        "for workers that do not share this machine's files (false).",
    )
    start_timeout_s: float | None = Field(
        default=None,
        gt=0,
        description="Seconds to wait for the replicas to start; then the run goes on with "
        "those that did, or gives up when none did (300).",
    )

    @field_validator("address")
    @classmethod
    def _address(cls, value: str | None) -> str | None:
        if value is not None and not RAY_ADDRESS.fullmatch(value):
            raise ValueError(
                f"{value!r} is not a Ray address (use auto, ray://HOST:PORT or HOST:PORT)"
            )
        return value

    @model_validator(mode="after")
    def _ray_settings(self) -> EngineConfig:
        if self.kind == "local":
            given = [k for k in _RAY_ONLY if getattr(self, k) is not None]
            if given:
                raise ValueError(f"{given[0]} is a setting of the ray engine (kind: ray)")
        return self


AnyEvaluatorConfig = Annotated[EvaluatorConfig | JudgeConfig, Field(discriminator="type")]


class ProjectConfig(_Model):
    """oloproof.yaml."""

    # The line of every key, when the config was read from a file (for later errors).
    _lines: dict[tuple[Any, ...], int] = PrivateAttr(default_factory=dict)
    # The keys (dotted) a command-line option or plan_run's overrides set, with what set them:
    # errors about them name it, since the file has no line that says what they say.
    _options: dict[str, str] = PrivateAttr(default_factory=dict)

    def location(self, *keys: Any, path: Path) -> str:
        """``FILE, line N`` of a key path, for errors found after loading (e.g. imports); what
        set the key or one holding it instead of the file (``--engine``, an override)."""
        for depth in range(len(keys), 0, -1):
            said = self._options.get(".".join(str(key) for key in keys[:depth]))
            if said is not None:
                return said
        line = self.line_of(*keys)
        return f"{path}, line {line}" if line is not None else str(path)

    def set_by_option(self, key: str, value: Any, option: str) -> ProjectConfig:
        """A copy with the top-level ``key`` set to ``value`` by the command-line ``option``."""
        changed = self.model_copy(update={key: value})
        changed._options = {**self._options, key: option}
        return changed

    def line_of(self, *keys: Any) -> int | None:
        """The line of a key path, when the config was read from a file."""
        return line_for(keys, self._lines) if self._lines else None

    system: SystemConfig = Field(description="The system under test.")
    dataset: str = Field(default="cases.jsonl", description="Path of the cases, one JSON a line.")
    evaluators: list[AnyEvaluatorConfig] = Field(
        default_factory=list, description="How each output is judged."
    )
    slices: list[str] = Field(
        default_factory=list,
        description="Exploratory breakdowns: `metadata.KEY`, `relevant_position`, "
        "`context_truncated`. They never gate.",
    )
    min_slice_support: int = Field(
        default=5, ge=1, description="A slice value with fewer observed cases shows no interval."
    )
    # Left out, no gate; given, a file name (null is refused: ``_a_policy_named``).
    policy: Annotated[str | None, WithJsonSchema({"type": "string"})] = Field(
        default=None, description="Path of the release policy file."
    )
    concurrency: int = Field(
        default=8, ge=1, le=MAX_CONCURRENCY, description="Cases executed at once."
    )
    timeout_s: float = Field(
        default=120.0, gt=0, le=MAX_TIMEOUT_S, description="Seconds one case may take."
    )
    engine: EngineConfig = Field(
        default_factory=EngineConfig,
        description="Where cases execute: `local` (default), `ray`, or a mapping of engine "
        "settings.",
    )
    secrets: list[SecretName] = Field(
        default_factory=list,
        json_schema_extra={"items": {"type": "string", "pattern": ENV_NAME_PATTERN}},
        description="Environment variables whose values are kept out of everything stored or "
        "printed, beside those named like credentials (`*_API_KEY`, `*_TOKEN`, `*SECRET`, "
        "`*PASSWORD`, ...): for a secret the system's own code reads under another name.",
    )

    @field_validator("engine", mode="before")
    @classmethod
    def _engine_by_name(cls, value: Any) -> Any:
        # `engine: ray` is short for `engine: {kind: ray}`.
        return {"kind": value} if isinstance(value, str) else value

    @field_validator("dataset", "policy")
    @classmethod
    def _a_path(cls, value: str | None) -> str | None:
        # Joined to the project folder, "" would name the folder, not a file.
        if value == "":
            raise ValueError("an empty path names no file")
        return value

    @field_validator("policy", mode="before")
    @classmethod
    def _a_policy_named(cls, value: Any, info: ValidationInfo) -> Any:
        # `policy:` left empty (or null) in oloproof.yaml would run without a gate and exit 0:
        # most likely a file name lost, never a choice worth a green build. No gate is the key
        # left out. (A run's recorded config says null for that: it is read as recorded.)
        if value is None and as_written(info):
            raise ValueError(
                "no policy file is named; name one (policy: policy.yaml), or leave the key out "
                "to run without a release gate"
            )
        return value


def _not_a_percentage(value: Any, what: str) -> Any:
    """``value`` unless it reads as a percentage of what is a fraction of 1 (``what``: a bound,
    a rate): checked before the field's own bounds, which would say only "less than or equal
    to 1", with no word of what was meant, as ``confidence_level`` is (``_Gate``). Above 100
    it is no percentage either, and the bounds say so."""
    if type(value) in (int, float) and 1 < value <= 100:
        raise ValueError(
            f"{value:g} reads as a percentage: {what} is a fraction of 1, so write {value / 100:g}"
        )
    return value


class JudgeRequirement(_Model):
    """What a judge must have shown in calibration before its metric may decide."""

    min_sensitivity: float | None = Field(default=None, ge=0, le=1, description="Lower bound.")
    min_specificity: float | None = Field(default=None, ge=0, le=1, description="Lower bound.")

    @field_validator("min_sensitivity", "min_specificity", mode="before")
    @classmethod
    def _rate_not_a_percentage(cls, rate: Any) -> Any:
        return _not_a_percentage(rate, "a rate")

    @field_validator("min_sensitivity", "min_specificity")
    @classmethod
    def _reachable(cls, rate: float | None, info: ValidationInfo) -> float | None:
        # As `min: 1`: a lower bound from finitely many examples never reaches 100%, so the
        # rule would be MANUAL_REVIEW whatever calibration is recorded.
        if rate == 1 and not _recorded(info):
            raise ValueError(
                "1 can never be met: the lower bound of a rate measured on finitely many "
                "examples stays below 100% (20 agreeing of 20 give 83.1% at 0.95); give the "
                "rate the judge must show (0.8 asks for at least 80%)"
            )
        return rate


class Rule(_Model):
    """One release rule on one metric."""

    id: str = Field(min_length=1, description="The rule's name in the report.")
    metric: str = Field(min_length=1, description="The metric (criterion) it reads.")
    kind: Literal["interval", "observed_count"] = Field(
        default="interval",
        description="`interval`: decide on the metric's interval; `observed_count`: on the count "
        "of observed failures, with no interval.",
    )
    min: float | None = Field(default=None, ge=0, le=1, description="Floor for the interval.")
    max: float | None = Field(default=None, ge=0, le=1, description="Ceiling for the interval.")
    max_failures: int | None = Field(default=None, ge=0, description="For observed_count rules.")
    judge: JudgeRequirement | None = Field(
        default=None, description="Calibration a judge metric needs before it may decide."
    )

    @field_validator("id")
    @classmethod
    def _id_shown(cls, value: str, info: ValidationInfo) -> str:
        return value if _recorded(info) else _shown_as_written(value, "rule id")

    @field_validator("min", "max", mode="before")
    @classmethod
    def _bound_not_a_percentage(cls, bound: Any) -> Any:
        return _not_a_percentage(bound, "a bound")

    @model_validator(mode="after")
    def _shape(self, info: ValidationInfo) -> Rule:
        if self.kind == "observed_count":
            if self.max_failures is None:
                raise ValueError("an observed_count rule needs max_failures")
            if self.min is not None or self.max is not None:
                raise ValueError("an observed_count rule takes max_failures, not min or max")
        elif self.min is None and self.max is None:
            raise ValueError("an interval rule needs min or max")
        elif self.min is not None and self.max is not None and self.min > self.max:
            raise ValueError(f"min {self.min:g} is above max {self.max:g}: no metric can meet both")
        elif self.max_failures is not None:
            raise ValueError("max_failures belongs to kind: observed_count")
        elif not _recorded(info):
            self._decides()
        return self

    def _decides(self) -> None:
        """Refuses an interval rule that no run could pass, or that none could fail: a policy
        mistake, not a gate."""
        if self.min == 1 or self.max == 0:
            # An interval from finitely many cases never reaches all the way to 100% (or to 0):
            # such a rule could only ever block, which is a policy mistake, not a gate.
            bound = "min: 1" if self.min == 1 else "max: 0"
            raise ValueError(
                f"{bound} can never pass: no finite number of cases gives an interval that "
                "reaches it; for a rule that allows no failure at all, use kind: observed_count "
                "with max_failures: 0"
            )
        if self.min is not None and self.min == self.max:
            # An interval from finitely many cases has a width: it never fits on one point.
            raise ValueError(
                f"min and max are both {self.min:g}: no finite number of cases gives an "
                "interval that lies within a single value, so the rule could never pass; give "
                "the range the metric may take (min: 0.6 with max: 0.8), or one bound"
            )
        if self.min in (None, 0) and self.max in (None, 1):
            # Every metric, and so every interval, lies in [0, 1]: nothing falls below 0 or
            # rises above 1, so the rule cannot fail whatever the system does.
            given = (("min: 0", self.min is not None), ("max: 1", self.max is not None))
            bounds = " with ".join(bound for bound, is_given in given if is_given)
            example = (
                "min: 0.7 asks for at least 70%"
                if self.min is not None
                else "max: 0.1 allows at most 10%"
            )
            raise ValueError(
                f"{bounds} can never fail: every metric lies between 0 and 1, so no run could "
                f"fail it; give the bound the release needs ({example})"
            )


R = TypeVar("R")


def _recorded(info: ValidationInfo) -> bool:
    """Whether a policy is read as a run or comparison recorded it (``recorded_policy``)."""
    return bool(info.context and info.context.get(_RECORDED))


def _checked_block_on(block_on: list[Outcome]) -> list[Outcome]:
    # With PASS, the gate would block every run whose rules pass: it could never pass.
    if "PASS" in block_on:
        raise ValueError(
            "PASS is listed, so the gate would block whenever a rule passes and could never "
            "pass; list the outcomes that block (FAIL, INSUFFICIENT_EVIDENCE, MANUAL_REVIEW)"
        )
    # Without FAIL, a rule whose interval fails it would let the gate pass: never a gate.
    if "FAIL" not in block_on:
        raise ValueError(
            "FAIL is not listed, so a rule that fails would pass the gate; list FAIL "
            "(INSUFFICIENT_EVIDENCE and MANUAL_REVIEW are yours to choose)"
        )
    # A repeat changes nothing, but is most often another outcome mistyped as the one before
    # it (`[FAIL, FAIL]` for `[FAIL, MANUAL_REVIEW]`), which then does not block.
    repeat = first_repeat(block_on)
    if repeat is not None:
        raise ValueError(f"{repeat[1]} is listed twice; list each outcome that blocks once")
    return block_on


# Below 0.5 an "interval" covers the value less often than not; at 1 it is every value.
LEVELS = (0.5, 0.999)


def _a_level(level: float) -> float:
    low, high = LEVELS
    if not low <= level <= high:
        raise ValueError(
            f"{level:g} is outside {low:g} to {high:g}: an interval at that level would not "
            "mean what a gate needs (0.95 is usual)"
        )
    return level


def _at_least_one(rules: list[R]) -> list[R]:
    # A policy of no rules passes any run: almost surely a file cut short, never a gate.
    if not rules:
        raise ValueError("a policy needs at least one rule (with none, any run would pass)")
    return rules


class _Gate(_Model):
    """What a release policy and a comparison policy share: the format version, the level of
    every interval, and the outcomes that block."""

    version: Literal[1] = Field(description="Policy format version.")
    confidence_level: float = Field(default=0.95, gt=0, lt=1, description="Interval level.")
    block_on: list[Outcome] = Field(
        default_factory=lambda: list(_DEFAULT_BLOCK_ON),
        description="Outcomes that block the gate.",
    )

    # The line of every key, when the policy was read from a file: its rules are checked
    # against the project's evaluators (a release policy) or the two runs' metrics (a
    # comparison policy) only after the file was read.
    _lines: dict[tuple[Any, ...], int] = PrivateAttr(default_factory=dict)

    def location(self, *keys: Any, path: Path) -> str:
        """``FILE, line N`` of a key path, or ``FILE`` when the policy was not read from one."""
        line = line_for(keys, self._lines) if self._lines else None
        return f"{path}, line {line}" if line is not None else str(path)

    @field_validator("version", mode="before")
    @classmethod
    def _the_number_1(cls, version: Any) -> Any:
        # Checked before the literal is: `Literal[1]` compares by equality, and True == 1.0 == 1.
        if isinstance(version, bool | float):
            found = f"the boolean {str(version).lower()}" if isinstance(version, bool) else version
            raise ValueError(f"the policy format version is the number 1, not {found}")
        return version

    # The checks on a policy's choices (these, the rules', at least one rule) were added over
    # time: a policy a run or comparison recorded is read as it decided then (``_recorded``).
    @field_validator("block_on")
    @classmethod
    def _gate_blocks(cls, block_on: list[Outcome], info: ValidationInfo) -> list[Outcome]:
        return block_on if _recorded(info) else _checked_block_on(block_on)

    @field_validator("confidence_level", mode="before")
    @classmethod
    def _not_a_percentage(cls, level: Any, info: ValidationInfo) -> Any:
        # Before the field's own bounds, which would say only "less than 1".
        low, high = LEVELS
        if type(level) in (int, float) and low <= level / 100 <= high and not _recorded(info):
            raise ValueError(
                f"{level:g} reads as a percentage: the level is a fraction of 1, so write "
                f"{level / 100:g}"
            )
        return level

    @field_validator("confidence_level")
    @classmethod
    def _level(cls, level: float, info: ValidationInfo) -> float:
        return level if _recorded(info) else _a_level(level)


class Policy(_Gate):
    """A release policy: rules on one run's metrics."""

    rules: list[Rule] = Field(description="The rules (at least one).")

    @field_validator("rules")
    @classmethod
    def _some_rules(cls, rules: list[Rule], info: ValidationInfo) -> list[Rule]:
        return rules if _recorded(info) else _at_least_one(rules)

    @model_validator(mode="after")
    def _unique_ids(self) -> Policy:
        _check_unique([r.id for r in self.rules])
        return self


class Margin(_Model):
    margin: float = Field(ge=0, le=100, description="Margin in percentage points.")

    @field_validator("margin")
    @classmethod
    def _in_points(cls, margin: float, info: ValidationInfo) -> float:
        # Release bounds are fractions (min: 0.8), so 0.05 here is most likely 5% meant as a
        # fraction: read as 0.05 points, a superiority rule would pass a gain 100 times too
        # small. A margin between 0 and 1 point cannot be told from that mistake.
        if 0 < margin < 1 and not _recorded(info):
            points = f"{margin * 100:g}"
            raise ValueError(
                f"a margin is in points, not a fraction: {margin:g} would be {margin:g} of one "
                f"point, not {points}%; write {points} for {points} points (a margin between 0 "
                "and 1 point is refused, as it reads like a fraction)"
            )
        return margin


# What a margin of 100 points leaves a comparison rule unable to do, and what to give instead.
_FULL_MARGIN = {
    "non_inferiority": ("fail", "give the largest loss you would accept (margin: 5 is 5 points)"),
    "equivalence": (
        "fail",
        "give the largest difference you would call none (margin: 5 is 5 points)",
    ),
    "superiority": ("pass", "give the gain you need (margin: 0 asks for any)"),
}


class CompareRule(_Model):
    """One comparison rule: non-inferiority, superiority or equivalence, by a margin in points."""

    id: str = Field(min_length=1, description="The rule's name in the report.")
    metric: str = Field(min_length=1, description="The metric both runs have.")
    non_inferiority: Margin | None = Field(default=None, description="Not worse by > margin.")
    superiority: Margin | None = Field(default=None, description="Better by > margin.")
    equivalence: Margin | None = Field(default=None, description="Within ± margin.")
    judge: JudgeRequirement | None = Field(
        default=None,
        description="For a judge's metric: the calibration's lower bounds it needs to decide.",
    )

    @field_validator("id")
    @classmethod
    def _id_shown(cls, value: str, info: ValidationInfo) -> str:
        return value if _recorded(info) else _shown_as_written(value, "rule id")

    @model_validator(mode="after")
    def _one_test(self, info: ValidationInfo) -> CompareRule:
        given = [k for k in ("non_inferiority", "superiority", "equivalence") if getattr(self, k)]
        if len(given) != 1:
            raise ValueError("give exactly one of non_inferiority, superiority or equivalence")
        if not _recorded(info):
            self._decides()
        return self

    def _decides(self) -> None:
        """Refuses a margin no paired interval can lie beyond: the rule could never fail (or,
        for superiority, never pass)."""
        name, margin = self.test
        if margin == 1:
            # A paired difference of two metrics in [0, 1], and so its interval, lies in
            # [-100, +100] points: no interval lies wholly beyond a margin of 100.
            fixed, instead = _FULL_MARGIN[name]
            raise ValueError(
                f"{name} with margin 100 can never {fixed}: two metrics between 0 and 1 never "
                f"differ by more than 100 points; {instead}"
            )

    @property
    def test(self) -> tuple[str, float]:
        """The test's name and its margin as a fraction."""
        for name in ("non_inferiority", "superiority", "equivalence"):
            margin: Margin | None = getattr(self, name)
            if margin is not None:
                return name, margin.margin / 100.0
        raise AssertionError("validated to have one test")


class ComparePolicy(_Gate):
    """A comparison policy: rules on the paired differences between two runs."""

    rules: list[CompareRule] = Field(description="The rules (at least one).")

    @field_validator("rules")
    @classmethod
    def _some_rules(cls, rules: list[CompareRule], info: ValidationInfo) -> list[CompareRule]:
        return rules if _recorded(info) else _at_least_one(rules)

    @model_validator(mode="after")
    def _unique_ids(self) -> ComparePolicy:
        _check_unique([r.id for r in self.rules])
        return self


def _check_unique(ids: list[str]) -> None:
    repeat = first_repeat(ids)
    if repeat is not None:
        raise ValueError(f"rule id {repeat[1]!r} appears twice")


# ---------------------------------------------------------------- loading with line numbers


def validation_error(
    path: Path,
    exc: ValidationError,
    lines: dict[tuple[Any, ...], int],
    model: Any = None,
    data: Any = None,
) -> ConfigError:
    """Turn the first pydantic error into one sentence naming file, key and line.

    With the ``model`` and the ``data`` it validated, an unknown key names the closest allowed
    one, and an unknown ``type:`` tag the closest known type (``oloproof.suggest``).
    """
    err = _first_fault(exc.errors())
    loc = _data_loc(err["loc"], lines, missing=err["type"] == "missing")
    problem = (err.get("ctx") or {}).get("error")
    if isinstance(problem, SchemaProblem):
        # An inline JSON Schema's fault is named at its own key, under the `schema` written.
        loc = (*loc, "schema", *problem.at)
        err["msg"] = problem.message
    key = ".".join(str(p) for p in loc) or "(top level)"
    line = line_for(loc, lines)
    where = f"{path}, line {line}" if line is not None else str(path)
    message = err["msg"]
    found = err.get("input")
    if err["type"] in ("int_type", "float_type") and isinstance(found, bool):
        message = f"expected a number, found the boolean {str(found).lower()}"
    elif err["type"] in ("int_type", "float_type") and isinstance(found, str | float):
        # Text: quoted, or no number at all.
        wanted = "an integer" if err["type"] == "int_type" else "a number"
        value = f"the text {found!r}" if isinstance(found, str) else repr(found)
        message = f"expected {wanted}, found {value}"
    elif err["type"] == "string_type" and isinstance(found, int | float):
        # `version: 1.10` is the number 1.1: the quotes keep what was written.
        value = f"boolean {str(found).lower()}" if isinstance(found, bool) else f"number {found!r}"
        message = f"expected text, found the {value} (quote it to keep it as written)"
    elif err["type"] == "extra_forbidden" and (unseen := id_problem(str(loc[-1]), "key")):
        # A key holding what does not show (a byte-order mark) would print as a known key:
        # named at what holds it, the key itself escaped, with what it looks like.
        key = ".".join(str(p) for p in loc[:-1]) or "(top level)"
        message = f"unknown key {unseen}"
    elif err["type"] == "extra_forbidden" and (test := kind_naming_a_test(loc[-1], found)):
        message = (
            f"unknown key; a comparison rule gives its test as a key of its own, "
            f"{test}: {{margin: POINTS}}"
        )
    elif err["type"] == "literal_error" and (test := kind_naming_a_test(loc[-1], found)):
        message = (
            f"{test} is a comparison test, for a rule `oloproof compare --policy` reads; "
            "a release rule's kind is interval or observed_count"
        )
    elif err["type"] == "extra_forbidden":
        message = "unknown key" + did_you_mean(str(loc[-1]), allowed_keys(model, loc, data))
    elif err["type"] == "union_tag_invalid":
        message = _unknown_tag(loc, err.get("ctx") or {})
    elif err["type"] == "missing":
        message = "required key is missing"
    message = message.removeprefix("Value error, ")
    return ConfigError(f"{where}: {key}: {message}")


def _first_fault(errors: list[Any]) -> Any:
    """The first of pydantic's ``errors``, but for a required key reported missing beside an
    unknown key like it in the same mapping (``rule:`` for ``rules:``, ``metric`` holding a
    byte-order mark that shows as nothing): that unknown key. The file does give the key,
    written otherwise, and "required key is missing" named a key the reader sees written, at
    the line of the mapping that holds it rather than its own."""
    first = errors[0]
    if first["type"] != "missing":
        return first
    *holder, name = first["loc"]
    for err in errors:
        *at, key = err["loc"]
        if err["type"] == "extra_forbidden" and at == holder and closest(str(key), [str(name)]):
            return err
    return first


def _unknown_tag(loc: tuple[Any, ...], ctx: dict[str, Any]) -> str:
    """``unknown evaluator type 'ndgc'; did you mean 'ndcg'?``, with the known types."""
    tag = str(ctx.get("tag", ""))
    known = [t.strip(" '") for t in str(ctx.get("expected_tags", "")).split(",") if t.strip()]
    what = "evaluator type" if loc[:1] == ("evaluators",) else "type"
    return f"unknown {what} {tag!r}{did_you_mean(tag, known)} (known: {', '.join(known)})"


def _data_loc(
    loc: tuple[Any, ...], lines: dict[tuple[Any, ...], int], *, missing: bool
) -> tuple[Any, ...]:
    """Drop the parts of a pydantic location that are not in the data (union tags), but for
    the key a ``missing`` error names."""
    kept: list[Any] = []
    for index, part in enumerate(loc):
        if (*kept, part) in lines or (missing and index == len(loc) - 1):
            kept.append(part)
    return tuple(kept)


def load_config(path: str | Path) -> ProjectConfig:
    """Read and validate oloproof.yaml."""
    path = path_argument("path", path, "the path of a project file", where="load_config()")
    return overridden_config(path, {})


_OVERRIDES = "plan_run(): overrides"  # where a setting an override made is said to be


def overridden_config(path: Path, overrides: Mapping[str, Any]) -> ProjectConfig:
    """oloproof.yaml, read and validated, with ``overrides`` (``plan_run``'s: dotted setting
    names to values) set in what the file says: checked as the file is (WRITTEN), so that a
    setting given in Python is refused where the file's would be (one price alone, a call's
    timeout past the case's, a prompt_file that is a pipe)."""
    data, lines = read_yaml(path)
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a mapping of settings at the top level")
    try:
        config = ProjectConfig.model_validate(data, context={WRITTEN: True})
    except ValidationError as exc:
        kind = wrong_kind(data, "config")
        if kind is not None:
            raise ConfigError(f"{path}: {kind}") from None
        raise validation_error(path, exc, lines, ProjectConfig, data) from None
    if overrides:
        _override(data, overrides)
        try:
            config = ProjectConfig.model_validate(data, context={WRITTEN: True})
        except ValidationError as exc:
            raise _override_error(exc, data) from None
    config._lines = lines
    config._options = dict.fromkeys(overrides, _OVERRIDES)
    _check_paths(config, path)
    _refuse_calls_past_the_case(config, data, path)
    return config


def _override(data: dict[str, Any], overrides: Mapping[str, Any]) -> None:
    """Set each of ``overrides`` in ``data``, the settings as written."""
    for dotted, value in overrides.items():
        target = data
        *parents, last = dotted.split(".")
        for depth, part in enumerate(parents, 1):
            target = target.setdefault(part, {})
            if not isinstance(target, dict):  # a list or a value: no key of it can be set
                held = ".".join(parents[:depth])
                raise ConfigError(
                    f"{dotted!r} names a key inside {held}, which holds no named settings: "
                    f"override {held} whole",
                    where=_OVERRIDES,
                )
        target[last] = value


def _override_error(exc: ValidationError, data: dict[str, Any]) -> ConfigError:
    """The first fault of the overridden settings ``data`` in one sentence, naming the setting as
    a dotted key: the parts of pydantic's location the data holds (not a union's tag), and a
    key it lacks at the end (a required one missing)."""
    err = exc.errors()[0]
    node: Any = data
    kept: list[str] = []
    for index, part in enumerate(err["loc"]):
        held = isinstance(node, dict) and part in node
        if held or (isinstance(node, list) and isinstance(part, int)):
            kept.append(str(part))
            node = node[part]
        elif index == len(err["loc"]) - 1:
            kept.append(str(part))
    message = err["msg"].removeprefix("Value error, ")
    return ConfigError(f"{'.'.join(kept)}: {message}", where=_OVERRIDES)


def _refuse_calls_past_the_case(config: ProjectConfig, data: dict[str, Any], path: Path) -> None:
    """Refuse an http or model system's ``timeout_s`` given longer than the case's, naming
    both and where each was set: the case is stopped at its own, so the call's would never
    apply, nor the retries after a call that timed out. A default that long is left as it is:
    the case stops first, as it always did, and an LLM judge's call, which no case timeout
    stops, keeps its server profile's default (600 s for a queueing llama.cpp)."""
    written = data.get("system")
    for kind in ("http", "model"):
        settings: HttpSystem | ModelSystemSettings | None = getattr(config.system, kind)
        given = written.get(kind) if isinstance(written, dict) else None
        # As written: a server profile's defaults are among the settings once they validate.
        if settings is None or not isinstance(given, dict) or "timeout_s" not in given:
            continue
        call = settings.timeout_s
        if call is None or call <= config.timeout_s:
            continue
        case_given = "timeout_s" in config.model_fields_set
        case = f"line {config.line_of('timeout_s')}" if case_given else "its default"
        raise ConfigError(
            f"{config.location('system', kind, 'timeout_s', path=path)}: system.{kind}."
            f"timeout_s: {call:g} s is longer than a case may take, timeout_s: "
            f"{config.timeout_s:g} s ({case}), which stops the case first: this timeout, and "
            f"every retry after a call that reached it, would never apply; give at most "
            f"{config.timeout_s:g} s, or a longer timeout_s for the case"
        )


def _check_paths(config: ProjectConfig, path: Path) -> None:
    """Refuse a file the config names that cannot be looked up at all, or that is no regular
    file (a named pipe, ``/dev/zero``), at its key: read later, the error could name only the
    file, and the rubric, prompt and schema readers would wait on a pipe's writer, or read a
    device that never ends, forever. A missing file (or a folder) is left to the command that
    reads it (``calibrate`` reads no cases)."""
    for keys, value in _named_files(config):
        target = path.resolve().parent / value
        fault = input_fault(target)
        if fault is not None:
            where = config.location(*keys, path=path)
            key = ".".join(str(k) for k in keys)
            raise ConfigError(f"{where}: {key}: {target}: cannot read it ({fault})")


def _named_files(config: ProjectConfig) -> Iterator[tuple[tuple[str | int, ...], str]]:
    """Each file the config names, with its key path."""
    yield ("dataset",), config.dataset
    if config.policy is not None:
        yield ("policy",), config.policy
    settings: list[tuple[tuple[str | int, ...], BaseModel]] = [
        (("evaluators", index), evaluator) for index, evaluator in enumerate(config.evaluators)
    ]
    if config.system.model is not None:
        settings.append((("system", "model"), config.system.model))
    for at, model in settings:
        for key in ("schema_path", "rubric_file", "prompt_file", "context_file"):
            value = getattr(model, key, None)
            if value is not None:
                yield (*at, key), value


def load_policy(path: Path, *, as_recorded: bool = False) -> Policy:
    """Read and validate a release policy file.

    ``as_recorded``: read it as ``recorded_policy`` reads a run's record, without the checks
    on its choices an earlier release may not have made, to hold it to what a run recorded.
    """
    data, lines = read_yaml(path)
    _a_policy_mapping(path, data, lines)
    _repeated_rule_id(path, data, lines)
    try:
        policy = Policy.model_validate(data, context={_RECORDED: True} if as_recorded else None)
    except ValidationError as exc:
        kind = wrong_kind(data, "policy")
        if kind is not None:
            raise ConfigError(f"{path}: {kind}") from None
        raise validation_error(path, exc, lines, Policy, data) from None
    policy._lines = lines
    return policy


def recorded_policy(body: Any) -> Policy:
    """A release policy as a run recorded it, read to re-derive what the run decided.

    A rule no run could pass or fail (``min: 1``, ``min: 0`` …) is refused when a policy file is
    read, but a release before that refusal may have recorded one; its run was decided by it,
    and is re-derived by it.
    """
    return Policy.model_validate(body, context={_RECORDED: True})


def recorded_compare_policy(body: Any) -> ComparePolicy:
    """A comparison policy as a comparison recorded it (as ``recorded_policy``)."""
    return ComparePolicy.model_validate(body, context={_RECORDED: True})


def _repeated_rule_id(path: Path, data: dict[str, Any], lines: dict[tuple[Any, ...], int]) -> None:
    """A rule id given twice, named at its second line (the model's own check, which runs
    wherever a policy is validated, knows no lines). Ids are compared as a reader sees them
    (``same_text``), as case ids are: two that differ only in how an accented letter is
    encoded would print as one id on two rows of the gate, each deciding on its own."""
    rules = data.get("rules")
    if not isinstance(rules, list):
        return
    ids = [
        (index, rule["id"])
        for index, rule in enumerate(rules)
        if isinstance(rule, dict) and isinstance(rule.get("id"), str)
    ]
    repeat = first_repeat(ids, key=lambda index_id: same_text(index_id[1]))
    if repeat is None:
        return
    (first, earlier), (index, rule_id) = repeat
    line = line_for(("rules", index, "id"), lines)
    first_line = line_for(("rules", first, "id"), lines)
    said = f"rule id {rule_id!r} is also rule {first}'s (line {first_line})"
    if rule_id != earlier:
        said = (
            f"rule id {rule_id!a} is the same text as rule {first}'s {earlier!a} (line "
            f"{first_line}), written with other Unicode code points (they look alike wherever "
            "they are shown)"
        )
    raise ConfigError(
        f"{path}, line {line}: rules.{index}.id: {said}; each rule's decision is reported by its id"
    )


def load_compare_policy(path: Path) -> ComparePolicy:
    """Read and validate a comparison policy file."""
    data, lines = read_yaml(path)
    _a_policy_mapping(path, data, lines)
    _repeated_rule_id(path, data, lines)
    try:
        policy = ComparePolicy.model_validate(data)
    except ValidationError as exc:
        kind = wrong_kind(data, "compare_policy")
        if kind is not None:
            raise ConfigError(f"{path}: {kind}") from None
        raise validation_error(path, exc, lines, ComparePolicy, data) from None
    policy._lines = lines
    return policy


def _a_policy_mapping(path: Path, data: Any, lines: dict[tuple[Any, ...], int]) -> None:
    """Refuse a policy file (a release's or a comparison's) that holds no mapping at its top
    level, at the line its value starts on and with what it holds instead, as every other
    fault of the file is named: an empty file, or one of comments (a policy still to be
    written), has no node, so its mapping would start on line 1."""
    if not isinstance(data, dict):
        raise ConfigError(
            f"{path}, line {lines.get((), 1)}: (top level): expected a policy mapping "
            f"(version, rules), found {_found(data)}"
        )


def _found(data: Any) -> str:
    """What a YAML file holds at its top level instead of a mapping, in words."""
    if data is None:
        return "nothing"
    if isinstance(data, list):
        return "a list"
    if isinstance(data, str):
        return "text"
    if isinstance(data, bool):
        return f"the value {str(data).lower()}"  # as YAML writes it
    return f"the value {data!r}"
