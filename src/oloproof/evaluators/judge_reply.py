"""Reading a judge's reply, so that only the judge's own answer can become a verdict.

The judged text (an answer, passages, a question) goes into the request, and a model may repeat
it in its reply: small and local models often do. So a verdict is read from the reply only when
the reply *is* the object the request asked for:

- the whole reply, surrounding whitespace aside, is one JSON object; or it is exactly one fenced
  block (```` ```json ```` or ```` ``` ````) holding one, with nothing before or after the fence;
- the object has a valid ``verdict`` (``"pass"``/``"fail"``, any case) or ``score`` (a number in
  [0, 1]), and not the other of the two (nothing says where a score becomes a pass, so whether
  they agree cannot be known); ``reason``, when present, is a string, and ``unsupported`` a
  list of strings, neither holding a lone surrogate escape (``"\\ud83d"``: half a character,
  which no ledger stores);
- keys are read as a model reads them: in any case, full-width, with spaces or invisible
  characters (``"Unsupported"`` is ``unsupported``); none of those keys is given twice so
  (``"verdict"`` beside ``"Verdict"``), and no other member, at any depth, is another decision
  (``"final_verdict": "fail"`` or ``"claims": [{"verdict": "fail"}]`` beside a pass, a
  ``"final_score"`` beside a score, ``"result": "failed"``, a yes or no such as
  ``"grounded": false`` or ``"supported": "no"``, any number under a key naming a score beside
  a verdict), since which one the judge meant cannot be known;
- the reply does not repeat the material under test: its text is not found in the material, and
  no object with a ``verdict`` or ``score`` found in the material gives the same reason, or,
  where the reply gives none, the same bare decision. The material is searched as loosely as a
  model reads it (``oloproof.evaluators.loose_objects``: Python dicts, unquoted keys, trailing
  commas, objects written with escaped quotes or carried as a JSON string inside another, as
  in a whole fake reply), since a model that copies an object repairs it into JSON. A reply
  that copied a verdict-shaped object out of the answer (verbatim, re-spaced, re-cased,
  repaired, with its verdict flipped) or the instructions' example
  (``"reason": "<one sentence>"``) is not the judge's.

Anything else is unparseable, with one sentence saying why: never a pass or a fail. There is no
search for "the first object anywhere", which is what let an answer that ended with
``{"verdict": "pass", ...}`` judge itself.

``reply_schema`` is the same shape as a JSON Schema, for servers that enforce one. Its
``reason`` comes before the decision, so a grammar-constrained model states its grounds first.

``instructions_dropped`` applies a documented rule to a reply's reported input tokens: a chat
template without a system role may drop the judge's instructions without a word, and the count
then falls far below what the whole prompt takes.
"""

from __future__ import annotations

import html
import json
import math
import re
import string
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from oloproof.evaluators.loose_objects import Members, Scalar, loose_objects
from oloproof.jsonkeys import DuplicateKey, unique_keys
from oloproof.providers import lone_surrogate_in

Scale = Literal["pass_fail", "score"]

RAW_REPLY_LIMIT = 4000
"""The most characters of a reply a judgment stores (``raw_reply``); the rest is cut, and
``raw_reply_chars`` keeps the full length."""

CHARS_PER_TOKEN = 4
"""The estimate of the instructions' tokens: one token per 4 characters, the usual figure for
English text with the byte-pair tokenizers of current models."""

DROPPED_BELOW = 0.5
"""A reply whose reported input tokens are under half the estimate of the whole prompt
(instructions and material) did not read all of it: a tokenizer twice as frugal as the
estimate still counts more. Against what the material alone takes, the shortfall is the
instructions."""

_FENCE = re.compile(r"\A```(?:json|JSON)?[ \t]*\n(?P<body>.*?)\n?```\Z", re.DOTALL)


@dataclass(frozen=True)
class Judgment:
    """A judgment read from a reply: the decision, and what came with it."""

    decision: str | float
    reason: str | None
    unsupported: tuple[str, ...] | None


@dataclass(frozen=True)
class Unparseable:
    """Why a reply gives no judgment, in one sentence."""

    why: str


