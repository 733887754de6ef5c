"""Reading events: by address, many at once, and in append order.

Every read checks the bytes it returns against their address (a sha256 of them), and each call
reads in a read transaction begun for it, so it sees every commit made before it began, by this
process or another. The lmdb binding keeps one finished read transaction reset in reserve
(``max_spare_txns``) and renews it on the next ``begin``, so a fresh snapshot costs about
0.1 µs. Reads of many events (``get_many``, ``lookup_events``, ``events``) share one
transaction for each chunk of ``_SCAN_CHUNK``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from hashlib import sha256
from typing import Any, TypeVar

from ledger._lmdb import LMDB_ERROR, _error, _Tables
from ledger.address import format_address, parse_address
from ledger.errors import CorruptEventError, UnknownAddressError
from ledger.event import Event, event_from_trusted
from ledger.format import _SEQ, TYPE_INDEX, event_seq

_SCAN_CHUNK = 1024  # records read per read transaction when iterating

T = TypeVar("T")


class _Reader(_Tables):
    """Reads of events: by address, many at once, and in append order (see the module)."""

    def _records(self, digests: list[bytes]) -> list[bytes | None]:
        """The stored bytes of each digest, checked against it (``None`` when it is not
        stored), all read in one transaction."""
        pending = self._pending.data
        found: list[bytes | None] = []
        txn = self._begin()  # not _reading(): this is get() and get_bytes(), the hot path
        try:
            get, seq_of, events_db = txn.get, self._run_set(txn).seq_of, self._events
            for digest in digests:
                data = pending.get(digest) if pending else None
                if data is None:
                    seq_key = seq_of(txn, digest)
                    value = None if seq_key is None else get(seq_key, db=events_db)
                    data = None if value is None else self._checked(digest, value, txn)
                found.append(data)
        except LMDB_ERROR as exc:
            raise _error(exc, "read", self.path) from exc
        finally:
            self._end(txn)
        return found

    def _event(self, address: str, data: bytes) -> Event:
        """The event whose bytes ``data`` were just checked against ``address``, as the
        application reads it (through its expander and upcaster, if it has them)."""
        event = _decode(address, data)
        if self._expand is not None:
            event = self._expand(address, event, self._stored_events)
        upcast = self._upcast
        return event if upcast is None else upcast(address, event)

    def _stored_events(self, addresses: Sequence[str]) -> list[Event]:
        """The events at ``addresses`` upcast but not expanded: the ``Fetch`` an expander gets."""
        upcast = self._upcast
        found: list[Event] = []
        for address, data in zip(
            addresses, self._records([parse_address(a) for a in addresses]), strict=True
        ):
            if data is None:
                raise _unknown(address)
            event = _decode(address, data)
            found.append(event if upcast is None else upcast(address, event))
        return found

    def get_bytes(self, address: str) -> bytes:
        """The canonical bytes of the event at ``address`` (checked against it)."""
        (data,) = self._records([parse_address(address)])
        if data is None:
            raise _unknown(address)
        return data

    def get(self, address: str) -> Event:
        """The event at ``address``; ``CorruptEventError`` if its bytes no longer match."""
        (data,) = self._records([parse_address(address)])
        if data is None:
            raise _unknown(address)
        return self._event(address, data)

    def get_many(self, addresses: Iterable[str]) -> list[Event]:
        """The events at ``addresses``, in the same order: what ``get`` gives for each.

        The events are read together, in one read transaction per chunk of addresses rather
        than one per event, and each is checked against its address as ``get`` checks it.
        ``UnknownAddressError`` names the first address that is not stored.
        """
        if isinstance(addresses, str):
            raise TypeError("get_many takes an iterable of addresses, not one address")
        wanted = list(addresses)
        digests = [parse_address(address) for address in wanted]
        events: list[Event] = []
        for start in range(0, len(wanted), _SCAN_CHUNK):
            records = self._records(digests[start : start + _SCAN_CHUNK])
            for address, data in zip(wanted[start : start + _SCAN_CHUNK], records, strict=True):
                if data is None:
                    raise _unknown(address)
                events.append(self._event(address, data))
        return events

    def has(self, address: str) -> bool:
        """Whether an event with this full address is stored."""
        digest = parse_address(address)
        return digest in self._pending.data or self._committed(digest)

    def __contains__(self, address: object) -> bool:
        return isinstance(address, str) and self.has(address)

    def __len__(self) -> int:
        with self._reading() as txn:
            count: int = txn.stat(self._events)["entries"]
            seq_of = self._run_set(txn).seq_of
            count += sum(1 for d in list(self._pending.data) if seq_of(txn, d) is None)
        return count

    def events(self, type: str | None = None) -> Iterator[tuple[str, Event]]:
        """Every ``(address, event)`` in append order, or those of one ``type``.

        Each event is checked against its address as it is read. Events appended while
        iterating may or may not be seen; a batch's pending events come last.
        """
        if type is None:
            return self._checked_events(self._scan_records(), None)
        prefix = self._prefix(TYPE_INDEX, type)  # as lookup_events(TYPE_INDEX, type) reads
        return self._checked_events(self._scan_index(prefix), prefix)

    def _checked_events(
        self, records: Iterator[tuple[bytes, bytes]], prefix: bytes | None
    ) -> Iterator[tuple[str, Event]]:
        """``(address, event)`` of each ``(digest, bytes)`` record after checking its hash,
        then the batch's pending events not yet committed (those filed under ``prefix``)."""
        for digest, data in records:
            address = "sha256:" + digest.hex()
            if sha256(data).digest() != digest:
                raise CorruptEventError(address)
            yield address, self._event(address, data)
        for digest, data in self._new_pending(prefix):
            address = format_address(digest)
            yield address, self._event(address, data)

    def _new_pending(self, prefix: bytes | None = None) -> list[tuple[bytes, bytes]]:
        """This batch's pending ``(digest, bytes)`` not already committed, in put order; with
        ``prefix``, only those filed under that index entry prefix."""
        pending = self._pending
        if not pending.data:
            return []
        with self._lock:  # another thread's put or rollback may be changing it
            waiting = [
                (digest, data)
                for digest, data in pending.data.items()
                if prefix is None or prefix in pending.prefixes[digest]
            ]
        if not waiting:
            return []
        with self._reading() as txn:
            seq_of = self._run_set(txn).seq_of
            return [(digest, data) for digest, data in waiting if seq_of(txn, digest) is None]

    def _scan_records(self) -> Iterator[tuple[bytes, bytes]]:
        # Short read transactions, one per chunk, so iterating never pins the database and the
        # caller may write between items.
        start = _SEQ.pack(1)
        while True:
            chunk: list[tuple[bytes, bytes]] = []
            with self._reading() as txn:
                cursor = txn.cursor(db=self._events)
                if cursor.set_range(start):
                    for key, value in cursor:
                        chunk.append((key, value))
                        if len(chunk) >= _SCAN_CHUNK:
                            break
            for _, value in chunk:
                yield value[:32], self._data(value[32:])
            if len(chunk) < _SCAN_CHUNK:
                return
            start = _SEQ.pack(event_seq(chunk[-1][0], self.path) + 1)

    def _scan_index(self, prefix: bytes) -> Iterator[tuple[bytes, bytes]]:
        """``(digest, bytes)`` of the event each index entry under ``prefix`` files, skipping
        a stale entry (its record is another event's)."""
        events, data = self._events, self._data

        def record(txn: Any, key: bytes, head: bytes) -> tuple[bytes, bytes] | None:
            value = txn.get(key[-8:], db=events)
            if value is None or not value.startswith(head):
                return None
            return value[:32], data(value[32:], txn)

        return self._scan_entries(prefix, record)

    def _scan_entries(
        self, prefix: bytes, take: Callable[[Any, bytes, bytes], T | None]
    ) -> Iterator[T]:
        """What ``take(txn, entry key, digest head)`` makes of each index entry under ``prefix``
        (``None``: nothing), ``_SCAN_CHUNK`` of them per short read transaction; each chunk
        goes on after the last event the one before reached, in whatever runs hold it then."""
        after = 0
        while True:
            chunk: list[T] = []
            with self._reading() as txn:
                entries = self._run_set(txn).entries(txn, prefix, after)
                try:
                    for key, head in entries:
                        item = take(txn, key, head)
                        if item is not None:
                            chunk.append(item)
                        after = _SEQ.unpack(key[-8:])[0]
                        if len(chunk) >= _SCAN_CHUNK:
                            break
                finally:
                    entries.close()
            yield from chunk
            if len(chunk) < _SCAN_CHUNK:
                return

    def _checked(self, digest: bytes, value: bytes, txn: Any) -> bytes:
        """The event bytes of an ``events`` record read for ``digest`` in ``txn``, after
        checking that the record is the one of ``digest`` and that its bytes still hash to
        it."""
        data = self._data(value[32:], txn)
        if sha256(data).digest() != digest or not value.startswith(digest):
            raise CorruptEventError(format_address(digest))
        return data


def _decode(address: str, data: bytes) -> Event:
    """The event whose bytes ``data`` were just checked against ``address``."""
    try:
        return event_from_trusted(data)
    except Exception as exc:  # bytes that hash right but do not decode: cannot happen
        raise CorruptEventError(address, "its bytes do not decode") from exc


def _unknown(address: str) -> UnknownAddressError:
    return UnknownAddressError(address, f"no event with address {address} is stored")
