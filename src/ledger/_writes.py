"""The write path: ``put``, and batches that hold their events until one commit.

``put`` outside a batch commits at once. Inside ``with ledger.batch():`` events are encoded and
hashed as they are put, but held in memory; the batch writes them in one transaction when it
exits (and drops them if it exits with an exception). Holding them in memory keeps the write
transaction short, so a second process appending at the same time only waits for the commit
itself, and it lets a transaction be replayed when the map is full: the map is grown and the
same transaction run again. A batch that gathers more than ``CHUNK_BYTES`` of new events (or
``CHUNK_EVENTS`` events) commits what it has as one chunk and goes on; each chunk is atomic, and
an exception drops only the chunk not yet committed.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from hashlib import sha256
from typing import Any, Final, Self

from ledger._indexes import _Indexes
from ledger._lmdb import _declare
from ledger._pending import ANY, _Pending, _RefOp
from ledger._records import DICTIONARY_KEY, train
from ledger._runs import RUNS_KEY, Filing, RunSet, RunWriter
from ledger.address import check_ref_name, format_address, parse_address
from ledger.chain import GENESIS, pack_record
from ledger.errors import RefConflictError, StoreError
from ledger.event import Event
from ledger.format import _SEQ, ZSTD_RECORDS

CHUNK_BYTES: Final = 32 << 20
CHUNK_EVENTS: Final = 20_000


@dataclass(frozen=True, slots=True)
class Prepared:
    """An event made ready to store by ``Ledger.prepare``: its address, digest, canonical bytes
    and index entry prefixes. Only ``prepare`` makes one: ``put_prepared`` trusts its parts."""

    address: str
    digest: bytes
    data: bytes
    prefixes: tuple[bytes, ...]


class _Writer(_Indexes):
    """``put``, ``batch`` and the one commit they share (see the module)."""

    def put(self, event: Event) -> str:
        """Store ``event`` and return its address; storing an event already there is a no-op."""
        data = event.to_bytes()
        digest = sha256(data).digest()
        return self._store("sha256:" + digest.hex(), digest, data, event)

    def prepare(self, event: Event) -> Prepared:
        """Encode and hash ``event`` and work out its index entries, without storing it.

        For a writer that needs an event's address long before it stores the event (it refers
        to it from later events): the work is done once, as the event is made, and
        ``put_prepared`` later only writes it.
        """
        data = event.to_bytes()
        digest = sha256(data).digest()
        address = "sha256:" + digest.hex()
        return Prepared(address, digest, data, self._prefixes(address, event))

    def put_prepared(self, item: Prepared) -> str:
        """``put`` of an event ``prepare`` made ready; return its address."""
        return self._store(item.address, item.digest, item.data, item.prefixes)

    def put_all(self, items: Sequence[Prepared]) -> int:
        """Store events ``prepare`` made ready in transactions of their own (chunked as a batch
        is), apart from any open batch; return how many were new.

        For a thread that stores what its owner prepared while the owner goes on: nothing is
        shared with the owner's batch, and the owner's reads see each chunk once it commits.
        """
        if self.readonly:
            raise StoreError(f"the ledger at {self.path} was opened read-only")
        added = 0
        pending = _Pending()
        for item in items:
            pending.add(item.digest, item.data, item.prefixes)
            if _chunk_full(pending):
                added += self._commit(pending)
                pending = _Pending()
        return added + (self._commit(pending) if pending else 0)

    def _store(
        self,
        address: str,
        digest: bytes,
        data: bytes,
        entries: Event | tuple[bytes, ...],
    ) -> str:
        """``put``'s work. ``entries`` is the event's index entry prefixes, or the event to
        derive them from: the indexer then runs only if the event is not stored already."""
        with self._lock:
            if self._depth:
                pending = self._pending
                if digest not in pending.data:
                    pending.add(digest, data, self._entries(address, entries))
                    if _chunk_full(pending):
                        self._flush()
                return address
            if self.readonly:
                raise StoreError(f"the ledger at {self.path} was opened read-only")
            if self._committed(digest):
                return address
            one = _Pending()
            one.add(digest, data, self._entries(address, entries))
            self._commit(one)
        return address

    def _entries(self, address: str, entries: Event | tuple[bytes, ...]) -> tuple[bytes, ...]:
        return entries if isinstance(entries, tuple) else self._prefixes(address, entries)

    def _commit(self, pending: _Pending) -> int:
        """Write ``pending`` in one transaction; return how many events were new."""
        # The first commit big enough to learn from trains the ledger's dictionary (outside
        # the transaction: it takes tens of milliseconds); ``_records`` says why.
        trained = train(pending.data.values()) if self._packing.dictionary is None else None
        written_with: list[bytes | None] = [None]
        filed: list[RunSet | None] = [None]  # the runs as the commit left them

        def body(txn: Any) -> int:
            filed[0] = None  # a transaction run again (the map grew) starts over
            dictionary = self._stored_dictionary(txn)
            if dictionary is None and trained is not None:
                dictionary = trained
                txn.put(DICTIONARY_KEY, trained, db=self._meta)
                _declare(txn, self._meta, ZSTD_RECORDS)
            written_with[0] = dictionary
            pack = self._packing.packer(dictionary)
            cursor = txn.cursor(db=self._events)
            first = _SEQ.unpack(cursor.key())[0] + 1 if cursor.last() else 1
            seq = first
            runs = self._run_set(txn, write=True)
            prefixes = pending.prefixes
            number, previous = _chain_tip(txn, self._chain)
            head = sha256(previous)  # the commit's head: see ledger.chain
            filing = Filing()

            def records() -> Iterator[tuple[bytes, bytes]]:
                nonlocal seq
                file = filing.event
                stored = runs.seqs_of(txn, list(pending.data))
                for (digest, data), stored_as in zip(pending.data.items(), stored, strict=True):
                    if stored_as is not None:
                        continue  # already stored (perhaps by another process meanwhile)
                    seq_key = _SEQ.pack(seq)
                    seq += 1
                    head.update(digest)
                    file(digest, seq_key, prefixes[digest])
                    yield seq_key, digest + pack(data)

            cursor.putmulti(records(), append=True)
            if seq > first:
                chain = txn.cursor(db=self._chain)
                chain.put(_SEQ.pack(number), pack_record(head.digest(), first, seq - first))
                writer = RunWriter(txn, self._run_dbs, runs)
                writer.add(first, seq, filing)
                txn.put(RUNS_KEY, writer.runs.raw, db=self._meta)
                filed[0] = writer.runs
            for op in pending.refs:
                current = txn.get(op.name, db=self._refs)
                if op.expected is not ANY and current != op.expected:
                    raise RefConflictError(
                        op.name.decode(), _address_or_none(op.expected), _address_or_none(current)
                    )
                txn.put(op.name, op.digest, db=self._refs)
            return seq - first

        added = self._write(body)
        if written_with[0] is not None:  # only once it is committed: it is the ledger's now
            self._packing.adopt(written_with[0])
        if filed[0] is not None:
            self._adopt_runs(filed[0])
        return added

    @contextmanager
    def batch(self) -> Iterator[Self]:
        """Group writes into one transaction, committed when the block exits normally.

        Nested batches join the outermost one; an exception leaving a nested batch drops only
        what was put inside it (unless a chunk was committed since it began).
        """
        if self.readonly:
            raise StoreError(f"the ledger at {self.path} was opened read-only")
        with self._lock:
            self._environment()
            self._depth += 1
            pending = self._pending
            self._savepoints.append((self._generation, len(pending.data), len(pending.refs)))
        ok = False
        try:
            yield self
            ok = True
        finally:
            with self._lock:
                generation, n_pending, n_refs = self._savepoints.pop()
                self._depth -= 1
                if ok and self._depth == 0:
                    self._flush()
                elif not ok:
                    if generation != self._generation:
                        n_pending = n_refs = 0
                    self._pending.truncate(n_pending, n_refs)

    def _flush(self) -> None:
        if self._pending:
            pending, self._pending = self._pending, _Pending()
            self._generation += 1
            self._commit(pending)

    def _commit_imported(
        self, events: list[tuple[bytes, bytes, tuple[bytes, ...]]], refs: list[tuple[str, str]]
    ) -> int:
        """Write already-checked ``(digest, bytes, index entry prefixes)`` items and new
        ``(name, address)`` refs in one transaction of their own (one commit); return how many
        events were new."""
        with self._lock:
            if self._depth:
                raise StoreError("cannot import an archive inside a batch: import it outside")
            pending = _Pending()
            for digest, data, prefixes in events:
                pending.add(digest, data, prefixes)
            for name, address in refs:
                pending.refs.append(
                    _RefOp(check_ref_name(name).encode(), parse_address(address), None)
                )
            return self._commit(pending) if pending else 0

    def _tip(self) -> tuple[int, bytes]:
        """The number the next commit takes and the head it follows (see ``ledger.chain``)."""
        if self._chain is None:
            return 1, GENESIS
        with self._reading() as txn:
            return _chain_tip(txn, self._chain)


def _chunk_full(pending: _Pending) -> bool:
    """Whether ``pending`` holds a chunk's worth, to commit before it gathers more."""
    return pending.size >= CHUNK_BYTES or len(pending.data) >= CHUNK_EVENTS


def _chain_tip(txn: Any, chain_db: Any) -> tuple[int, bytes]:
    """The number the next commit takes, and the head it follows."""
    cursor = txn.cursor(db=chain_db)
    if not cursor.last():
        return 1, GENESIS
    return _SEQ.unpack(cursor.key())[0] + 1, cursor.value()[:32]


def _address_or_none(digest: Any) -> str | None:
    return None if digest is None else format_address(digest)
