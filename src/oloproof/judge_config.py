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

import datetime
import math
import re
from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_core import InitErrorDetails, PydanticCustomError, ValidationError

from ledger.codec import INT_MAX, INT_MIN
from oloproof.envnames import ENV_NAME_PATTERN, SHELL_REFERENCE, variable_name

ProviderName = Literal["openai", "anthropic"]
ServerName = Literal["vllm", "llama.cpp", "ollama"]
Instructions = Literal["auto", "system", "user"]
StructuredOutput = Literal["auto", "json_schema", "json_object", "off"]
TokenLimitField = Literal["max_completion_tokens", "max_tokens"]

DEFAULT_BASE_URLS: dict[str, str] = {
    "openai": "https://api.openai.com/v1",
    "anthropic": "https://api.anthropic.com",
}
"""Where each provider is reached when ``base_url`` is not given (and no ``server`` is named)."""

DEFAULT_KEY_ENVS: dict[str, str] = {
    "openai": "OPENAI_API_KEY",
    "anthropic": "ANTHROPIC_API_KEY",
}
"""The environment variable each provider's key is read from when ``api_key_env`` is not given."""

HOSTED_DEFAULTS: dict[str, Any] = {
    "concurrency": 4,
    "timeout_s": 60.0,
    "max_retries": 4,
    "retry_on_timeout": True,
    "max_tokens_field": "max_completion_tokens",
}
"""The call settings of a hosted API (and of a compatible server no ``server`` names)."""

SERVER_PROFILES: dict[str, dict[str, Any]] = {
    # vLLM batches requests and drops a request whose client went away: parallel calls are
    # cheap, and a timed-out call may be tried again.
    "vllm": {
        "base_url": "http://127.0.0.1:8000/v1",
        "api_key_env": None,
        "concurrency": 8,
        "timeout_s": 300.0,
        "max_retries": 2,
        "retry_on_timeout": True,
        "max_tokens_field": "max_completion_tokens",
        "temperature": 0.0,
    },
    # llama.cpp's server (and llama-cpp-python's) computes one request per slot, queues the
    # rest, and finishes a request whose client gave up: a retry after a timeout only queues
    # behind the abandoned attempt. It reads `max_tokens`.
    "llama.cpp": {
        "base_url": "http://127.0.0.1:8080/v1",
        "api_key_env": None,
        "concurrency": 1,
        "timeout_s": 600.0,
        "max_retries": 1,
        "retry_on_timeout": False,
        "max_tokens_field": "max_tokens",
        "temperature": 0.0,
    },
    # Ollama runs one request per model at a time unless OLLAMA_NUM_PARALLEL says otherwise,
    # and finishes processing a prompt whose client went away.
    "ollama": {
        "base_url": "http://127.0.0.1:11434/v1",
        "api_key_env": None,
        "concurrency": 1,
        "timeout_s": 600.0,
        "max_retries": 1,
        "retry_on_timeout": False,
        "max_tokens_field": "max_tokens",
        "temperature": 0.0,
    },
}
"""The defaults a ``server`` profile brings; a key given in the entry wins over them."""

SYSTEMLESS_MODEL_FAMILIES: tuple[str, ...] = ("gemma",)
"""Model names (lower-cased substrings) whose chat formats have no system role: some servers'
templates for them drop a system message without a word. ``instructions: auto`` sends these
models the instructions in the user turn."""

RESERVED_BODY_KEYS: frozenset[str] = frozenset({"model", "messages", "system", "stream"})
"""Request fields ``extra_body`` may not set: they carry what is judged, or change the reply's
protocol."""

# The same rule as the other evaluators' criterion names (oloproof.evaluator_config).
_CRITERION_PATTERN = r"^[A-Za-z0-9_][A-Za-z0-9_.\-]*$"
_CRITERION_DOC = (
    "The metric this judge's verdicts feed, as policy rules and reports name it "
    "(letters, digits, `_`, `.`, `-`)."
)

# What stands in for an api_key_env that is not a variable name (a key pasted there by mistake),
# so no validation error, however it is printed, repeats the value.
_HIDDEN = "[hidden: not an environment variable name]"
_URL_PATTERN = r"^https?://\S+$"


ADDED_PATHS: dict[str, tuple[str, ...]] = {
    "openai": ("/chat/completions",),
    "anthropic": ("/v1/messages", "/v1"),
}
"""The path each protocol adds to ``base_url`` for a call, then what else of it a base_url
given with that path may end in (the messages protocol's version)."""

