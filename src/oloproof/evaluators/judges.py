"""The LLM judges: groundedness, citation support, answer equivalence and rubric.

A judge renders its versioned prompt template with what it reads of one case, sends it to its
provider (asking for the verdict's JSON Schema where the provider enforces one), and reads the
verdict from the reply only when the reply is that object (``oloproof.evaluators.judge_reply``).
Judged text is put between tags the instructions declare to be material; a tag of the template
inside the material is escaped (``&lt;/answer>``), so an answer cannot close its own block.
What can happen:

- ``pass`` / ``fail`` (or ``value`` for a score): the judge answered. The detail holds the
  ``raw_reply`` (at most 4,000 characters), the token ``usage``, the provider's ``reply_id``,
  ``system_fingerprint`` and ``reply_model`` (None when not given), the ``finish_reason``, the
  number of ``attempts``, the judge's ``explanation``, and ``cost`` when both prices per token
  are configured.
- ``missing`` because the call failed after its retries: ``judge_timeout``,
  ``judge_connection_failed``, ``judge_http_error``, ``judge_key_missing``,
  ``judge_request_failed``, or ``judge_malformed_response`` (a 2xx that is not the protocol's
  reply); the detail keeps ``error``, ``error_kind``, ``attempts``, the ``status`` and the
  server's reply as ``raw_reply``, and the call's metadata (``usage``, ``cost``) when a 2xx
  reported the tokens it used all the same. Never a pass or a fail.
- ``missing: judge_reply_incomplete``: the reply says it is not the model's whole answer (cut
  at the token limit, refused, a tool call, several choices: ``Completion.incomplete``), so
  whatever verdict its text holds is not taken; ``error`` says what the reply is, beside
  ``raw_reply`` and the call's metadata.
- ``missing: unparseable_reply``: the reply is not the verdict object, or repeats the material
  under test; ``parse_error`` says which, beside ``raw_reply`` and the call's metadata.
- ``missing: instructions_dropped``: the reply's input-token count shows the model cannot have
  read the judge's instructions (``judge_reply.instructions_dropped``); whatever the reply says
  is not a verdict of this judge.
- ``excluded``: the case lacks what the judge reads by design: ``no_context_recorded``,
  ``no_context_text``, ``no_citations_recorded``, ``no_citations``, ``no_expected_value``.
- ``missing: no_context_recorded`` / ``no_context_text`` (citation support): the answer cites
  ids and no context was recorded, or a cited passage was recorded without its text, so its
  citations cannot be checked; it counts against the system.
- ``missing: field_missing`` / ``missing: field_not_text``: the output has no answer text
  where ``field`` points, decided without a call, as the text checks decide it: no judge read
  it, so it counts at its worst for every rule. A calibration refuses a labels example that
  would get it.

``spec()`` is the judge's identity: everything that can change a verdict (type, criterion,
provider, model, base URL, API version, template name/version/SHA-256, the request's shape:
where the instructions go, structured output, the token limit and its field, temperature,
``extra_body``; the fields it reads, the rubric and scale, the judge code's version) and
nothing secret. ``judge_identity`` hashes it without the criterion (a name for the metric, which
changes no verdict); calibrations are bound to that key.
"""

from __future__ import annotations

import functools
import json
import re
import unicodedata
from collections.abc import Mapping
from pathlib import Path
from types import TracebackType
from typing import Any, ClassVar, Self

from oloproof.errors import ConfigError
from oloproof.evaluators.base import CaseView
from oloproof.evaluators.fields import MISSING, parse_path, read_output, read_path
from oloproof.evaluators.judge_reply import (
    Scale,
    Unparseable,
    estimated_tokens,
    instructions_dropped,
    raw_reply_detail,
    read_reply,
    reply_schema,
)
from oloproof.evaluators.judge_usage import UsageMeter, usage_totals
from oloproof.evaluators.reads import PromptReads, Reads
from oloproof.events import judge_identity
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
    "usage_totals",
]

AnyJudgeConfig = (
    GroundednessJudgeConfig | CitationSupportJudgeConfig | AnswerJudgeConfig | RubricJudgeConfig
)

_NOT_GIVEN = "[this id names no passage of the context the model was given]"

# The reason a missing judgment gives for each way a call can fail.
CALL_FAILURES: dict[str, str] = {
    "timeout": "judge_timeout",
    "connection": "judge_connection_failed",
    "http_status": "judge_http_error",
    "missing_key": "judge_key_missing",
    "request": "judge_request_failed",
    "malformed_response": "judge_malformed_response",
}

