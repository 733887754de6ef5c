"""The LLM judges: groundedness, citation support, answer equivalence and rubric.

A judge renders its versioned prompt template with what it reads of one case, sends it to its
provider, and reads one JSON object out of the reply (``{"verdict": "pass" | "fail", ...}``, or
``{"score": x, ...}`` for a rubric on the score scale). What can happen:

- ``pass`` / ``fail`` (or ``value`` for a score): the judge answered. The detail holds the token
  ``usage``, the provider's ``reply_id``, ``system_fingerprint`` and ``reply_model`` (None when
  not given), the ``finish_reason``, the number of ``attempts``, the judge's ``explanation``, and
  ``cost`` when both prices per token are configured.
- ``missing: judge_call_failed``: the call still failed after its retries (timeout, connection,
  HTTP status, unset key); the detail says how. Never a pass or a fail.
- ``missing: unparseable_judgment``: the reply held no usable judgment (or was not even the
  protocol's reply); the detail keeps ``raw_reply``.
- ``excluded``: the case lacks what the judge reads by design: ``no_context_recorded``,
  ``no_context_text``, ``no_citations_recorded``, ``no_citations``, ``no_expected_value``.
- ``fail: field_missing`` / ``fail: field_not_text``: the output has no answer text where
  ``field`` points, decided without a call, as the text checks decide it.

``spec()`` is the judge's identity: everything that can change a verdict (type, criterion,
provider, model, base URL, template name/version/SHA-256, temperature, max_tokens, the fields it
reads, the rubric and scale, the judge code's version) and nothing secret. ``judge_identity``
hashes it without the criterion (a name for the metric, which changes no verdict); calibrations
are bound to that key.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from types import TracebackType
from typing import Any, ClassVar, Literal, Self

from oloproof.errors import ConfigError
from oloproof.evaluators.base import AsyncEvaluator, CaseView
from oloproof.evaluators.fields import MISSING, parse_path, read_output, read_path
from oloproof.evaluators.reads import PromptReads, ReadDeclaration, Reads, reads_of
from oloproof.judge_config import (
    AnswerJudgeConfig,
    CitationSupportJudgeConfig,
    GroundednessJudgeConfig,
    JudgeConfig,
    RubricJudgeConfig,
)
from oloproof.prompts import PromptTemplate, load_template
from oloproof.providers import Completion, Provider, ProviderError, make_provider
from oloproof.results import MetricKind, Verdict

__all__ = [
    "AnswerJudge",
    "CitationSupportJudge",
    "GroundednessJudge",
    "LLMJudge",
    "RubricJudge",
    "UsageMeter",
    "build_judge",
    "judge_identity",
    "parse_judgment",
    "usage_totals",
]

AnyJudgeConfig = (
    GroundednessJudgeConfig | CitationSupportJudgeConfig | AnswerJudgeConfig | RubricJudgeConfig
)
Scale = Literal["pass_fail", "score"]

_NOT_GIVEN = "[this id names no passage of the context the model was given]"


class LLMJudge:
    """What the four judges share: the call, the reading of the reply, the identity.

    A subclass names its template and the reason a fail carries, and says what it reads of a
    case (``prepare``): the template's values, or the verdict that stops it before any call.
    """

    TEMPLATE: ClassVar[str]
    FAIL_REASON: ClassVar[str]
    VERSION: ClassVar[int] = 1
    # The artifact kinds its prompt shows (besides the answer and the question).
    ARTIFACTS: ClassVar[tuple[str, ...]] = ()

    def __init__(
        self,
        config: AnyJudgeConfig,
        *,
        provider: Provider | None = None,
        template: PromptTemplate | None = None,
    ) -> None:
        self.config = config
        self.provider: Provider = provider if provider is not None else make_provider(config)
        self.template = template or load_template(self.TEMPLATE, config.template_version)
        self._field = parse_path(config.field)
        self._input_field = parse_path(config.input_field)

    # --- the AsyncEvaluator protocol ---------------------------------------------------------

    @property
    def criterion(self) -> str:
        return self.config.criterion

    @property
    def kind(self) -> MetricKind:
        return "pass_fail"

    @property
    def scale(self) -> Scale:
        return "pass_fail"

    def spec(self) -> dict[str, Any]:
        config = self.config
        return {
            "type": config.type,
            "criterion": config.criterion,
            "version": self.VERSION,
            "provider": config.provider,
            "model": config.model,
            "base_url": config.resolved_base_url,
            "template": self.template.identity(),
            "temperature": config.temperature,
            "max_tokens": config.max_tokens,
            "field": config.field,
            "input_field": config.input_field,
            **self.extra_spec(),
        }

    def reads(self) -> PromptReads:
        """What the prompt includes: a judgment is reused while these values are the same."""
        declared = Reads(
            output=(self.config.field,),
            expected=self.expected_reads(),
            input=(self.config.input_field,),
            artifacts=self.ARTIFACTS,
        )
        return PromptReads(declared, self._prompt_material)

    def _prompt_material(self, view: CaseView) -> Any:
        values = self.prepare(view)
        if isinstance(values, Verdict):  # decided without a call, from what it read
            return ["decided", values.status, values.reason, dict(values.detail)]
        return ["prompt", values]

    def expected_reads(self) -> tuple[str | None, ...]:
        return ()

    async def ajudge(self, view: CaseView) -> Verdict:
        values = self.prepare(view)
        if isinstance(values, Verdict):
            return values
        system, user = self.template.render(values)
        try:
            completion = await self.provider.complete(system, user)
        except ProviderError as exc:
            reason = "unparseable_judgment" if exc.kind == "malformed_response" else None
            return Verdict.missing(reason or "judge_call_failed", **exc.to_detail())
        return self.interpret(completion)

    # --- what a subclass supplies ------------------------------------------------------------

    def prepare(self, view: CaseView) -> dict[str, str] | Verdict:
        """The template's values for this case, or the verdict given without a call."""
        raise NotImplementedError

    def extra_spec(self) -> dict[str, Any]:
        return {}

    # --- shared steps ------------------------------------------------------------------------

    def would_call(self, view: CaseView) -> bool:
        """Whether judging ``view`` needs a call (False when it is decided without one)."""
        return not isinstance(self.prepare(view), Verdict)

    def interpret(self, completion: Completion) -> Verdict:
        """The verdict a reply gives, with the call's metadata in its detail."""
        detail = self._call_detail(completion)
        parsed = parse_judgment(completion.text, self.scale)
        if parsed is None:
            return Verdict.missing("unparseable_judgment", raw_reply=completion.text, **detail)
        explanation = parsed.get("reason")
        detail["explanation"] = explanation if isinstance(explanation, str) else None
        if self.scale == "score":
            return Verdict.scored(float(parsed["score"]), **detail)
        unsupported = parsed.get("unsupported")
        if isinstance(unsupported, list):
            detail["unsupported"] = [item for item in unsupported if isinstance(item, str)]
        if parsed["verdict"].strip().lower() == "pass":
            return Verdict.passed(**detail)
        return Verdict.failed(self.FAIL_REASON, **detail)

    def _call_detail(self, completion: Completion) -> dict[str, Any]:
        usage = completion.usage
        detail: dict[str, Any] = {
            "usage": usage.as_dict(),
            "reply_id": completion.reply_id,
            "system_fingerprint": completion.fingerprint,
            "reply_model": completion.model,
            "finish_reason": completion.finish_reason,
            "attempts": completion.attempts,
        }
        in_price = self.config.price_per_input_token
        out_price = self.config.price_per_output_token
        if in_price is not None and out_price is not None:
            known = usage.input_tokens is not None and usage.output_tokens is not None
            detail["cost"] = (
                (usage.input_tokens or 0) * in_price + (usage.output_tokens or 0) * out_price
                if known
                else None
            )
        return detail

    def answer(self, view: CaseView) -> str | Verdict:
        """The answer text, or the fail that says the output has none."""
        value = read_output(view.output, self._field)
        if value is MISSING:
            return Verdict.failed("field_missing", field=self.config.field)
        if not isinstance(value, str):
            return Verdict.failed(
                "field_not_text", field=self.config.field, type=type(value).__name__
            )
        return value

    def question(self, view: CaseView) -> str:
        """The question shown to the judge: ``input_field``, else the whole input as JSON."""
        value = read_path(view.input, self._input_field)
        if isinstance(value, str):
            return value
        return json.dumps(dict(view.input), ensure_ascii=False, sort_keys=True, default=str)

    # --- pooled connections (optional: without them each call opens its own) ----------------

    async def __aenter__(self) -> Self:
        enter = getattr(self.provider, "__aenter__", None)
        if enter is not None:
            await enter()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        leave = getattr(self.provider, "__aexit__", None)
        if leave is not None:
            await leave(exc_type, exc, tb)


