"""How executions, stage outputs and case results are stored compactly, and read back whole.

Three things were stored again and again, and are now stored once:

- **Passage texts.** A retriever over a corpus hands back the same passages in every retrieval
  and context of every case, run and child run. Each text is an event of its own,
  ``oloproof.text`` (body ``{"text": …}``), named by its content like every event; a passage
  that holds it keeps ``"text_ref": i`` in its place, ``i`` being the position of the text's
  address in the holder's ``refs``. Where: the ``candidates`` of a ``retrieval/v1`` artifact and
  the ``items`` of a ``context/v1`` one in an execution's ``artifacts``, and the ``candidates``
  of a retrieve stage's ``retrieval``.
- **A staged execution's retrieval.** Its first ``retrieval/v1`` artifact is the retrieval its
  retrieve stage stored: it is kept as ``{"stage_ref": i}``, ``refs[i]`` being that stage. It is
  only kept so when making that stage's event again from the artifact gives the stage's own
  address: content addressing proves them equal.
- **A case's expected values and metadata.** Every run of a dataset copied them into each case
  result, gold passages and all. When they encode to more than ``_INLINE_CASE`` bytes they are
  an event of their own, ``oloproof.case`` (body ``{"expected": …, "metadata": …}``), and the
  case result keeps ``"case_ref": i`` in their place: every run of the same case refers to the
  same event. Smaller ones stay in the case result, where they cost less than a ref.
- **An evaluator's spec.** Every judgment copied its evaluator's whole spec, an inline JSON
  Schema or a judge's prompt included. When it encodes to more than ``_INLINE_CASE`` bytes it
  is an event of its own, ``oloproof.evaluator`` (body ``{"evaluator": …}``), and the judgment
  keeps ``"evaluator_ref": 1`` (its second ref; the first is the execution judged).
- **Addresses.** An execution's stage addresses are its first refs (in the order of its
  ``stages``), and a case result's ``execution`` and ``judgments`` are positions in its refs,
  instead of a second copy of each address in the body.

These are schema 2 of ``oloproof.execution``, ``oloproof.stage`` and ``oloproof.judgment``,
and schema 3 of ``oloproof.case_result`` (2 kept its case's values in it).
``expand`` (the store's ``Application.expand``) puts everything back on every read, so every
reader sees the bodies of schema 1, whatever was stored. ``verify``, archives and compaction
follow texts and stages through the refs like any other link.
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Final, TypeVar

from ledger import Event, FormatError, address_of, encode
from ledger.application import Fetch
from oloproof import events as ev
from oloproof.redaction import redact

_TEXT_REF: Final = "text_ref"
_STAGE_REF: Final = "stage_ref"
_CASE_REF: Final = "case_ref"
_CASE_PART: Final = ("expected", "metadata")
_EVALUATOR_REF: Final = "evaluator_ref"
# A case's values (an evaluator's spec) are stored apart above this size: a ref costs 32 bytes
# in the event and, the first time, an event with its address and index entries (about 100
# bytes more).
_INLINE_CASE: Final = 160
_COMPACT_FROM: Final = 2  # the schema from which these types are stored compactly
_COMPACT: Final = frozenset({ev.EXECUTION, ev.STAGE, ev.CASE_RESULT})  # and ev.JUDGMENT
_KEPT: Final = 4096  # texts kept once made or read: a corpus's passages recur case after case
_PASSAGES: Final = (("retrieval/v1", "candidates"), ("context/v1", "items"))
K = TypeVar("K")
V = TypeVar("V")


@dataclass(frozen=True, slots=True)
class Stored:
    """An event made to be stored: itself, the texts or case it refers to, and its body as read
    back."""

    event: Event
    parts: tuple[tuple[str, Event], ...]  # (address, event) of each, in the order of the refs
    body: Mapping[str, Any]


@lru_cache(maxsize=_KEPT)
def text_event(text: str) -> tuple[str, Event]:
    """The ``oloproof.text`` event of ``text`` and its address (``text`` comes from a body that
    was redacted already)."""
    event = Event(ev.TEXT, ev.SCHEMAS[ev.TEXT], {"text": text})
    return address_of(event), event


def evaluator_part(spec: Mapping[str, Any]) -> tuple[str, Event] | None:
    """The ``oloproof.evaluator`` event of ``spec`` and its address, redacted as ``events.make``
    redacts; None when the spec is small enough to stay in each judgment."""
    if len(encode(spec)) <= _INLINE_CASE:
        return None
    event = Event(ev.EVALUATOR, ev.SCHEMAS[ev.EVALUATOR], redact({"evaluator": dict(spec)}))
    return address_of(event), event


def stored_judgment(
    body: Mapping[str, Any], execution: str, evaluator: tuple[str, Event] | None
) -> Stored:
    """A judgment of ``execution`` in its stored form: its evaluator's spec in ``evaluator``
    (``evaluator_part``), when that is not None, the rest redacted as ``events.make`` redacts."""
    if evaluator is None:
        read = redact(dict(body))
        return Stored(Event(ev.JUDGMENT, ev.SCHEMAS[ev.JUDGMENT], read, (execution,)), (), read)
    address, part = evaluator
    # The spec was redacted once, when its event was made: the rest is redacted here.
    stored = redact({key: value for key, value in body.items() if key != "evaluator"})
    read = {**stored, "evaluator": part.body["evaluator"]}
    stored[_EVALUATOR_REF] = 1
    event = Event(ev.JUDGMENT, ev.SCHEMAS[ev.JUDGMENT], stored, (execution, address))
    return Stored(event, ((address, part),), read)


def make_stored(
    kind: str,
    body: Mapping[str, Any],
    refs: Iterable[str] = (),
    retrievals: Mapping[str, Any] | None = None,
) -> Stored:
    """An execution, stage or case result event in its stored form (see the module), with
    configured secrets redacted as ``events.make`` redacts them.

    ``retrievals`` may give the retrieval of a retrieve stage by the stage's address, as read:
    an execution's retrieval is then compared with it value for value rather than by making
    the stage's event again.
    """
    if kind not in _COMPACT:
        raise ValueError(f"{kind} has no compact stored form")
    read = redact(dict(body))  # as events.make redacts: the one place secrets are replaced
    links = list(refs)
    schema = ev.SCHEMAS[kind]
    stored = dict(read)
    if kind == ev.CASE_RESULT:
        stored.update(_positions_of(read, links))
        part = {key: read[key] for key in _CASE_PART if key in read}
        if len(part) < len(_CASE_PART) or len(encode(part)) <= _INLINE_CASE:
            return Stored(Event(kind, schema, stored, links), (), read)
        case = Event(ev.CASE, ev.SCHEMAS[ev.CASE], part)
        case_address = address_of(case)
        for key in _CASE_PART:
            del stored[key]
        stored[_CASE_REF] = len(links)
        links.append(case_address)
        return Stored(Event(kind, schema, stored, links), ((case_address, case),), read)
    positions: dict[str, int] = {}
    texts: list[tuple[str, Event]] = []

    def packed(passage: Mapping[str, Any]) -> Mapping[str, Any]:
        text = passage.get("text")
        if type(text) is not str:
            return passage
        address, event = text_event(text)
        at = positions.get(address)
        if at is None:
            at = positions[address] = len(links)
            links.append(address)
            texts.append((address, event))
        out = dict(passage)
        del out["text"]
        out[_TEXT_REF] = at
        return out

    if kind == ev.EXECUTION:
        stages = read.get("stages") or []
        if stages:
            stored["stages"] = [{k: v for k, v in s.items() if k != "address"} for s in stages]
        recorded = read["artifacts"].get("retrieval/v1")
        at = _retrieve_stage(stages, recorded, retrievals or {})
        if at is not None and isinstance(recorded, list):
            stored["artifacts"] = {
                **read["artifacts"],
                "retrieval/v1": [{_STAGE_REF: at}, *recorded[1:]],
            }
    stored = _with_passages(kind, stored, packed)
    return Stored(Event(kind, schema, stored, links), tuple(texts), read)


def expand(address: str, event: Event, fetch: Fetch) -> Event:
    """``event`` as read: its texts, its stage's retrieval and its addresses put back."""
    refs = event.refs
    if event.type == ev.JUDGMENT and event.schema >= _COMPACT_FROM:
        if _EVALUATOR_REF not in event.body:
            return event
        body = dict(event.body)
        body["evaluator"] = _spec(address, _ref_at(address, refs, body.pop(_EVALUATOR_REF)), fetch)
        return Event(event.type, event.schema, body, refs)
    if event.type not in _COMPACT or event.schema < _COMPACT_FROM:
        return event
    body = dict(event.body)
    if event.type == ev.CASE_RESULT:
        if _CASE_REF in body:
            body.update(_case_part(address, _ref_at(address, refs, body.pop(_CASE_REF)), fetch))
        if "execution" in body:
            body["execution"] = _address(address, refs, body["execution"])
        body["judgments"] = {c: _address(address, refs, a) for c, a in body["judgments"].items()}
        return Event(event.type, event.schema, body, refs)
    body = _with_passages(event.type, body, _unpacker(address, event, fetch))
    if event.type == ev.STAGE:
        return Event(event.type, event.schema, body, refs)
    if "stages" in body:
        body["stages"] = [
            s if "address" in s else {**s, "address": _ref_at(address, refs, i)}
            for i, s in enumerate(body["stages"])
        ]
    artifacts = dict(body["artifacts"])
    retrievals = artifacts.get("retrieval/v1")
    if isinstance(retrievals, list) and retrievals and _is_stage_ref(retrievals[0]):
        stage_address = _ref_at(address, refs, retrievals[0][_STAGE_REF])
        (stage,) = fetch([stage_address])
        stage = expand(stage_address, stage, fetch)
        if stage.type != ev.STAGE or not isinstance(stage.body.get("retrieval"), Mapping):
            raise FormatError(
                f"event {address} takes its retrieval from {stage_address}, not a stage"
            )
        artifacts["retrieval/v1"] = [dict(stage.body["retrieval"]), *retrievals[1:]]
    body["artifacts"] = artifacts
    return Event(event.type, event.schema, body, refs)