def reply_schema(scale: Scale, *, with_unsupported: bool = False) -> dict[str, Any]:
    """The JSON Schema of the reply a judge asks for (strict: every key required, no others)."""
    decision: dict[str, Any]
    if scale == "score":
        key, decision = "score", {"type": "number", "minimum": 0, "maximum": 1}
    else:
        key, decision = "verdict", {"type": "string", "enum": ["pass", "fail"]}
    properties: dict[str, Any] = {"reason": {"type": "string"}}
    if with_unsupported:
        properties["unsupported"] = {"type": "array", "items": {"type": "string"}}
    properties[key] = decision
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }


def read_reply(
    text: str, scale: Scale, material: Iterable[str], instructions: str = ""
) -> Judgment | Unparseable:
    """The judgment ``text`` gives, or why it gives none.

    ``material`` is what was judged (the user turn's values), ``instructions`` the judge's own
    text (its example objects must not be parroted back either).
    """
    body = text.strip()
    if not body:
        return Unparseable("the reply is empty")
    fenced = _FENCE.match(body)
    if fenced is not None:
        body = fenced["body"].strip()
    try:
        obj = json.loads(body, object_pairs_hook=unique_keys)
    except DuplicateKey as exc:
        return Unparseable(f"the reply is ambiguous: {exc}")
    except RecursionError:  # the parser recurses once per level
        return Unparseable("the reply is nested too deep to read as JSON")
    except ValueError:
        return Unparseable(f"the reply is not one JSON object (it begins {_opening(body)})")
    if not isinstance(obj, dict):
        return Unparseable("the reply is JSON but not an object")
    found = _judgment(obj, scale)
    if isinstance(found, Unparseable):
        return found
    # The prompt escapes the templates' tags (&lt;answer>) and a passage id's quotes (&quot;);
    # a model copying an object planted there writes them back unescaped, so the material is
    # searched as written and as read.
    judged = [m for text in material if text for m in dict.fromkeys((text, html.unescape(text)))]
    if len(body) >= 2 and any(body in m for m in [*judged, instructions] if m):
        return Unparseable("the reply repeats text of the material under test")
    planted = (members for text in judged for members in loose_objects(text))
    examples = loose_objects(instructions)
    if any(_repeats(found, other, scale, bare=True) for other in planted) or any(
        _repeats(found, other, scale, bare=False) for other in examples
    ):
        return Unparseable(
            "the reply repeats a verdict-shaped object found in the material under test"
        )
    return found


_READ_KEYS = ("verdict", "score", "reason", "unsupported")
"""The keys a reply is read by, in whatever case (``_as_read``): each must be given once."""


def _judgment(obj: Mapping[str, Any], scale: Scale) -> Judgment | Unparseable:
    key = "score" if scale == "score" else "verdict"
    named: dict[str, list[str]] = {}
    for given in obj:
        named.setdefault(_as_read(given), []).append(given)
    for read in _READ_KEYS:
        if len(named.get(read, ())) > 1:
            # {"verdict": "pass", "Verdict": "fail"}: a model reads both as the verdict, and
            # which one the judge meant cannot be known.
            spelled = " and ".join(json.dumps(k, ensure_ascii=False) for k in named[read])
            return Unparseable(f"the reply is ambiguous: it gives {spelled}")
    other = "verdict" if key == "score" else "score"
    if other in named:
        # Neither judge says where a score turns into a pass, so whether the two agree (a
        # score of 0.9 beside "fail") cannot be known: the reply gives two answers to one
        # question, and its schema allows one.
        return Unparseable(f'the reply gives a "{other}" beside its "{key}"')
    # Each key is read as a model reads it: {"verdict": "pass", "Unsupported": ["kb-1"]} names
    # an unsupported citation as surely as the lower-case key would.
    values = {form: obj[keys[0]] for form, keys in named.items()}
    decision = _decision(values.get(key), scale)
    if decision is None:
        wanted = "a number from 0 to 1" if scale == "score" else '"pass" or "fail"'
        return Unparseable(f'the reply\'s object has no "{key}" that is {wanted}')
    second = _second_decision(obj, decision, key, scale)
    if second is not None:
        return Unparseable(second)
    reason = values.get("reason")
    if reason is not None and not isinstance(reason, str):
        return Unparseable('the reply\'s "reason" is not text')
    unsupported = values.get("unsupported")
    if unsupported is not None and not (
        isinstance(unsupported, list) and all(isinstance(item, str) for item in unsupported)
    ):
        return Unparseable('the reply\'s "unsupported" is not a list of ids')
    if lone_surrogate_in([reason, unsupported]):
        # Half a character cannot be kept with the judgment, and a verdict is never kept
        # without the reply's own words, nor with words Oloproof changed.
        return Unparseable(
            "the reply's object holds a lone surrogate escape (\\uD800-\\uDFFF without its "
            "pair), which is not text"
        )
    return Judgment(decision, reason, None if unsupported is None else tuple(unsupported))


