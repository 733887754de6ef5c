"""Derived secondary indexes: filing events under entries, looking them up, rebuilding them.

Every event is filed under its type (``TYPE_INDEX``) and under each ``(index name, key)`` pair
the application's ``Indexer`` yields for it, when the event is first stored. The entries, like
the ``addr`` table, are derived from the events: ``verify`` recomputes them and compares, and
``rebuild_indexes`` writes them afresh.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ledger._lmdb import LMDB_ERROR, _declare, _error
from ledger._reads import _Reader
from ledger.address import digest_of, format_address
from ledger.errors import StaleIndexesError
from ledger.event import Event, event_from_trusted
from ledger.format import (
    COMPACT_INDEX,
    ENTRY_HEAD,
    INDEXES_KEY,
    TYPE_INDEX,
    _type_prefix,
    _type_prefixes,
    legacy_index_prefix,
)


class _Indexes(_Reader):
    """Index entries: derived when an event is stored, looked up, rebuilt (see the module)."""

    def _prefixes(self, address: str, event: Event) -> tuple[bytes, ...]:
        """The index entry prefixes of ``event``: its type's, then the indexer's, each once."""
        prefix = self._prefix
        prefixes: tuple[bytes, ...] = (
            (legacy_index_prefix(TYPE_INDEX, event.type),)
            if self._legacy_index
            else _type_prefixes.get(event.type) or _type_prefix(event.type)
        )
        if self._indexer is not None:
            more = []
            for name, key in self._indexer(address, event):
                if name == TYPE_INDEX:
                    raise ValueError(f"the index name {TYPE_INDEX!r} is reserved by the ledger")
                more.append(prefix(name, key))
            if more:
                prefixes = tuple(dict.fromkeys((*prefixes, *more)))
        return prefixes

    def derive_prefixes(self, address: str, event: Event) -> tuple[bytes, ...]:
        """The index entry prefixes ``put`` files ``event`` under (for verify and rebuild).

        An event of an older schema is upcast first, as the indexer expects the shape the
        application writes today; the upcaster may refuse it (a ``LedgerError``).
        """
        if self._upcast is not None:
            event = self._upcast(address, event)
        return self._prefixes(address, event)

    def lookup(self, index: str, key: str) -> list[str]:
        """Addresses of the events filed under ``key`` in ``index``, in append order."""
        return list(self.iter_lookup(index, key))

    def iter_lookup(self, index: str, key: str) -> Iterator[str]:
        """``lookup`` read a chunk of entries at a time, for a key that files very many events
        (a run's cases): what it holds stays the same whatever their number."""
        prefix = self._prefix(index, key)
        events = self._events

        def digest(txn: Any, entry: bytes, head: bytes) -> bytes | None:
            value = txn.get(entry[-8:], db=events)
            return None if value is None or not value.startswith(head) else value[:32]

        for found in self._scan_entries(prefix, digest):
            yield format_address(found)
        yield from (format_address(found) for found, _ in self._new_pending(prefix))

    def lookup_events(self, index: str, key: str) -> Iterator[tuple[str, Event]]:
        """``(address, event)`` of each event filed under ``key`` in ``index``, in append order.

        What ``lookup`` and then ``get`` of each address give, read in one pass: each index
        entry leads straight to its event's record, one read transaction serves a chunk of
        events, and each event is checked against its address. For replaying all the events
        of one key (a run's cases). An index entry whose record no longer matches it is
        skipped (``verify`` reports the index as stale); a batch's pending events come last.
        """
        prefix = self._prefix(index, key)
        return self._checked_events(self._scan_index(prefix), prefix)

    def latest(self, index: str, key: str) -> str | None:
        """The address of the last event filed under ``key`` in ``index``, or ``None``."""
        prefix = self._prefix(index, key)
        waiting = self._new_pending(prefix)
        if waiting:
            return format_address(waiting[-1][0])
        txn = self._begin()  # inline rather than _reading(): a cache lookup per case
        try:
            last = self._last_record(txn, prefix)
        except LMDB_ERROR as exc:
            raise _error(exc, "read", self.path) from exc
        finally:
            self._end(txn)
        return None if last is None else format_address(last[:32])

    def latest_event(self, index: str, key: str) -> tuple[str, Event] | None:
        """``(address, event)`` of the last event filed under ``key`` in ``index``, or ``None``.

        What ``latest`` and then ``get`` give (a cache lookup), in one read transaction that
        goes from the index entry straight to the event's record; the event is checked
        against its address as ``get`` checks it.
        """
        prefix = self._prefix(index, key)
        waiting = self._new_pending(prefix)
        if waiting:
            digest, data = waiting[-1]
            address = format_address(digest)
            return address, self._event(address, data)
        txn = self._begin()  # inline rather than _reading(): a cache lookup per case
        try:
            last = self._last_record(txn, prefix)
            if last is None:
                return None
            digest = last[:32]
            data = self._checked(digest, last, txn)
        except LMDB_ERROR as exc:
            raise _error(exc, "read", self.path) from exc
        finally:
            self._end(txn)
        address = format_address(digest)
        return address, self._event(address, data)

    def _last_record(self, txn: Any, prefix: bytes) -> bytes | None:
        """The ``events`` record of the last event filed under ``prefix``, if any; an entry
        whose record is not the event it was filed for (a stale index) is passed over."""
        self._check_layout(txn)
        cursor = txn.cursor(db=self._index)
        positioned = cursor.set_range(prefix + b"\xff" * 9)  # past every entry under prefix
        moved = cursor.prev() if positioned else cursor.last()
        while moved:
            entry, head = cursor.item()
            if not entry.startswith(prefix):
                return None
            value: bytes | None = txn.get(entry[-8:], db=self._events)
            if value is not None and value.startswith(head):
                return value
            moved = cursor.prev()
        return None

    def _filed_under(self) -> str:
        """The name of the indexing rules the stored index entries were filed by."""
        with self._reading() as txn:
            stored: bytes | None = txn.get(INDEXES_KEY, db=self._meta)
        return "" if stored is None else stored.decode("utf-8", "replace")

    def keep_indexes_current(self) -> None:
        """Rebuild the indexes when they were filed by other rules than the application's
        (``Application.indexes``) or in an older layout; refuse a read-only ledger whose
        indexes are out of date."""
        wanted = self.app.indexes
        rules_current = not wanted or self._filed_under() == wanted
        if rules_current and (self.readonly or not self._legacy_index):
            return  # entries of the first layout are read as they are until written to
        if self.readonly:
            raise StaleIndexesError(
                f"the indexes of the ledger at {self.path} were filed by an older version of "
                f"{self.app.name}; they are rebuilt the next time {self.app.name} opens it for "
                "writing"
            )
        self.rebuild_indexes()

    def rebuild_indexes(self) -> None:
        """Recompute the ``addr`` table and every index from the events alone, and record
        the application's indexing rules as the ones they were filed by.

        An event whose bytes no longer hash to its address keeps its ``addr`` entry but is not
        indexed (its content cannot be trusted); ``verify`` reports it. Entries of the first
        layout are refiled in the compact one, and the format record then says so.
        """
        wanted = self.app.indexes

        def body(txn: Any) -> None:
            txn.drop(self._addr, delete=False)
            txn.drop(self._index, delete=False)
            addrs: list[tuple[bytes, bytes]] = []
            entries: list[tuple[bytes, bytes]] = []
            for seq_key, value in txn.cursor(db=self._events):
                digest, data = value[:32], self._data(value[32:], txn)
                addrs.append((digest, seq_key))
                if digest_of(data) != digest:
                    continue
                try:
                    event = event_from_trusted(data)
                    prefixes = self.derive_prefixes(format_address(digest), event)
                except Exception:  # hashes right yet cannot be read or filed: verify says so
                    continue
                for prefix in prefixes:
                    entries.append((prefix + seq_key, digest[:ENTRY_HEAD]))
            addrs.sort()
            entries.sort()
            txn.cursor(db=self._addr).putmulti(addrs)
            txn.cursor(db=self._index).putmulti(entries)
            _declare(txn, self._meta, COMPACT_INDEX)
            if wanted:
                txn.put(INDEXES_KEY, wanted.encode(), db=self._meta)
            else:  # filed by rules that have no name: a program that names its rules refiles
                txn.delete(INDEXES_KEY, db=self._meta)

        with self._lock:
            legacy, self._legacy_index = self._legacy_index, False  # derive compact prefixes
            try:
                self._write(body)
            except BaseException:
                self._legacy_index = legacy
                raise