def _case_part(address: str, case_address: str, fetch: Fetch) -> dict[str, Any]:
    (case,) = fetch([case_address])
    if case.type != ev.CASE or not all(isinstance(case.body.get(k), Mapping) for k in _CASE_PART):
        raise FormatError(f"event {address} refers to {case_address} for its case, not a case")
    return {key: case.body[key] for key in _CASE_PART}


def _positions_of(body: Mapping[str, Any], refs: list[str]) -> dict[str, Any]:
    """A case result's execution and judgment addresses as positions in its refs."""
    at = {address: i for i, address in reversed(list(enumerate(refs)))}

    def position(address: str) -> int:
        if address not in at:  # every writer puts them in the refs: this is a bug, not input
            raise ValueError(f"a case result refers to {address} without it in its refs")
        return at[address]

    found: dict[str, Any] = {"judgments": {c: position(a) for c, a in body["judgments"].items()}}
    if isinstance(body.get("execution"), str):
        found["execution"] = position(body["execution"])
    return found


def _retrieve_stage(
    stages: Sequence[Mapping[str, Any]], recorded: Any, known: Mapping[str, Any]
) -> int | None:
    """The position of the retrieve stage whose stored retrieval is the first ``retrieval/v1``
    artifact, if one is: the same values of the same types as the stage's retrieval when it is
    ``known``, which encode to the same bytes; else the stage's event made again from the
    artifact has the stage's address."""
    if not isinstance(recorded, list) or not recorded:
        return None
    for i, stage in enumerate(stages):
        if stage.get("stage") != "retrieve":
            continue
        if stage["address"] in known:
            if _same(recorded[0], known[stage["address"]]):
                return i
            continue
        again = {"stage": "retrieve", "identity": stage["identity"], "retrieval": recorded[0]}
        if address_of(make_stored(ev.STAGE, again).event) == stage["address"]:
            return i
    return None