def _second_decision(
    obj: Mapping[str, Any], decision: str | float, key: str, scale: Scale
) -> str | None:
    """Where ``obj`` gives a decision other than ``decision``, in one sentence; None if nowhere.

    {"verdict": "pass", "final_verdict": "fail"}, or a "fail" inside a member of its own
    ({"claims": [{"verdict": "fail"}]}), or a score judge's {"final_score": 0.1} beside its
    0.9: the reply says two things, and which one the model meant cannot be known. Every depth
    is searched, since a model grading parts states a decision as surely there as at the top.
    A text reading "pass" or "fail" (or "failed", "Passed.": ``_DECISION_WORDS``) is a decision
    wherever it is, and a yes or no (``false``, ``"no"``) is one whose direction cannot be
    known, so it never agrees (but for the reason's own text, prose however short); so is a
    number under a key naming a score, at any depth, unless it is a score judge's own score
    again. The decision's own key is not searched, nor ``unsupported``, whose items are the ids
    a citation judge names (an id may read "pass").
    """
    skipped = (key, "unsupported")
    # (where, whether a key on the way to it names a score, the value): the numbers of
    # "subscores": [0.2] and "scores": {"tone": 0.2} are scores as surely as "score": 0.2.
    pending: list[tuple[str, bool, Any]] = [
        (json.dumps(name, ensure_ascii=False), "score" in _as_read(name), value)
        for name, value in obj.items()
        if _as_read(name) not in skipped
    ]
    pending.reverse()  # so the first in the reply is found first
    # The reason is the model's prose: a one-word reason "No" explains, it does not decide.
    reasons = {json.dumps(name, ensure_ascii=False) for name in obj if _as_read(name) == "reason"}
    while pending:  # a stack, not recursion: a reply may nest as deep as the parser reads
        where, scored, value = pending.pop()
        if isinstance(value, dict):
            inner = [
                (
                    f"{where}.{json.dumps(name, ensure_ascii=False)}",
                    scored or "score" in _as_read(name),
                    item,
                )
                for name, item in value.items()
            ]
        elif isinstance(value, list):
            inner = [(f"{where}[{at}]", scored, item) for at, item in enumerate(value)]
        else:
            said = _word(value)
            if isinstance(value, bool) or (said in _YES_NO and where not in reasons):
                # {"verdict": "pass", "grounded": false}: whether the key asks "grounded?" or
                # "hallucinated?" is the model's own wording, so no yes or no can be told to
                # agree with the decision or not.
                shown = json.dumps(value if isinstance(value, bool) else said)
                return (
                    f'the reply gives {shown} under {where} beside its "{key}", and a yes or '
                    "no says nothing of which way it leans"
                )
            word = _DECISION_WORDS.get(said or "")
            if word is not None and word != decision:
                return f'the reply gives "{said}" under {where} beside its "{key}"'
            number = isinstance(value, int | float) and not isinstance(value, bool)
            if scored and number and value != decision:
                # A score judge's "final_score": 0.1 beside its 0.9; for a verdict judge, any
                # score at all: nothing says where a score becomes a pass.
                said_of = (
                    "" if scale == "score" else ", and nothing says where a score becomes a pass"
                )
                return (
                    f'the reply gives {json.dumps(value)} under {where} beside its "{key}"{said_of}'
                )
            continue
        pending.extend(reversed(inner))  # so the first in the reply is found first
    return None


_DECISION_WORDS = {
    **dict.fromkeys(("pass", "passed", "passes", "passing"), "pass"),
    **dict.fromkeys(("fail", "failed", "fails", "failing", "failure"), "fail"),
}
"""The words a text is read as a decision by (``_word``): a model that writes "failed" under
a key of its own decides as surely as one writing "fail"."""

_YES_NO = frozenset(("yes", "no", "true", "false"))
"""The texts read as a yes or no, as a JSON ``true`` or ``false`` is."""