class GroundednessJudge(LLMJudge):
    """Is every claim of the answer supported by the context the answer was given?"""

    TEMPLATE = "groundedness"
    FAIL_REASON = "not_grounded"
    ARTIFACTS = ("context/v1",)

    def prepare(self, view: CaseView) -> dict[str, str] | Verdict:
        answer = self.answer(view)
        if isinstance(answer, Verdict):
            return answer
        items = _context_items(view)
        if isinstance(items, Verdict):
            return items
        if any(not isinstance(item.get("text"), str) for item in items):
            return Verdict.excluded("no_context_text")
        passages = "\n\n".join(_passage(item["doc_id"], item["text"]) for item in items)
        return {
            "question": self.question(view),
            "passages": passages or "(no passages were given)",
            "answer": answer,
        }


class CitationSupportJudge(LLMJudge):
    """Does each cited passage support what the answer cites it for?"""

    TEMPLATE = "citation_support"
    FAIL_REASON = "citation_not_supported"
    ARTIFACTS = ("citations/v1", "context/v1")

    def prepare(self, view: CaseView) -> dict[str, str] | Verdict:
        answer = self.answer(view)
        if isinstance(answer, Verdict):
            return answer
        citations = view.artifact("citations/v1")
        if citations is None:
            return Verdict.excluded("no_citations_recorded")
        cited = [str(doc_id) for doc_id in citations.get("ids", ())]
        if not cited:
            return Verdict.excluded("no_citations")
        items = _context_items(view)
        if isinstance(items, Verdict):
            return items
        texts: dict[str, list[str]] = {}
        for item in items:
            if item["doc_id"] in cited:
                text = item.get("text")
                if not isinstance(text, str):
                    return Verdict.excluded("no_context_text", doc_id=item["doc_id"])
                texts.setdefault(item["doc_id"], []).append(text)
        unique = list(dict.fromkeys(cited))
        passages = "\n\n".join(
            _passage(doc_id, "\n\n".join(texts[doc_id]) if doc_id in texts else _NOT_GIVEN)
            for doc_id in unique
        )
        return {
            "question": self.question(view),
            "passages": passages,
            "cited_ids": ", ".join(cited),
            "answer": answer,
        }