def _same(a: Any, b: Any) -> bool:
    """Whether two bodies hold the same values of the same types, so that their canonical
    encodings are the same bytes (``==`` alone takes 1 for 1.0 and True, and 0.0 for -0.0).

    The stage's retrieval is most often the very object the execution recorded: that is
    answered at once."""
    if a is b:
        return True
    if type(a) is not type(b):
        return False
    if type(a) is dict:
        return a.keys() == b.keys() and all(_same(v, b[k]) for k, v in a.items())
    if type(a) is list:
        return len(a) == len(b) and all(map(_same, a, b))
    if type(a) is float:
        return a == b and math.copysign(1.0, a) == math.copysign(1.0, b)
    return bool(a == b)


def _unpacker(
    address: str, event: Event, fetch: Fetch
) -> Callable[[Mapping[str, Any]], Mapping[str, Any]]:
    """What puts the texts back into the passages of ``event``, those texts read in one go."""
    refs = event.refs
    held: set[int] = set()

    def note(passage: Mapping[str, Any]) -> Mapping[str, Any]:
        if _TEXT_REF in passage:
            held.add(passage[_TEXT_REF])
        return passage

    _with_passages(event.type, event.body, note)
    wanted = sorted(held)
    found = _texts(address, [_ref_at(address, refs, at) for at in wanted], fetch)
    texts = dict(zip(wanted, found, strict=True))

    def unpacked(passage: Mapping[str, Any]) -> Mapping[str, Any]:
        if _TEXT_REF not in passage:
            return passage
        rest = {k: v for k, v in passage.items() if k != _TEXT_REF}
        return {**rest, "text": texts[passage[_TEXT_REF]]}

    return unpacked