def _word(value: Any) -> str | None:
    """A text as a decision word is read: casefolded, without the spaces and punctuation around
    it (``"FAIL."`` is ``fail``); None for any other value."""
    if not isinstance(value, str):
        return None
    return value.casefold().strip(string.whitespace + string.punctuation)


def _as_read(key: str) -> str:
    """``key`` as a model reads it: in its NFKC form (full-width letters are letters),
    casefolded, without invisible format characters (U+200B) or the spaces around it."""
    seen = unicodedata.normalize("NFKC", key).casefold()
    return "".join(c for c in seen if unicodedata.category(c) != "Cf").strip()


def _decision(value: Any, scale: Scale) -> str | float | None:
    if scale == "score":
        number = isinstance(value, int | float) and not isinstance(value, bool)
        if number and math.isfinite(value) and 0.0 <= value <= 1.0:
            return float(value)
        return None
    if isinstance(value, str) and value.strip().lower() in ("pass", "fail"):
        return value.strip().lower()
    return None


def _repeats(judgment: Judgment, members: Members, scale: Scale, *, bare: bool) -> bool:
    """Whether ``judgment`` repeats the object ``members`` (its scalar members): the object has a
    ``verdict`` or ``score`` and the same reason, word for word (whatever either decision: a
    judge does not write the reason an object of the answer or the instructions' example
    gives), or, for a reply without a reason, the same decision (``bare``: only against the
    judged material, whose objects were planted there). Keys are matched in any case, as a
    model that repairs ``{Verdict: PASS}`` writes them as asked."""
    values: dict[str, list[Scalar]] = {}
    for key, value in members:
        values.setdefault(key.strip().casefold(), []).append(value)
    decisions = [*values.get("verdict", ()), *values.get("score", ())]
    if not decisions:
        return False
    if _norm(judgment.reason):
        reasons = values.get("reason", ())
        return any(isinstance(r, str) and _norm(r) == _norm(judgment.reason) for r in reasons)
    return bare and any(_decision(d, scale) == judgment.decision for d in decisions)


def _norm(text: str | None) -> str:
    return " ".join((text or "").split()).casefold()


def _opening(text: str) -> str:
    head = " ".join(text.split())[:40]
    return json.dumps(head + ("…" if len(text) > 40 else ""), ensure_ascii=False)


def raw_reply_detail(text: str) -> dict[str, Any]:
    """The reply as a judgment stores it: at most ``RAW_REPLY_LIMIT`` characters of it."""
    detail: dict[str, Any] = {"raw_reply": text[:RAW_REPLY_LIMIT]}
    if len(text) > RAW_REPLY_LIMIT:
        detail["raw_reply_chars"] = len(text)
    return detail


def estimated_tokens(text: str) -> int:
    """The tokens ``text`` is estimated to take: ``ceil(len(text) / CHARS_PER_TOKEN)``."""
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def instructions_dropped(instructions: str, material: str, input_tokens: int | None) -> bool:
    """Whether ``input_tokens`` shows the model cannot have read ``instructions``.

    True when the count is known and below ``DROPPED_BELOW`` times the estimated tokens of the
    instructions and the material together.
    """
    if input_tokens is None:
        return False
    whole = estimated_tokens(instructions) + estimated_tokens(material)
    return input_tokens < DROPPED_BELOW * whole


REASON_HINTS: dict[str, str] = {
    "instructions_dropped": (
        "instructions_dropped: the server reported far fewer input tokens than the judge's "
        "prompt takes, so the model never read the instructions (a chat template without a "
        "system role drops them): set instructions: user on the judge"
    ),
    "unparseable_reply": (
        "unparseable_reply: the replies were not the verdict object (see one with oloproof "
        "inspect RUN --case ID); structured_output: json_schema has the server enforce it"
    ),
    "judge_reply_incomplete": (
        "judge_reply_incomplete: the replies were not the model's whole answer (see one with "
        "oloproof inspect RUN --case ID); one cut at the token limit needs a larger max_tokens "
        "on the judge"
    ),
    "judge_timeout": (
        "judge_timeout: no reply in time; a local server computing one request at a time needs "
        "concurrency 1 and a timeout that covers its queue (server: llama.cpp or ollama)"
    ),
}
"""What a report adds under a missing reason that has a usual cause and remedy."""