class AnswerJudge(LLMJudge):
    """Does the answer mean the same as the expected answer?"""

    TEMPLATE = "answer_equivalence"
    FAIL_REASON = "not_equivalent"

    def __init__(
        self,
        config: AnswerJudgeConfig,
        *,
        provider: Provider | None = None,
        template: PromptTemplate | None = None,
    ) -> None:
        super().__init__(config, provider=provider, template=template)
        self._expected_field = config.expected_field
        self._expected = parse_path(config.expected_field)

    def extra_spec(self) -> dict[str, Any]:
        return {"expected_field": self._expected_field}

    def expected_reads(self) -> tuple[str | None, ...]:
        return (self._expected_field,)

    def prepare(self, view: CaseView) -> dict[str, str] | Verdict:
        answer = self.answer(view)
        if isinstance(answer, Verdict):
            return answer
        reference = read_path(view.expected, self._expected)
        if reference is MISSING or reference is None:
            return Verdict.excluded("no_expected_value", expected_field=self._expected_field)
        if not isinstance(reference, str):
            reference = json.dumps(reference, ensure_ascii=False, sort_keys=True, default=str)
        return {"question": self.question(view), "reference": reference, "answer": answer}


class RubricJudge(LLMJudge):
    """Does the answer meet a rubric you wrote? Pass/fail, or a score in [0, 1]."""

    TEMPLATE = "rubric_pass_fail"
    FAIL_REASON = "rubric_not_met"

    def __init__(
        self,
        config: RubricJudgeConfig,
        rubric: str,
        *,
        provider: Provider | None = None,
        template: PromptTemplate | None = None,
    ) -> None:
        name = "rubric_score" if config.scale == "score" else "rubric_pass_fail"
        template = template or load_template(name, config.template_version)
        super().__init__(config, provider=provider, template=template)
        self.rubric = rubric
        self._scale: Scale = config.scale

    @property
    def kind(self) -> MetricKind:
        return "mean" if self._scale == "score" else "pass_fail"

    @property
    def scale(self) -> Scale:
        return self._scale

    def extra_spec(self) -> dict[str, Any]:
        return {"rubric": self.rubric, "scale": self._scale}

    def prepare(self, view: CaseView) -> dict[str, str] | Verdict:
        answer = self.answer(view)
        if isinstance(answer, Verdict):
            return answer
        return {"rubric": self.rubric, "question": self.question(view), "answer": answer}


