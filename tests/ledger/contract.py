"""One contract for everything that reads events: the LMDB ledger and the archive reader.

A backend's test class subclasses ``ReadStoreContract`` and implements ``make_store``, which
returns a store holding exactly ``SAMPLE`` (in that order) and the refs in ``SAMPLE_REFS``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from ledger import (
    AddressError,
    AmbiguousAddressError,
    Event,
    ReadStore,
    UnknownAddressError,
    address_of,
)


def _sample() -> list[Event]:
    root = Event("run.started", 1, {"run_id": "run_A", "cases": 3})
    case = Event("case.executed", 1, {"case": "c1", "output": "fourteen days"}, [address_of(root)])
    judged = Event(
        "judgment",
        2,
        {"case": "c1", "score": 1.0, "passed": True},
        [address_of(root), address_of(case)],
    )
    other = Event("case.executed", 1, {"case": "c2", "output": "unknown", "error": None})
    return [root, case, judged, other]


SAMPLE = _sample()
ADDRESSES = [address_of(e) for e in SAMPLE]
SAMPLE_REFS = {"latest": ADDRESSES[2], "run_01J0000000000000000000000A": ADDRESSES[0]}


class ReadStoreContract:
    """Behaviour every read store must have; subclass it and implement ``make_store``."""

    def make_store(self, tmp_path: Path) -> ReadStore:
        raise NotImplementedError

    @pytest.fixture
    def store(self, tmp_path: Path) -> Iterator[ReadStore]:
        store = self.make_store(tmp_path)
        yield store
        close = getattr(store, "close", None)
        if close is not None:
            close()

    def test_is_a_read_store(self, store: ReadStore) -> None:
        assert isinstance(store, ReadStore)

    def test_get_returns_the_event_that_was_stored(self, store: ReadStore) -> None:
        for address, event in zip(ADDRESSES, SAMPLE, strict=True):
            assert store.get(address) == event

    def test_get_bytes_hash_to_the_address(self, store: ReadStore) -> None:
        for address, event in zip(ADDRESSES, SAMPLE, strict=True):
            data = store.get_bytes(address)
            assert data == event.to_bytes()
            assert Event.from_bytes(data) == event

    def test_has_and_len(self, store: ReadStore) -> None:
        assert len(store) == len(SAMPLE)
        assert all(store.has(a) for a in ADDRESSES)
        assert not store.has("sha256:" + "0" * 64)

    def test_unknown_address(self, store: ReadStore) -> None:
        missing = "sha256:" + "0" * 64
        with pytest.raises(UnknownAddressError, match=missing):
            store.get(missing)
        with pytest.raises(UnknownAddressError):
            store.get_bytes(missing)

    @pytest.mark.parametrize(
        "bad", ["sha256:abc", "abc", "sha256:" + "g" * 64, "", "sha1:" + "0" * 40]
    )
    def test_malformed_address(self, store: ReadStore, bad: str) -> None:
        with pytest.raises(AddressError):
            store.get(bad)
        with pytest.raises(AddressError):
            store.has(bad)

    def test_events_in_order(self, store: ReadStore) -> None:
        assert list(store.events()) == list(zip(ADDRESSES, SAMPLE, strict=True))

    def test_events_of_one_type(self, store: ReadStore) -> None:
        found = list(store.events("case.executed"))
        assert found == [(ADDRESSES[1], SAMPLE[1]), (ADDRESSES[3], SAMPLE[3])]
        assert list(store.events("no.such.type")) == []

    def test_resolve_full_address(self, store: ReadStore) -> None:
        for address in ADDRESSES:
            assert store.resolve(address) == address
            assert store.resolve(address.upper().replace("SHA256:", "sha256:")) == address
        with pytest.raises(UnknownAddressError):
            store.resolve("sha256:" + "0" * 64)

    @pytest.mark.parametrize("length", [8, 9, 12, 63])
    def test_resolve_unique_prefix(self, store: ReadStore, length: int) -> None:
        for address in ADDRESSES:
            hexpart = address[7:]
            assert store.resolve(hexpart[:length]) == address
            assert store.resolve("sha256:" + hexpart[:length]) == address
            assert store.resolve(hexpart[:length].upper()) == address

    def test_resolve_refuses_short_prefixes(self, store: ReadStore) -> None:
        with pytest.raises(UnknownAddressError, match="at least 8 hex digits"):
            store.resolve(ADDRESSES[0][7:14])

    def test_resolve_unknown_prefix(self, store: ReadStore) -> None:
        absent = next(
            p
            for p in ("00000000", "11111111", "22222222")
            if not any(a[7:].startswith(p) for a in ADDRESSES)
        )
        with pytest.raises(UnknownAddressError, match=absent):
            store.resolve(absent)

    def test_resolve_ref_names(self, store: ReadStore) -> None:
        for name, address in SAMPLE_REFS.items():
            assert store.resolve(name) == address
        with pytest.raises(UnknownAddressError, match="no-such-ref"):
            store.resolve("no-such-ref")

    def test_resolve_nonsense(self, store: ReadStore) -> None:
        with pytest.raises(AddressError):
            store.resolve("not a ref!")

    def test_refs(self, store: ReadStore) -> None:
        assert store.refs() == sorted(SAMPLE_REFS.items())
        assert store.refs("run_") == [("run_01J0000000000000000000000A", ADDRESSES[0])]
        assert store.refs("zzz") == []
        for name, address in SAMPLE_REFS.items():
            assert store.get_ref(name) == address
        assert store.get_ref("missing") is None


def ambiguous_check(store: ReadStore, addresses: list[str]) -> None:
    """``resolve`` of a prefix shared by ``addresses`` lists them (used by store tests)."""
    common = addresses[0][7:15]
    with pytest.raises(AmbiguousAddressError) as caught:
        store.resolve(common)
    assert sorted(caught.value.candidates) == sorted(addresses)
    for address in addresses:
        assert address in str(caught.value)