# The validation context of settings read from the file the user wrote (``load_config``).
WRITTEN = "written"


def as_written(info: ValidationInfo) -> bool:
    """Whether the settings being validated are read from the file the user wrote, rather than
    as a run recorded them: a check added over time holds only then, since what a run recorded
    before it came ran as recorded and is read so."""
    return bool((info.context or {}).get(WRITTEN))


# A token priced at this or more costs 10,000 a million: over ten times the dearest model's price
# in dollars, euros or pounds, and most likely the per-million figure providers quote, which
# read per token makes every reported cost a million times too high.
MAX_TOKEN_PRICE = 0.01

MAX_BACKOFF_S = 30.0
"""The longest wait before a retry: a doubling backoff without one would wait 256 times the
first after eight tries, past any timeout, and the failure it retries would never be told.
A first wait above it is refused (``capped_backoff``): it would be cut to this."""


def capped_backoff(first_s: float, info: ValidationInfo) -> float:
    """``first_s``, a first wait before a retry (an http system's ``backoff_s``, a provider's
    ``retry_backoff_s``), when it is at most ``MAX_BACKOFF_S``; else a ``ValueError``: every
    wait stops at the cap, so the file would say one wait and the run wait another. A run's
    recorded config is read as recorded: what this check came after ran then."""
    if first_s <= MAX_BACKOFF_S or not as_written(info):
        return first_s
    raise ValueError(
        f"{first_s:g} s is longer than the longest wait between tries, {MAX_BACKOFF_S:g} s, at "
        f"which every wait stops: the retries would wait {MAX_BACKOFF_S:g} s, not {first_s:g}; "
        f"give at most {MAX_BACKOFF_S:g}"
    )