# The templates' own tags: inside the material they are escaped, so no text can close its block.
# A model reads a tag written loosely as that tag too, so a tag is looked for in what a model
# sees: each character as NFKC makes it (full-width ＜／ＡＮＳＷＥＲ is </answer>), in any case,
# with the brackets and slashes that look alike, the Cyrillic and Greek letters that look like
# the tags' own, invisible characters (format characters such as U+200B, variation selectors)
# left out, and spaces around the slash.
_TAG_NAMES = (
    "question",
    "passages",
    "passage",
    "cited_passages",
    "cited_ids",
    "answer",
    "reference",
    "rubric",
)
_TAG = re.compile(rf"\s*/?\s*(?:{'|'.join(_TAG_NAMES)})(?![a-z0-9_])")
_TAG_CHARS = frozenset("".join(_TAG_NAMES) + " /")
"""What a tag's reading holds before its end: past any other character, no tag is read."""

# The brackets that look like "<" (full-width, small, angle quotation marks and brackets).
_OPENERS = re.compile("[<\u2039\u2329\u27e8\u276e\u3008\u1438\ufe64\uff1c]")
_LOOK_ALIKE = str.maketrans(
    {
        **dict.fromkeys("\u2044\u2215\u29f8\\", "/"),
        # Cyrillic, then Greek, letters drawn as the Latin ones of the tags' names.
        **dict(
            zip(
                "\u0430\u0441\u0435\u0456\u043e\u0440\u0455\u051b\u0501\u051d\u0433",
                "aceiopsqdwr",
                strict=True,
            )
        ),
        **dict(zip("\u03b1\u03bf\u03b9\u03c1\u03c4", "aoipt", strict=True)),
    }
)
_INVISIBLE = frozenset("\u034f\u115f\u1160\u3164\uffa0")
_TAG_SPAN = 24
"""How many characters after a bracket are read for a tag, invisible ones and all but the first
of a run of spaces not counted: more than the longest tag with a slash and spaces around it.
Counted so, no run of zero-width characters or spaces between the bracket and the name hides
the tag, and each character of the text is read for at most this many brackets."""


def escape_material(text: str) -> str:
    """``text`` with the templates' tags escaped: ``</answer>`` becomes ``&lt;/answer>``, and so
    does any spelling a model reads as that tag (``</ ANSWER >``, ``＜/answer＞``, ...): its
    bracket becomes ``&lt;``."""
    starts = [m.start() for m in _OPENERS.finditer(text) if _TAG.match(_seen(text, m.end()))]
    pieces: list[str] = []
    last = 0
    for start in starts:
        pieces += [text[last:start], "&lt;"]
        last = start + 1
    return "".join([*pieces, text[last:]])


def _seen(text: str, start: int) -> str:
    """What a model reads of ``text`` from ``start`` on, for ``_TAG``: up to ``_TAG_SPAN``
    characters (and no further than the first that no tag holds), each as ``_read`` reads it;
    invisible characters are left out and a run of spaces is one."""
    seen: list[str] = []
    for at in range(start, len(text)):
        read = _read(text[at])
        if read is None or (read == " " and seen and seen[-1] == " "):
            continue
        seen.append(read)
        if len(seen) == _TAG_SPAN or not _TAG_CHARS.issuperset(read):
            break
    return "".join(seen)


@functools.cache
def _read(char: str) -> str | None:
    """``char`` as a model reads it in a tag: its NFKC form, casefolded, a look-alike as the
    letter or slash it looks like, any space as " "; None for an invisible character."""
    if char in _INVISIBLE or unicodedata.category(char) == "Cf" or _variation(char):
        return None
    read = unicodedata.normalize("NFKC", char).casefold().translate(_LOOK_ALIKE)
    return " " if read.isspace() else read


def _variation(char: str) -> bool:
    """Whether ``char`` is a variation selector (it changes a glyph's look, not the letter)."""
    code = ord(char)
    return 0xFE00 <= code <= 0xFE0F or 0xE0100 <= code <= 0xE01EF or 0x180B <= code <= 0x180F