def build_judge(
    config: JudgeConfig, *, base_dir: Path, provider: Provider | None = None
) -> LLMJudge:
    """The judge ``config`` describes; ``base_dir`` resolves ``rubric_file``.

    ``provider`` replaces the HTTP client the config names (an in-process stand-in, say); the
    identity still records the configured provider and model. Raises ``ConfigError`` for an
    unreadable rubric file or a template version this package does not ship.
    """
    if isinstance(config, GroundednessJudgeConfig):
        return GroundednessJudge(config, provider=provider)
    if isinstance(config, CitationSupportJudgeConfig):
        return CitationSupportJudge(config, provider=provider)
    if isinstance(config, AnswerJudgeConfig):
        return AnswerJudge(config, provider=provider)
    return RubricJudge(config, _rubric_text(config, base_dir), provider=provider)


def _rubric_text(config: RubricJudgeConfig, base_dir: Path) -> str:
    if config.rubric is not None:
        return config.rubric
    path = base_dir / str(config.rubric_file)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"rubric_file {path}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"rubric_file {path}: cannot read it as UTF-8 text ({exc})") from None
    if not text.strip():
        raise ConfigError(f"rubric_file {path} is empty")
    return text


def judge_identity(spec: Mapping[str, Any]) -> str:
    """The key calibrations are bound to: the blake3 key of ``spec`` without its criterion."""
    from oloproof.events import identity_key

    return identity_key({key: value for key, value in spec.items() if key != "criterion"})


# --- reading the reply -------------------------------------------------------------------------


def parse_judgment(text: str, scale: Scale) -> dict[str, Any] | None:
    """The judgment object in a reply, or None when there is none or the reply contradicts itself.

    Every JSON object in ``text`` (inside a code fence or after a preamble too) is tried; the
    ones that hold a valid ``verdict`` (``"pass"``/``"fail"``, any case) or ``score`` (a number
    in [0, 1]) count. None when no object counts, or when two disagree.
    """
    key = "score" if scale == "score" else "verdict"
    found: list[dict[str, Any]] = []
    decoder = json.JSONDecoder()
    for match in re.finditer(r"\{", text):
        try:
            obj, _ = decoder.raw_decode(text, match.start())
        except ValueError:
            continue
        if isinstance(obj, dict) and _valid(obj.get(key), scale):
            found.append(obj)
    decisions = {_decision(obj[key]) for obj in found}
    return found[0] if len(decisions) == 1 else None


def _valid(value: Any, scale: Scale) -> bool:
    if scale == "score":
        return (
            isinstance(value, int | float)
            and not isinstance(value, bool)
            and math.isfinite(value)
            and 0.0 <= value <= 1.0
        )
    return isinstance(value, str) and value.strip().lower() in ("pass", "fail")


def _decision(value: Any) -> str | float:
    return value.strip().lower() if isinstance(value, str) else float(value)


# --- reading the case --------------------------------------------------------------------------


def _context_items(view: CaseView) -> list[dict[str, Any]] | Verdict:
    context = view.artifact("context/v1")
    if context is None:
        return Verdict.excluded("no_context_recorded")
    return [dict(item) for item in context.get("items", ())]


def _passage(doc_id: str, text: str) -> str:
    return f'<passage id="{doc_id}">\n{text}\n</passage>'


# --- totals for the report ---------------------------------------------------------------------