class ProviderSettings(BaseModel):
    """How a judge (or a model system) reaches its model: the provider keys they share.

    Defaults depend on ``provider`` and ``server`` and are filled in when the settings are
    read, so the model holds the values it uses (and a judge's identity records them).
    """

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
    server: ServerName | None = Field(
        default=None,
        description=(
            "A local server's profile (`vllm`, `llama.cpp`, `ollama`; openai provider only): "
            "its default base_url, no key, and call settings that suit it (docs/models.md)."
        ),
    )
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
        json_schema_extra={"pattern": ENV_NAME_PATTERN},
        description=(
            "The name of the environment variable holding the key, read at call time (default "
            "`OPENAI_API_KEY` or `ANTHROPIC_API_KEY`; none with a `server`). Null sends no key. "
            "The key itself never goes in this file."
        ),
    )
    instructions: Instructions = Field(
        default="auto",
        description=(
            "Where the instructions go: `system` (a system message; the messages protocol's "
            "`system` field), `user` (ahead of the material, in the user turn, for chat formats "
            "without a system role), or `auto` (`user` for model families known to lack one, "
            "such as gemma; else `system`)."
        ),
    )
    structured_output: StructuredOutput = Field(
        default="auto",
        description=(
            "How a judge asks for its verdict's shape: `json_schema` (the server enforces the "
            "verdict's JSON Schema), `json_object` (any JSON object), `off` (the prompt alone), "
            "`auto` (`json_schema`). Model systems ignore it."
        ),
    )
    temperature: float | None = Field(
        default=None,
        ge=0.0,
        le=2.0,
        description=(
            "Sampling temperature; unset sends none (the model's default). A `server` profile "
            "sets 0; null sends none with one too. The messages protocol takes none: give it "
            "through `extra_body` if a model still accepts it."
        ),
    )
    max_tokens: int = Field(default=1024, ge=1, description="The most tokens the reply may have.")
    max_tokens_field: TokenLimitField | None = Field(
        default=None,
        description=(
            "The request field that carries `max_tokens` (openai provider): "
            "`max_completion_tokens` (the current API, default) or `max_tokens` (servers that "
            "read only that: the `llama.cpp` and `ollama` profiles)."
        ),
    )
    extra_body: dict[str, Any] = Field(
        default_factory=dict,
        description=(
            "Fields added to every request body as they are (`seed`, `top_p`, a server's own "
            "options...); they win over the fields Oloproof sets, except model, messages, system "
            "and stream. Part of the identity."
        ),
    )
    timeout_s: float | None = Field(
        default=None,
        gt=0,
        description=(
            "Seconds one call may take, from sending to the whole reply, so time spent queued "
            "inside the server counts (default 60; 300 with vllm, 600 with llama.cpp or ollama)."
        ),
    )
    max_retries: int | None = Field(
        default=None,
        ge=0,
        le=20,
        description=(
            "Extra tries after a timeout, a connection error, 408, 409, 429 or a 5xx (default "
            "4; fewer with a `server` profile)."
        ),
    )
    retry_on_timeout: bool | None = Field(
        default=None,
        description=(
            "Whether a timed-out call is tried again (default true; false with llama.cpp or "
            "ollama, which keep computing an abandoned request)."
        ),
    )
    retry_backoff_s: float = Field(
        default=0.5,
        ge=0,
        description=(
            "The first wait before a retry, at most 30 s; it doubles each try (up to 30 s). A "
            "429 with Retry-After waits what the server asks instead (up to 60 s)."
        ),
    )
    concurrency: int | None = Field(
        default=None,
        ge=1,
        description=(
            "Calls in flight at once to this provider (default 4; 8 with vllm, 1 with "
            "llama.cpp or ollama: match the server's slots)."
        ),
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

    @field_validator("price_per_input_token", "price_per_output_token")
    @classmethod
    def _per_token(cls, price: float | None, info: ValidationInfo) -> float | None:
        # A run's recorded config is read as recorded: what this check came after ran then.
        if price is None or price < MAX_TOKEN_PRICE or not as_written(info):
            return price
        raise ValueError(
            f"{price:g} a token is {price * 1e6:,.0f} a million tokens, most likely a price per "
            f"million tokens as providers quote them: give the price of one token "
            f"({price / 1e6:g} for {price:g} a million); in a currency whose unit is that "
            "small, give prices in thousands of it (the cost then reads in thousands too)"
        )

    @model_validator(mode="before")
    @classmethod
    def _provider_defaults(cls, data: Any) -> Any:
        # Fill the per-provider and per-server defaults in the data, so the model holds the
        # values it uses. An explicit `api_key_env: null` or `temperature: null` is kept: it
        # means "send none" (``_NULL_MEANS_NONE``).
        # A provider that is no name (a list: `provider: [openai]`) is refused as it validates.
        provider = data.get("provider") if isinstance(data, dict) else None
        if isinstance(provider, str) and provider in DEFAULT_BASE_URLS:
            data = _with_defaults(dict(data))
        if isinstance(data, dict):
            env = data.get("api_key_env")
            if env is not None and not (isinstance(env, str) and re.match(ENV_NAME_PATTERN, env)):
                data = {**data, "api_key_env": _HIDDEN}
        return data

    _capped_backoff = field_validator("retry_backoff_s")(capped_backoff)

    @field_validator("model")
    @classmethod
    def _model_as_written(cls, value: str, info: ValidationInfo) -> str:
        # Sent as written, every call would name a model no server has (`${JUDGE_MODEL}`),
        # each only a missing judgment or an errored case. A run's recorded config is read as
        # recorded.
        if not as_written(info):
            return value
        return sent_as_written(
            value,
            "only an http system's header values read ${NAME} from the environment; give the "
            "model's name itself",
        )

    @field_validator("api_key_env")
    @classmethod
    def _env_name(cls, value: str | None) -> str | None:
        return None if value is None else variable_name(value)

    @field_validator("base_url")
    @classmethod
    def _sendable_url(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value is None:
            return None
        if not as_written(info):  # a run's recorded config is read as recorded
            return sendable_url(value)
        return literal_url(
            value,
            "only an http system's header values read ${NAME} from the environment; give the "
            "URL itself, and the name of the key's variable in api_key_env",
        )

    @field_validator("extra_body")
    @classmethod
    def _extra_body(cls, value: dict[str, Any]) -> dict[str, Any]:
        reserved = sorted(RESERVED_BODY_KEYS & set(value))
        if reserved:
            raise ValueError(
                f"{', '.join(reserved)} cannot be set here: Oloproof sets "
                f"{'it' if len(reserved) == 1 else 'them'} from the rest of the entry"
            )
        found = unsendable_value(value, ())
        if found is not None:
            # Raised as a validation error of its own, so the message names the very key
            # (extra_body.seed), with its line, rather than the whole extra_body.
            at, why = found
            raise _fault_at("extra_body", at, "unsendable_value", why, value)
        return value

    @model_validator(mode="after")
    def _fits_the_protocol(self) -> ProviderSettings:
        # First of the checks after validation: a server's profile fills in settings of the
        # chat-completions protocol (its base_url ends in /v1), and checked before this, they
        # would be refused as if the entry held them.
        if self.provider == "openai":
            return self
        if self.server is not None:
            raise ValueError(
                f"server: {self.server} speaks the chat-completions protocol: use provider: openai"
            )
        if self.temperature is not None:
            raise ValueError(
                "the messages protocol takes no temperature; give it in extra_body if your "
                "model still accepts one"
            )
        if self.structured_output == "json_object":
            raise ValueError("the messages protocol offers json_schema or off, not json_object")
        return self

    @model_validator(mode="after")
    def _endpoint_not_given_whole(self, info: ValidationInfo) -> ProviderSettings:
        # A base_url ending in what the protocol adds (the endpoint pasted whole) would be
        # called at that path twice, and every call fail with a 404 naming no setting. A run's
        # recorded config is read as recorded.
        base = (self.base_url or "").rstrip("/")
        end = _added_path_at_end(base, self.provider)
        if end is None or not as_written(info):
            return self
        raise _fault_at(
            "base_url",
            ("base_url",),
            "endpoint_given_whole",
            f"ends in {end}, which Oloproof adds itself (a call goes to "
            f"base_url{ADDED_PATHS[self.provider][0]}); give {base.removesuffix(end)}",
            self.base_url,
        )

    @model_validator(mode="after")
    def _nothing_after_the_path(self, info: ValidationInfo) -> ProviderSettings:
        # The protocol's path is added at the end of base_url: after a query (?api-version=…)
        # or a fragment it would land inside them, and every call go to base_url's own path
        # and fail with a 404 naming no setting. The query is not quoted: it may hold a key. A
        # run's recorded config is read as recorded.
        base = self.base_url or ""
        cut = min((at for at in (base.find("?"), base.find("#")) if at >= 0), default=-1)
        if cut < 0 or not as_written(info):
            return self
        what = "a query (?…)" if base[cut] == "?" else "a fragment (#…)"
        kept = base[:cut].rstrip("/")
        end = _added_path_at_end(kept, self.provider)
        raise _fault_at(
            "base_url",
            ("base_url",),
            "query_in_base_url",
            f"holds {what}: the path a call adds ({ADDED_PATHS[self.provider][0]}) would land "
            "inside it, so no call would reach the endpoint (Oloproof sends no query or "
            f"fragment); give {kept if end is None else kept.removesuffix(end)}",
            self.base_url,
        )

    @model_validator(mode="after")
    def _both_prices(self, info: ValidationInfo) -> ProviderSettings:
        # A cost is reckoned from both prices: one alone would be recorded nowhere, and the
        # report show no cost without a word. A run's recorded config is read as recorded.
        prices = ("price_per_input_token", "price_per_output_token")
        given = [key for key in prices if getattr(self, key) is not None]
        if len(given) != 1 or not as_written(info):
            return self
        (key,) = given
        other = next(p for p in prices if p != key)
        raise _fault_at(
            key,
            (key,),
            "one_price",
            f"given without {other}, and a cost needs both: none would be recorded or "
            f"shown; give {other} too (0 for a side that costs nothing)",
            getattr(self, key),
        )

    @property
    def resolved_base_url(self) -> str:
        """``base_url`` with the provider's default filled in, without a trailing slash."""
        return (self.base_url or DEFAULT_BASE_URLS[self.provider]).rstrip("/")

    @property
    def resolved_instructions(self) -> Literal["system", "user"]:
        """Where the instructions go for this model: ``instructions`` with ``auto`` decided."""
        if self.instructions != "auto":
            return self.instructions
        if self.provider == "openai" and any(
            family in self.model.lower() for family in SYSTEMLESS_MODEL_FAMILIES
        ):
            return "user"
        return "system"

    def call_settings(self) -> dict[str, Any]:
        """Concurrency, timeout and retries, every one resolved (never None)."""
        return {
            "concurrency": self.concurrency or HOSTED_DEFAULTS["concurrency"],
            "timeout_s": self.timeout_s or HOSTED_DEFAULTS["timeout_s"],
            "max_retries": (
                HOSTED_DEFAULTS["max_retries"] if self.max_retries is None else self.max_retries
            ),
            "retry_on_timeout": (
                HOSTED_DEFAULTS["retry_on_timeout"]
                if self.retry_on_timeout is None
                else self.retry_on_timeout
            ),
            "backoff_s": self.retry_backoff_s,
        }


def literal_url(url: str, instead: str) -> str:
    """``url`` (an http system's ``url``, a judge's or model system's ``base_url``) when it
    holds no ``${NAME}`` or ``$NAME`` and is ``sendable_url``; else a ``ValueError`` saying
    what to do ``instead``. No URL setting reads the environment: sent (and recorded) as
    written, every call would fail on a host or path no one meant (or a server refuse a key it
    was never given), each only as an errored case or a missing judgment."""
    return sendable_url(sent_as_written(url, instead))


def sent_as_written(value: str, instead: str) -> str:
    """``value`` (a setting sent as it is: a URL, a model's name) when it holds no ``${NAME}``
    or ``$NAME``; else a ``ValueError`` saying what to do ``instead``."""
    found = SHELL_REFERENCE.search(value)
    if found is not None:
        raise ValueError(f"{found.group(0)} is sent as written: {instead}")
    return value


def sendable_url(url: str) -> str:
    """``url``, or a ``ValueError`` (a pydantic validator's refusal) saying its ``url_fault``."""
    fault = url_fault(url)
    if fault is not None:
        raise ValueError(fault)
    return url


def url_fault(url: str) -> str | None:
    """Why a request to ``url`` could never be sent (httpx refuses the URL, it names no host,
    or its port is outside 1..65535) or could not be sent without storing a secret (it holds a
    password, which every run would record with the URL and every error about a call would
    print), or None when it can be."""
    import httpx  # only a configuration naming a model pays for loading it

    try:
        parsed = httpx.URL(url)
    except (httpx.InvalidURL, ValueError) as exc:  # an IDNA error is a ValueError of its own
        return f"no request can be sent there: {exc}"
    if not parsed.host:
        return "no request can be sent there: it names no host"
    if parsed.port is not None and not 1 <= parsed.port <= 65535:
        return f"no request can be sent there: the port {parsed.port} is outside 1..65535"
    if parsed.password:
        return (
            "the URL holds a password (user:password@host), which would be stored with every "
            "run and printed in its errors: give it through an environment variable instead "
            "(a judge's api_key_env, an http system's headers with ${NAME})"
        )
    return None


def unsendable_value(
    value: Any, at: tuple[str | int, ...]
) -> tuple[tuple[str | int, ...], str] | None:
    """The place in ``value`` (a request's JSON) of the first thing a JSON request cannot carry
    or the ledger cannot record (the value is part of an identity), and why; None when there
    is none."""
    pending: list[tuple[tuple[str | int, ...], Any]] = [(at, value)]
    while pending:  # a stack, not recursion: Python code may hand in any depth
        where, item = pending.pop()
        if isinstance(item, dict):
            bad_key = next((key for key in item if not isinstance(key, str)), None)
            if bad_key is not None:
                return where, f"the key {bad_key!r} is not text, and a JSON key must be"
            inner = [((*where, key), v) for key, v in item.items()]
        elif isinstance(item, list | tuple):
            inner = [((*where, index), v) for index, v in enumerate(item)]
        else:
            why = _scalar_fault(item)
            if why is not None:
                return where, why
            continue
        pending.extend(reversed(inner))  # so the first in the file is found first
    return None


def _scalar_fault(item: Any) -> str | None:
    if item is None or isinstance(item, bool):
        return None
    if isinstance(item, int):
        if INT_MIN <= item <= INT_MAX:
            return None
        return f"the integer {item} is outside -2**64 .. 2**64-1"
    if isinstance(item, float):
        if math.isfinite(item):
            return None
        return f"{item} is not a number a JSON request can carry (JSON has no NaN or infinity)"
    if isinstance(item, str):
        if _LONE_SURROGATE.search(item) is None:
            return None
        return "the text holds a lone surrogate escape (\\uD800-\\uDFFF without its pair)"
    what, remedy = _UNSENDABLE.get(type(item), (f"a value of type {type(item).__name__}", ""))
    return f"{what}, which a JSON request cannot carry{remedy}"


# A \uD800-\uDFFF escape that YAML reads without its pair is no character UTF-8 can encode.
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
_UNSENDABLE: dict[type, tuple[str, str]] = {
    bytes: ("bytes (YAML's !!binary)", ""),
    datetime.date: ("a date", " (YAML reads an unquoted 2024-01-01 as one: quote it for the text)"),
    datetime.datetime: ("a date and time", " (YAML reads an unquoted timestamp as one: quote it)"),
    set: ("a set (YAML's !!set)", ": give a list"),
}


def _with_defaults(data: dict[str, Any]) -> dict[str, Any]:
    provider = data["provider"]
    profile = _profile(data)
    defaults: dict[str, Any] = {
        "base_url": DEFAULT_BASE_URLS[provider],
        "api_key_env": DEFAULT_KEY_ENVS[provider],
        **HOSTED_DEFAULTS,
        **profile,
    }
    if provider == "anthropic":
        defaults["max_tokens_field"] = "max_tokens"  # the messages protocol's only field
    for key, value in defaults.items():
        if key in _NULL_MEANS_NONE:
            if key not in data:
                data[key] = value
        elif data.get(key) is None:
            data[key] = value
    return data


_NULL_MEANS_NONE = frozenset({"api_key_env", "temperature"})
"""The settings whose explicit null is a choice of its own, kept over any default: send no key,
send no temperature (the model's own; a ``server`` profile's 0 would replace it)."""


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


def _added_path_at_end(base: str, provider: str) -> str | None:
    """The path of ``ADDED_PATHS[provider]`` that ``base`` (a base_url, without a trailing
    ``/``) ends in, or None."""
    return next((path for path in ADDED_PATHS[provider] if base.endswith(path)), None)


def _fault_at(
    title: str, loc: tuple[str | int, ...], kind: str, why: str, given: Any
) -> ValidationError:
    """A validation error at ``loc`` itself (a key of the settings, or one inside a value), so
    that the message names that very key, with its line, rather than the whole entry."""
    fault = InitErrorDetails(type=PydanticCustomError(kind, why), loc=loc, input=given)
    return ValidationError.from_exception_data(title, [fault])


def _profile(entry: Mapping[str, Any]) -> dict[str, Any]:
    """The defaults of the ``server`` the settings ``entry`` (as written) name: none when it
    names none, or gives no name (a list, a mapping: refused as the entry validates)."""
    server = entry.get("server")
    return SERVER_PROFILES.get(server, {}) if isinstance(server, str) else {}


class ModelSystemSettings(ProviderSettings):
    """A system that is a prompt template run over the cases by a model (``system: model:``).

    The provider keys are the judges' (``provider``, ``model``, ``server``, ``base_url``, ...);
    ``structured_output`` does not apply. ``{{ key }}`` in the prompt is the case input's
    ``key`` (dotted for nested keys; a value that is not text goes in as JSON), and
    ``{{ context }}`` the passages of ``context_field`` or ``context_file``.
    """

    prompt: str | None = Field(
        default=None,
        min_length=1,
        description="The user message, with `{{ key }}` placeholders. This or `prompt_file`.",
    )
    prompt_file: str | None = Field(
        default=None,
        min_length=1,
        description=(
            "A UTF-8 file holding the prompt, relative to the configuration file; its text, "
            "not its path, is part of the system's identity."
        ),
    )
    system_prompt: str | None = Field(
        default=None,
        min_length=1,
        description="Instructions sent as the system message (or in the user turn, as set).",
    )
    context_field: str | None = Field(
        default=None,
        min_length=1,
        description=(
            "The case input key holding the passages the model is given (a list of "
            "`{doc_id, text}` or of strings); recorded as the case's `context/v1`."
        ),
    )
    context_file: str | None = Field(
        default=None,
        min_length=1,
        description=(
            "A JSON file of passages (`[{doc_id, text}, ...]`) every case is given, relative "
            "to the configuration file; recorded as each case's `context/v1`."
        ),
    )
    output: Literal["text", "json"] = Field(
        default="text",
        description=(
            "`text`: the output is the reply's text; `json`: the reply must be a JSON object, "
            "which becomes the output (else the case errored)."
        ),
    )

    @model_validator(mode="after")
    def _one_prompt(self) -> ModelSystemSettings:
        if (self.prompt is None) == (self.prompt_file is None):
            raise ValueError("give exactly one of `prompt` (inline) or `prompt_file` (a file)")
        if self.context_field is not None and self.context_file is not None:
            raise ValueError("give at most one of `context_field` or `context_file`")
        return self