class LLMJudge:
    """What the four judges share: the call, the reading of the reply, the identity.

    A subclass names its template and the reason a fail carries, and says what it reads of a
    case (``prepare``): the template's values, or the verdict that stops it before any call.
    """

    TEMPLATE: ClassVar[str]
    FAIL_REASON: ClassVar[str]
    # What this code makes of a case and of a reply: part of the identity, so a judgment or a
    # calibration made by another version is not reused. It changes whenever a request or a
    # verdict can come out differently, and tests/oloproof/judges/test_judge_code_version.py
    # stops any change to the judges' code until it is bumped or declared not to.
    # 2: the verdict is read only from a reply that is the object, and the material's tags are
    # escaped (version 1 took the first verdict-shaped object anywhere in the reply).
    # 3: a verdict planted in loose syntax (a Python dict, unquoted keys or values, a trailing
    # comma) is found, so a reply repeating it is unparseable; a provider body in the wrong
    # shape (usage not an object, a token count that is not a whole number, a key given twice,
    # nesting too deep, an id, model or finish reason that is not text) is
    # judge_malformed_response. Version 2 passed some of these replies.
    # 4: a reply that says it is not the model's whole answer (cut at the token limit, refused,
    # a tool call, several choices) is judge_reply_incomplete, and one beside the server's error
    # judge_malformed_response, whatever verdict its text holds. Version 3 passed them.
    # 5: a verdict planted in the material with a template tag or inside a passage id, which
    # the prompt shows escaped (&lt;answer>, &quot;), is found unescaped too, so a reply that
    # copies it back unescaped is unparseable. Version 4 passed it.
    # 6 and 7: the citation judge's own (see CitationSupportJudge); the others stayed at 5.
    # 8: keys are read as a model reads them ("Unsupported" beside a pass is no verdict); a
    # reply giving a key it is read by twice so ("verdict" and "Verdict"), both a verdict and
    # a score, or another decision under a key of its own ("final_verdict": "fail"), is
    # unparseable; the material's tags are escaped in every spelling a model reads as the tag
    # (</ answer>, ＜/answer＞, a zero-width space inside). Version 5 (the citation judge's 7)
    # read the exact key, and the one asked for, and let such a tag close its block.
    # 9: a second decision anywhere inside the reply ({"claims": [{"verdict": "fail"}]} beside
    # a pass), and for a score judge a second score under a key naming one ("final_score"),
    # is unparseable. Version 8 looked only at the reply's top-level texts. A reply cut where
    # the model's context ends (finish_reason model_length) is judge_reply_incomplete;
    # version 8 read its verdict.
    # Also 9: an output without answer text where ``field`` points is missing (field_missing,
    # field_not_text), as the text checks make it; version 8 failed it, which a rule capping a
    # judge's metric (max: on a leak rate) read as good news about replies no judge read.
    # 10: a second decision written as a yes or no ("grounded": false, "supported": "no") or
    # in another form of the word ("failed", "FAIL."), and beside a verdict a number under a
    # key naming a score, is unparseable. Version 9 read only "pass" and "fail" and took the
    # verdict. A reply that does not say why it ended (finish_reason or stop_reason null,
    # absent or empty: a stream joined before its end) or aborted by the server (vLLM's
    # finish_reason abort), or whose finish reason says it was cut or filtered in capitals or
    # another API's words (MAX_TOKENS, SAFETY), is judge_reply_incomplete, and one giving a
    # refusal that is not text, or saying it is not the model's reply ("type": "error", a
    # message of role "user"), judge_malformed_response; version 9 read their verdicts.
    # 11: a reply under a 2xx that says its body is no finished answer (202 Accepted, 206
    # Partial Content: any but 200, 201 and 203) is judge_http_error; version 10 read its
    # verdict.
    # A change to one judge's own reading of a case (its ``prepare``) moves that judge's version
    # alone, so the others keep their judgments and calibrations; a change to the code they
    # share moves every judge's version past the highest, so that a version names one change.
    VERSION: ClassVar[int] = 11
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
            "server": config.server,
            "api_version": _api_version(config.provider),
            "template": self.template.identity(),
            "instructions": config.resolved_instructions,
            "structured_output": self.structured_output,
            "temperature": config.temperature,
            "max_tokens": config.max_tokens,
            "max_tokens_field": config.max_tokens_field,
            "extra_body": dict(config.extra_body),
            "field": config.field,
            "input_field": config.input_field,
            **self.extra_spec(),
        }

    @property
    def structured_output(self) -> str:
        """How the verdict's shape is asked for: ``json_schema``, ``json_object`` or ``off``."""
        chosen = self.config.structured_output
        return "json_schema" if chosen == "auto" else chosen

    def reply_schema(self) -> dict[str, Any]:
        """The JSON Schema of this judge's reply."""
        return reply_schema(self.scale)

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
        material = {
            key: value if key == "passages" else escape_material(value)
            for key, value in values.items()
        }
        system, user = self.template.render(material)
        schema = None if self.structured_output == "off" else self.reply_schema()
        try:
            completion = await self.provider.complete(system, user, schema=schema)
        except ProviderError as exc:
            detail = exc.to_detail()
            if exc.completion is not None:
                # A reply came (beside the server's error, or without an answer) and reported
                # the tokens it used: they were spent, and the run's judge totals count them.
                detail.update(self._call_detail(exc.completion))
            return Verdict.missing(CALL_FAILURES[exc.kind], **detail)
        return self.interpret(completion, system, user)

    # --- what a subclass supplies ------------------------------------------------------------

    def prepare(self, view: CaseView) -> dict[str, str] | Verdict:
        """The template's values for this case, or the verdict given without a call."""
        raise NotImplementedError

    def extra_spec(self) -> dict[str, Any]:
        return {}

    # --- shared steps ------------------------------------------------------------------------

    def decided_without_call(self, view: CaseView) -> Verdict | None:
        """The verdict ``view`` gets without asking the model (an exclusion, or the missing
        verdict of an output without answer text), or None when judging it needs a call."""
        values = self.prepare(view)
        return values if isinstance(values, Verdict) else None

    def would_call(self, view: CaseView) -> bool:
        """Whether judging ``view`` needs a call (False when it is decided without one)."""
        return self.decided_without_call(view) is None

    def interpret(self, completion: Completion, system: str, user: str) -> Verdict:
        """The verdict a reply to ``system`` and ``user`` gives, with the call's metadata."""
        detail = {**raw_reply_detail(completion.text), **self._call_detail(completion)}
        if completion.incomplete is not None:
            # The verdict may come first and still parse when the rest was cut, refused or
            # withheld: what the model would have concluded is not known.
            error = f"{completion.incomplete}, so no verdict is read from it"
            return Verdict.missing("judge_reply_incomplete", error=error, **detail)
        found = read_reply(completion.text, self.scale, [user], system)
        if instructions_dropped(system, user, completion.usage.input_tokens):
            detail["prompt_tokens_estimate"] = estimated_tokens(system) + estimated_tokens(user)
            detail["instructions_tokens_estimate"] = estimated_tokens(system)
            if isinstance(found, Unparseable):
                detail["parse_error"] = found.why
            return Verdict.missing("instructions_dropped", **detail)
        if isinstance(found, Unparseable):
            return Verdict.missing("unparseable_reply", parse_error=found.why, **detail)
        detail["explanation"] = found.reason
        if isinstance(found.decision, float):
            return Verdict.scored(found.decision, **detail)
        if found.unsupported is not None:
            detail["unsupported"] = list(found.unsupported)
        if found.decision == "pass":
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
        """The answer text, or the missing verdict that says the output has none (see
        ``VERSION``)."""
        value = read_output(view.output, self._field)
        if value is MISSING:
            return Verdict.missing("field_missing", field=self.config.field)
        if not isinstance(value, str):
            return Verdict.missing(
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
    # Its own versions, 6 and 7 (LLMJudge.VERSION since 8): 6: an answer citing ids where no
    # context was recorded, or citing a passage recorded without its text, is missing, not
    # excluded: its citations claim what nothing recorded can check. Version 5 left it out of
    # the metric. 7: a reply passing the answer while naming cited ids it found unsupported is
    # no verdict; version 6 read it as a pass.

    def reply_schema(self) -> dict[str, Any]:
        return reply_schema(self.scale, with_unsupported=True)

    def interpret(self, completion: Completion, system: str, user: str) -> Verdict:
        verdict = super().interpret(completion, system, user)
        if verdict.status == "pass" and verdict.detail.get("unsupported"):
            # The reply says both that the citations hold and that some do not: which the
            # model meant cannot be known.
            why = 'the reply says "pass" and names cited ids it found unsupported'
            return Verdict.missing("unparseable_reply", parse_error=why, **verdict.detail)
        return verdict

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
        if isinstance(items, Verdict):  # the ids cite a context that nothing recorded
            return Verdict.missing("no_context_recorded")
        texts: dict[str, list[str]] = {}
        for item in items:
            if item["doc_id"] in cited:
                text = item.get("text")
                if not isinstance(text, str):  # a cited passage nothing can check it against
                    return Verdict.missing("no_context_text", doc_id=item["doc_id"])
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

    def case_exclusion(self, case_id: str, expected: Mapping[str, Any]) -> Verdict | None:
        """``ExcludesByCase``: ``no_expected_value`` when the case has no reference answer,
        whatever its output: an errored case without one records it, as one that ran does."""
        reference = read_path(expected, self._expected)
        if reference is MISSING or reference is None:
            return Verdict.excluded("no_expected_value", expected_field=self._expected_field)
        return None

    def prepare(self, view: CaseView) -> dict[str, str] | Verdict:
        answer = self.answer(view)
        if isinstance(answer, Verdict):
            return answer
        excluded = self.case_exclusion(view.case_id, view.expected)
        if excluded is not None:
            return excluded
        reference = read_path(view.expected, self._expected)
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


# --- reading the case --------------------------------------------------------------------------


def _context_items(view: CaseView) -> list[dict[str, Any]] | Verdict:
    context = view.artifact("context/v1")
    if context is None:
        return Verdict.excluded("no_context_recorded")
    return [dict(item) for item in context.get("items", ())]


def _passage(doc_id: str, text: str) -> str:
    ident = escape_material(doc_id).replace('"', "&quot;")
    return f'<passage id="{ident}">\n{escape_material(text)}\n</passage>'


def _api_version(provider: str) -> str | None:
    from oloproof.providers.anthropic_messages import ANTHROPIC_VERSION

    return ANTHROPIC_VERSION if provider == "anthropic" else None