def usage_totals(details: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Calls, tokens and cost summed over judgments' details (``cost`` None when none priced).

    A detail counts as a call when it has ``usage``; a token count the provider did not give
    adds nothing, and ``calls_without_usage`` counts those calls.
    """
    calls = without = input_tokens = output_tokens = 0
    cost: float | None = None
    for detail in details:
        usage = detail.get("usage")
        if not isinstance(usage, Mapping):
            continue
        calls += 1
        tokens_in, tokens_out = usage.get("input_tokens"), usage.get("output_tokens")
        if not isinstance(tokens_in, int) or not isinstance(tokens_out, int):
            without += 1
        input_tokens += tokens_in if isinstance(tokens_in, int) else 0
        output_tokens += tokens_out if isinstance(tokens_out, int) else 0
        if isinstance(detail.get("cost"), int | float):
            cost = (cost or 0.0) + float(detail["cost"])
    return {
        "calls": calls,
        "calls_without_usage": without,
        "input_tokens": input_tokens,
        "output_tokens": output_tokens,
        "cost": cost,
    }


def _empty_totals() -> dict[str, Any]:
    return {
        "calls": 0,
        "calls_without_usage": 0,
        "input_tokens": 0,
        "output_tokens": 0,
        "cost": None,
        "failed": 0,
        "reused": 0,
    }


class UsageMeter:
    """Per judge: the calls a run made, their tokens and cost, and the judgments it reused.

    ``watch`` wraps a judge, so every verdict it gives is seen as it is given: such a judgment
    is new, made in this run. ``case_done`` names the criteria a case's result holds a judgment
    for; one the wrapper did not see came from the judgment cache, and counts as ``reused``
    (its tokens were spent, and counted, by the run that first made it). ``totals()`` per
    judge criterion: ``calls`` (replies carrying usage, as ``usage_totals`` counts them),
    ``calls_without_usage``, ``input_tokens``, ``output_tokens``, ``cost`` (None unless priced),
    ``failed`` (missing judgments: the call failed or the reply was not the protocol's) and
    ``reused``. ``prior`` continues totals recorded earlier (a resumed run).
    """

    def __init__(
        self, criteria: Iterable[str], prior: Mapping[str, Mapping[str, Any]] | None = None
    ) -> None:
        self._totals = {c: {**_empty_totals(), **dict((prior or {}).get(c, {}))} for c in criteria}
        self._seen: dict[tuple[str, str], Verdict] = {}

    def watch(self, judge: AsyncEvaluator) -> AsyncEvaluator:
        """``judge``, reporting each verdict it gives to this meter (others pass unchanged)."""
        totals = self._totals.get(judge.criterion)
        if totals is None:
            return judge
        config = getattr(judge, "config", None)
        priced = getattr(config, "price_per_input_token", None) is not None and (
            getattr(config, "price_per_output_token", None) is not None
        )
        if priced and totals["cost"] is None:
            totals["cost"] = 0.0  # priced: a run that makes no call costs nothing
        return _Watched(judge, self)

    def seen(self, case_id: str, criterion: str, verdict: Verdict) -> None:
        self._seen[(case_id, criterion)] = verdict

    def case_done(self, case_id: str, judged: Iterable[str]) -> None:
        """Count one finished case whose result holds a judgment for each of ``judged``."""
        if not self._totals:
            return
        judged = set(judged)
        for criterion, totals in self._totals.items():
            verdict = self._seen.pop((case_id, criterion), None)
            if criterion not in judged:
                continue
            if verdict is None:
                totals["reused"] += 1
            elif "usage" in verdict.detail:
                once = usage_totals([verdict.detail])
                for key in ("calls", "calls_without_usage", "input_tokens", "output_tokens"):
                    totals[key] += once[key]
                if once["cost"] is not None:
                    totals["cost"] = (totals["cost"] or 0.0) + once["cost"]
            elif verdict.status == "missing":
                totals["failed"] += 1

    def totals(self) -> dict[str, dict[str, Any]]:
        return {criterion: dict(totals) for criterion, totals in self._totals.items()}


class _Watched:
    """A judge whose verdicts a ``UsageMeter`` sees (an ``AsyncEvaluator``, as the judge is)."""

    def __init__(self, judge: AsyncEvaluator, meter: UsageMeter) -> None:
        self._judge = judge
        self._meter = meter

    @property
    def criterion(self) -> str:
        return self._judge.criterion

    @property
    def kind(self) -> MetricKind:
        return self._judge.kind

    def spec(self) -> dict[str, Any]:
        return self._judge.spec()

    def reads(self) -> ReadDeclaration:
        return reads_of(self._judge)

    async def ajudge(self, view: CaseView) -> Verdict:
        verdict = await self._judge.ajudge(view)
        self._meter.seen(view.case_id, self.criterion, verdict)
        return verdict
