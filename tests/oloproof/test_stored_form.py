"""The compact stored form reads back as exactly what was made (``oloproof.stored_form``).

- Any execution and stage body (passages with and without texts, repeated texts, reranked
  retrievals) expands back to the body made, value for value and type for type.
- An execution's retrieval is kept as its stage only when it is that stage's retrieval: equal
  by the canonical encoding (the reference), not by ``==``, which takes 1 for 1.0 and True and
  0.0 for -0.0.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ledger import Event, FormatError, address_of, encode
from oloproof import events as ev
from oloproof.stored_form import _same, expand, make_stored

TRICKY = st.sampled_from([0, 0.0, -0.0, False, 1, 1.0, True, "1", b"1", None, 2.5, "a"])
tricky_values = st.recursive(
    TRICKY,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.sampled_from("ab"), inner, max_size=2)
    ),
    max_leaves=6,
)


@given(tricky_values, tricky_values)
def test_same_is_equal_canonical_bytes(a: Any, b: Any) -> None:
    assert _same(a, b) == (encode(a) == encode(b))
    assert _same(a, a)


CORPUS = ["alpha beta", "gamma delta", "alpha beta gamma", "x" * 300]
passages = st.fixed_dictionaries(
    {"doc_id": st.sampled_from(["d1", "d2", "d3"])},
    optional={
        "score": st.one_of(st.floats(allow_nan=False, allow_infinity=False), st.integers(0, 9)),
        "text": st.sampled_from(CORPUS),
        "chunk_id": st.sampled_from(["c1", "c2"]),
    },
)
retrievals = st.fixed_dictionaries(
    {"candidates": st.lists(passages, max_size=6)}, optional={"query": st.text(max_size=5)}
)
contexts = st.fixed_dictionaries(
    {"items": st.lists(passages, max_size=4), "source": st.sampled_from(["retrieval", "gold"])}
)


class Store:
    """Events by address, as a ledger holds them; ``fetch`` is what a reader gives ``expand``."""

    def __init__(self) -> None:
        self.events: dict[str, Event] = {}

    def put(self, event: Event) -> str:
        address = address_of(event)
        self.events[address] = event
        return address

    def fetch(self, addresses: Sequence[str]) -> list[Event]:
        return [self.events[a] for a in addresses]

    def read(self, address: str) -> Event:
        return expand(address, self.events[address], self.fetch)


def stored(
    store: Store, kind: str, body: dict[str, Any], refs: Sequence[str] = (), **kw: Any
) -> str:
    made = make_stored(kind, body, refs, **kw)
    for _, text in made.parts:
        store.put(text)
    assert made.body == ev.make(kind, body, refs).body
    return store.put(made.event)


@given(retrievals, st.lists(retrievals, max_size=1), contexts, st.booleans())
def test_an_execution_and_its_stage_read_back_as_made(
    retrieval: dict[str, Any], reranked: list[dict[str, Any]], context: dict[str, Any], known: bool
) -> None:
    store = Store()
    stage_body = {"stage": "retrieve", "identity": "i1", "retrieval": retrieval}
    stage = stored(store, ev.STAGE, stage_body)
    assert store.read(stage).body == ev.make(ev.STAGE, stage_body).body
    body = {
        "identity": "e1",
        "input": {"q": 1},
        "status": "ok",
        "output": {"answer": "a"},
        "artifacts": {"retrieval/v1": [retrieval, *reranked], "context/v1": [context]},
        "stages": [{"stage": "retrieve", "identity": "i1", "address": stage}],
    }
    seen = {stage: dict(retrieval)} if known else {}
    execution = stored(store, ev.EXECUTION, body, [stage], retrievals=seen)
    assert store.read(execution).body == ev.make(ev.EXECUTION, body, [stage]).body
    kept = store.events[execution].body["artifacts"]["retrieval/v1"][0]
    assert kept == {"stage_ref": 0}  # the stage's own retrieval, found either way
    texts = [e for e in store.events.values() if e.type == ev.TEXT]
    assert len({t.body["text"] for t in texts}) == len(texts)


def retrieving(retrieval: dict[str, Any], stage: str) -> dict[str, Any]:
    """An execution body whose one retrieval is ``retrieval``, made by the retrieve ``stage``."""
    return {
        "identity": "e1",
        "input": {},
        "status": "ok",
        "output": None,
        "artifacts": {"retrieval/v1": [retrieval]},
        "stages": [{"stage": "retrieve", "identity": "i1", "address": stage}],
    }


def test_a_known_retrieval_is_compared_without_making_its_stage_again() -> None:
    """The writer's ``retrievals`` are the retrievals stored at those addresses: one given for
    an address is compared with the artifact itself (here an address no stage event has, so
    only that comparison can find it)."""
    store = Store()
    retrieval = {"candidates": [{"doc_id": "d1", "score": 1.0, "text": "alpha"}]}
    stage = store.put(
        Event(ev.STAGE, 2, {"stage": "retrieve", "identity": "i1", "retrieval": retrieval})
    )
    body = retrieving(retrieval, stage)
    for known, kept in (({stage: retrieval}, True), ({}, False)):
        made = make_stored(ev.EXECUTION, body, [stage], retrievals=known)
        first = made.event.body["artifacts"]["retrieval/v1"][0]
        assert (first == {"stage_ref": 0}) is kept


def test_a_retrieval_that_differs_only_in_type_is_stored_itself() -> None:
    store = Store()
    retrieval = {"candidates": [{"doc_id": "d1", "score": 1.0, "text": "alpha"}]}
    stage = stored(store, ev.STAGE, {"stage": "retrieve", "identity": "i1", "retrieval": retrieval})
    for score, known in ((1, True), (True, True), (1, False), (-0.0, False)):
        other = {"candidates": [{"doc_id": "d1", "score": score, "text": "alpha"}]}
        body = retrieving(other, stage)
        seen = {stage: retrieval} if known else {}
        execution = stored(store, ev.EXECUTION, body, [stage], retrievals=seen)
        kept = store.events[execution].body["artifacts"]["retrieval/v1"][0]
        assert "stage_ref" not in kept, (score, known)
        read = store.read(execution).body["artifacts"]["retrieval/v1"][0]
        assert encode(read) == encode(other)


def test_a_case_result_keeps_its_addresses_once() -> None:
    store = Store()
    run = store.put(Event("oloproof.run", 1, {}))
    execution = store.put(Event("oloproof.execution", 1, {}))
    judgment = store.put(Event("oloproof.judgment", 1, {}))
    body = {
        "run_id": "r",
        "case_id": "c",
        "status": "ok",
        "execution": execution,
        "judgments": {"answer": judgment},
        "verdicts": {"answer": {"s": "pass"}},
    }
    address = stored(store, ev.CASE_RESULT, body, [run, execution, judgment])
    assert store.events[address].body["execution"] == 1
    assert store.events[address].body["judgments"] == {"answer": 2}
    assert store.read(address).body == ev.make(ev.CASE_RESULT, body).body


case_values = st.dictionaries(
    st.sampled_from(["answer", "relevant", "gold_context", "topic"]), tricky_values, max_size=4
)


@given(case_values, case_values, st.sampled_from(["", "x" * 200]))
def test_a_case_result_refers_to_its_case_only_when_that_is_smaller(
    expected: dict[str, Any], metadata: dict[str, Any], long: str
) -> None:
    """A case's values read back as made, type for type, whether kept in the case result or
    stored once as an ``oloproof.case`` event; they are stored apart exactly when they encode to
    more than a ref would save, and the same case from another run is the same event."""
    store = Store()
    expected = {**expected, "note": long}
    body = {
        "run_id": "r",
        "case_id": "c",
        "status": "ok",
        "judgments": {},
        "verdicts": {},
        "expected": expected,
        "metadata": metadata,
    }
    address = stored(store, ev.CASE_RESULT, body)
    kept = store.events[address]
    read = store.read(address).body
    assert encode(read) == encode(ev.make(ev.CASE_RESULT, body).body)
    large = len(encode({"expected": expected, "metadata": metadata})) > 160
    assert ("case_ref" in kept.body) is large
    assert ("expected" in kept.body) is not large
    cases = [e for e in store.events.values() if e.type == ev.CASE]
    assert len(cases) == int(large)
    again = stored(store, ev.CASE_RESULT, {**body, "run_id": "r2"})
    assert len([e for e in store.events.values() if e.type == ev.CASE]) == int(large)
    assert store.events[again].refs == kept.refs


def test_a_case_ref_to_another_event_is_refused() -> None:
    store = Store()
    text = store.put(Event(ev.TEXT, 1, {"text": "not a case"}))
    body = {"run_id": "r", "case_id": "c", "judgments": {}, "case_ref": 0}
    address = store.put(Event(ev.CASE_RESULT, 3, body, (text,)))
    with pytest.raises(FormatError, match="for its case, not a case"):
        store.read(address)
