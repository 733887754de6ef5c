"""A state machine over the ledger: append, batch, abort, ref, reopen, replay and verify.

The model is an ordered dict of address -> event (append order) and a dict of refs; after
every step the ledger must agree with it.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterable
from pathlib import Path

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import Bundle, RuleBasedStateMachine, invariant, rule
from tests.ledger.strategies import bodies, event_types, events

from ledger import Event, address_of, fold, open_ledger


class _Abort(Exception):
    pass


def by_type_and_first_key(address: str, event: Event) -> Iterable[tuple[str, str]]:
    if event.body:
        yield ("first_key", min(event.body))


class LedgerMachine(RuleBasedStateMachine):
    addresses = Bundle("addresses")

    def __init__(self) -> None:
        super().__init__()
        self.dir = Path(tempfile.mkdtemp(prefix="ledger-machine-"))
        self.path = self.dir / ".oloproof"
        self.ledger = open_ledger(self.path, indexer=by_type_and_first_key)
        self.model: dict[str, Event] = {}
        self.refs: dict[str, str] = {}

    def _stored(self, event: Event) -> str:
        address = address_of(event)
        self.model.setdefault(address, event)
        return address

    @rule(target=addresses, event=events())
    def put(self, event: Event) -> str:
        assert self.ledger.put(event) == address_of(event)
        return self._stored(event)

    @rule(
        target=addresses,
        type_=event_types,
        body=bodies,
        refs=st.lists(addresses, max_size=3, unique=True),
    )
    def put_linked(self, type_: str, body: dict[str, object], refs: list[str]) -> str:
        event = Event(type_, 1, body, refs)
        self.ledger.put(event)
        return self._stored(event)

    @rule(batch=st.lists(events(), max_size=6), abort=st.booleans())
    def put_batch(self, batch: list[Event], abort: bool) -> None:
        try:
            with self.ledger.batch():
                for event in batch:
                    self.ledger.put(event)
                if abort:
                    raise _Abort
        except _Abort:
            return
        for event in batch:
            self._stored(event)

    @rule(
        name=st.sampled_from(["latest", "run_01J0000000000000000000000Z", "runs/a"]), to=addresses
    )
    def set_ref(self, name: str, to: str) -> None:
        self.ledger.set_ref(name, to)
        self.refs[name] = to

    @rule()
    def reopen(self) -> None:
        self.ledger.close()
        self.ledger = open_ledger(self.path, indexer=by_type_and_first_key, create=False)

    @rule()
    def verify(self) -> None:
        report = self.ledger.verify(deep=False)  # the page scan has tests of its own
        assert report.ok, str(report)
        assert report.events_checked == len(self.model)

    @invariant()
    def agrees_with_the_model(self) -> None:
        assert len(self.ledger) == len(self.model)
        start: list[tuple[str, Event]] = []
        replayed = fold(self.ledger.events(), lambda acc, pair: [*acc, pair], start)
        assert replayed == list(self.model.items())
        assert self.ledger.refs() == sorted(self.refs.items())
        for event_type in {e.type for e in self.model.values()}:
            expected = [a for a, e in self.model.items() if e.type == event_type]
            assert self.ledger.lookup("type", event_type) == expected
            assert self.ledger.latest("type", event_type) == expected[-1]

    def teardown(self) -> None:
        self.ledger.close()
        shutil.rmtree(self.dir, ignore_errors=True)


LedgerMachine.TestCase.settings = settings(max_examples=12, stateful_step_count=15, deadline=None)
TestLedgerMachine = LedgerMachine.TestCase
