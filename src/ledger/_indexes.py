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
from ledger._runs import (
    EMPTY_DIRECTORY,
    RUNS_KEY,
    Filing,
    RunSet,
    RunWriter,
    read_directory,
)
from ledger.address import digest_of, format_address
from ledger.errors import FormatError, StaleIndexesError
from ledger.event import Event, event_from_trusted
from ledger.format import (
    COMPACT_INDEX,
    INDEXES_KEY,
    SORTED_RUNS,
    TYPE_INDEX,
    _type_prefix,
    _type_prefixes,
    event_seq,
    legacy_index_prefix,
)

_REBUILD_CHUNK = 20_000  # events filed as one run while rebuilding (a long batch's chunk)


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
        return self._run_set(txn).last_record(txn, prefix, self._events)

    def _filed_under(self) -> str:
        """The name of the indexing rules the stored index entries were filed by."""
        with self._reading() as txn:
            stored: bytes | None = txn.get(INDEXES_KEY, db=self._meta)
        return "" if stored is None else stored.decode("utf-8", "replace")

    def keep_indexes_current(self) -> None:
        """Rebuild the indexes when they were filed by other rules than the application's
        (``Application.indexes``) or in an older layout; refuse a read-only ledger whose
        indexes are out of date (saying so when it is on a read-only file system, where no
        opening can rebuild them)."""
        wanted = self.app.indexes
        rules_current = not wanted or self._filed_under() == wanted
        if rules_current and (self.readonly or self._base is None):
            return  # entries of a first layout are read as they are until written to
        if self.readonly:
            older = f"the indexes of the ledger at {self.path} were filed by an older version of "
            if self.media_read_only:
                raise StaleIndexesError(
                    f"{older}{self.app.name}, and the read-only file system it is on cannot take "
                    "rebuilt ones"
                )
            raise StaleIndexesError(
                f"{older}{self.app.name}; they are rebuilt the next time {self.app.name} opens "
                "it for writing"
            )
        self.rebuild_indexes()

    def rebuild_indexes(self) -> None:
        """Recompute the address entries and every index from the events alone, and record
        the application's indexing rules as the ones they were filed by.

        The entries are filed in sorted runs (``ledger._runs``), a chunk of events at a time,
        merged as a run's commits are; entries of a first layout (the ``addr`` and ``index``
        tables) are moved to runs, and the format record then says so. An event whose bytes
        no longer hash to its address keeps its address entry but is not indexed (its content
        cannot be trusted); ``verify`` reports it.
        """
        wanted = self.app.indexes

        def body(txn: Any) -> RunSet:
            for db in (self._addr, self._index, *self._run_dbs):
                txn.drop(db, delete=False)
            raw = txn.get(RUNS_KEY, db=self._meta)
            try:
                next_ident = read_directory(raw)[0] if raw is not None else 1
            except FormatError:
                next_ident = 1
            # Idents go on from the old directory's: another process keeps filters by them.
            writer = RunWriter(txn, self._run_dbs, RunSet((), next_ident, EMPTY_DIRECTORY))
            filing, first, end = Filing(), 1, 1
            for seq_key, value in txn.cursor(db=self._events):
                end = event_seq(seq_key, self.path) + 1
                if not filing:
                    first = end - 1
                digest, data = value[:32], self._data(value[32:], txn)
                prefixes: tuple[bytes, ...] = ()
                if digest_of(data) == digest:
                    try:
                        event = event_from_trusted(data)
                        prefixes = self.derive_prefixes(format_address(digest), event)
                    except Exception:  # hashes right yet cannot be read or filed: verify says so
                        prefixes = ()
                filing.event(digest, seq_key, prefixes)
                if len(filing.addrs) >= _REBUILD_CHUNK:
                    writer.add(first, end, filing)
                    filing = Filing()
            if filing:
                writer.add(first, end, filing)
            txn.put(RUNS_KEY, writer.runs.raw, db=self._meta)
            _declare(txn, self._meta, COMPACT_INDEX)
            _declare(txn, self._meta, SORTED_RUNS)
            if wanted:
                txn.put(INDEXES_KEY, wanted.encode(), db=self._meta)
            else:  # filed by rules that have no name: a program that names its rules refiles
                txn.delete(INDEXES_KEY, db=self._meta)
            return writer.runs

        with self._lock:
            legacy, self._legacy_index = self._legacy_index, False  # derive compact prefixes
            try:
                runs = self._write(body)
            except BaseException:
                self._legacy_index = legacy
                raise
            self._base = None
            self._adopt_runs(runs)