# Texts and evaluator specs read, by address, for each store read from (the object whose
# method the fetch is): each is content-addressed, so a kept one is never wrong, and keeping
# them per store means a read never shows a part its own store does not hold.
_READ: weakref.WeakKeyDictionary[object, dict[str, Any]] = weakref.WeakKeyDictionary()


def _kept(fetch: Fetch) -> dict[str, Any]:
    owner = getattr(fetch, "__self__", None)
    return _READ.setdefault(owner, {}) if owner is not None else {}


def _spec(address: str, spec_address: str, fetch: Fetch) -> Any:
    kept = _kept(fetch)
    if spec_address in kept:
        return kept[spec_address]
    (event,) = fetch([spec_address])
    spec = event.body.get("evaluator") if event.type == ev.EVALUATOR else None
    if not isinstance(spec, Mapping):
        raise FormatError(
            f"event {address} refers to {spec_address} for its evaluator, not an evaluator"
        )
    remember(kept, spec_address, spec, _KEPT)
    return spec


def _texts(address: str, wanted: Sequence[str], fetch: Fetch) -> list[str]:
    kept = _kept(fetch)
    got = {a: kept[a] for a in wanted if a in kept}
    missing = [a for a in wanted if a not in got]
    for text_address, event in zip(missing, fetch(missing) if missing else (), strict=True):
        text = event.body.get("text") if event.type == ev.TEXT else None
        if not isinstance(text, str):
            raise FormatError(f"event {address} refers to {text_address} for a text, not a text")
        got[text_address] = text
        remember(kept, text_address, text, _KEPT)
    return [got[a] for a in wanted]


def remember(kept: dict[K, V], key: K, value: V, limit: int) -> None:
    """Keep ``value`` under ``key`` in ``kept``, forgetting the oldest entry once it holds
    ``limit``: what is kept between events stays bounded whatever the number of cases."""
    if key not in kept and len(kept) >= limit:
        del kept[next(iter(kept))]
    kept[key] = value


def _address(address: str, refs: Sequence[str], value: Any) -> Any:
    """A position in the refs as the address there; an address (or None) kept as it is: a body
    made by ``events.make`` rather than ``make_stored`` holds its addresses itself."""
    return _ref_at(address, refs, value) if isinstance(value, int) else value


def _ref_at(address: str, refs: Sequence[str], at: Any) -> str:
    if isinstance(at, bool) or not isinstance(at, int) or not 0 <= at < len(refs):
        raise FormatError(f"event {address} refers to ref {at!r}, but it has {len(refs)} refs")
    return refs[at]


def _is_stage_ref(value: Any) -> bool:
    return isinstance(value, Mapping) and value.keys() == {_STAGE_REF}


Rewrite = Callable[[Mapping[str, Any]], Mapping[str, Any]]


def _with_passages(kind: str, body: Mapping[str, Any], rewrite: Rewrite) -> dict[str, Any]:
    """``body`` with each passage ``rewrite`` gives for it: the one place that says where an
    execution and a stage keep passages."""
    out = dict(body)
    if kind == ev.EXECUTION:
        out["artifacts"] = _artifacts(body["artifacts"], rewrite)
    elif kind == ev.STAGE and isinstance(body.get("retrieval"), Mapping):
        out["retrieval"] = _passages(body["retrieval"], "candidates", rewrite)
    return out


def _artifacts(artifacts: Mapping[str, Any], rewrite: Rewrite) -> dict[str, Any]:
    out = dict(artifacts)
    for kind, key in _PASSAGES:
        if isinstance(out.get(kind), list):
            out[kind] = [_passages(a, key, rewrite) for a in out[kind]]
    return out


def _passages(artifact: Any, key: str, rewrite: Rewrite) -> Any:
    if not isinstance(artifact, Mapping) or not isinstance(artifact.get(key), list):
        return artifact
    # type() first: an ABC isinstance costs more than the rewrite, and passages are dicts.
    items = [rewrite(p) if type(p) is dict or isinstance(p, Mapping) else p for p in artifact[key]]
    out = dict(artifact)
    out[key] = items
    return out
