"""The LMDB event store: the only module that talks to LMDB.

Layout: one LMDB environment in ``<project>/.oloproof/ledger/`` with five named databases.

    events  8-byte big-endian sequence number -> 32-byte sha256 digest + canonical event bytes
            (keys only ever append, so writes touch the last page and a scan is append order)
    addr    32-byte digest -> sequence number (derived: rebuilt from ``events``)
    index   index name, key, sequence number -> digest (derived: rebuilt from ``events``)
    refs    ref name -> digest (movable names; not derived)
    meta    b"format" -> canonical CBOR {"format": 1, "extensions": []}

Writes: ``put`` outside a batch commits at once. Inside ``with ledger.batch():`` events are
encoded and hashed as they are put, but held in memory; the batch writes them in one
transaction when it exits (and drops them if it exits with an exception). Holding them in
memory keeps the write transaction short, so a second process appending at the same time only
waits for the commit itself, and it lets a transaction be replayed when the map is full: the
map is grown and the same transaction run again. A batch that gathers more than
``CHUNK_BYTES`` of new events (or ``CHUNK_EVENTS`` events) commits what it has as one chunk and
goes on; each chunk is atomic, and an exception drops only the chunk not yet committed.
"""

from __future__ import annotations

import enum
import os
import struct
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from hashlib import sha256
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Literal, TypeVar

import lmdb
from blake3 import blake3

from ledger.address import (
    check_ref_name,
    digest_of,
    format_address,
    parse_address,
    resolve_with,
)
from ledger.codec import decode, encode
from ledger.errors import (
    CorruptEventError,
    FormatError,
    LedgerError,
    MissingEventError,
    RefConflictError,
    StoreError,
    UnknownAddressError,
    UnsupportedFormatError,
)
from ledger.event import Event, event_from_trusted

if TYPE_CHECKING:
    from ledger.verify import Problem, VerifyReport

__all__ = [
    "ANY",
    "CHUNK_BYTES",
    "CHUNK_EVENTS",
    "FORMAT",
    "Indexer",
    "Ledger",
    "Snapshot",
    "open_ledger",
]

FORMAT: Final = 1
KNOWN_EXTENSIONS: Final[frozenset[str]] = frozenset()
CHUNK_BYTES: Final = 32 << 20
CHUNK_EVENTS: Final = 20_000
TYPE_INDEX: Final = "type"
STORE_DIR: Final = "ledger"

_DEFAULT_MAP_SIZE = 64 << 20
_DB_NAMES = (b"events", b"addr", b"index", b"refs", b"meta")
_SEQ = struct.Struct(">Q")
_LEN = struct.Struct(">H")
_SCAN_CHUNK = 1024  # records read per read transaction when iterating
_MAX_COMPONENT = 200  # longer index names or keys are stored by their blake3 digest

Indexer = Callable[[str, Event], Iterable[tuple[str, str]]]
"""Given a new event's address and the event, yield ``(index_name, key)`` pairs."""

T = TypeVar("T")


class _Whatever(enum.Enum):
    ANY = "ANY"


ANY: Final = _Whatever.ANY
"""``set_ref``'s default ``expected``: set the ref whatever it holds now."""


def _component(text: str) -> bytes:
    raw = text.encode("utf-8")
    if len(raw) > _MAX_COMPONENT:
        return b"\x01" + blake3(raw).digest()
    return b"\x00" + raw


def index_prefix(name: str, key: str) -> bytes:
    """The ``index`` database key prefix of one (index name, key) pair.

    Each part is length-prefixed so no pair's prefix is a prefix of another's; the sequence
    number of the event follows, so entries under one prefix sort in append order.
    """
    n = _component(name)
    k = _component(key)
    return _LEN.pack(len(n)) + n + _LEN.pack(len(k)) + k


_type_prefixes: dict[str, tuple[bytes]] = {}


def _type_prefix(event_type: str) -> tuple[bytes]:
    """``(index_prefix(TYPE_INDEX, event_type),)``, remembered: there are few event types, and
    sharing one tuple per type spares the garbage collector a container per event."""
    prefix = _type_prefixes.get(event_type)
    if prefix is None:
        if len(_type_prefixes) > 1024:
            _type_prefixes.clear()
        prefix = _type_prefixes[event_type] = (index_prefix(TYPE_INDEX, event_type),)
    return prefix


def index_name_of(entry_key: bytes) -> str:
    """The index name part of an ``index`` database key (a digest for very long names)."""
    (length,) = _LEN.unpack_from(entry_key)
    comp = entry_key[2 : 2 + length]
    if comp[:1] == b"\x01":
        return "#" + comp[1:].hex()
    return comp[1:].decode("utf-8", "replace")


@dataclass(slots=True)
class _RefOp:
    name: bytes
    digest: bytes
    expected: bytes | Literal[_Whatever.ANY] | None


class _Pending:
    """Events and ref changes waiting for a commit, in the order they were made.

    Events are kept as bytes and tuples of bytes in two dicts rather than one object each, so
    a batch of many thousands of events gives the garbage collector nothing new to traverse.
    """

    def __init__(self) -> None:
        self.data: dict[bytes, bytes] = {}  # digest -> canonical bytes
        self.prefixes: dict[bytes, tuple[bytes, ...]] = {}  # digest -> index entry prefixes
        self.size = 0  # bytes of events held
        self.refs: list[_RefOp] = []

    def add(self, digest: bytes, data: bytes, prefixes: tuple[bytes, ...]) -> None:
        if digest not in self.data:
            self.data[digest] = data
            self.prefixes[digest] = prefixes
            self.size += len(data)

    def truncate(self, n_events: int, n_refs: int) -> None:
        """Drop everything added after the first ``n_events`` events and ``n_refs`` refs."""
        for digest in list(self.data)[n_events:]:
            self.size -= len(self.data.pop(digest))
            del self.prefixes[digest]
        del self.refs[n_refs:]

    def __bool__(self) -> bool:
        return bool(self.data or self.refs)


# LMDB must not be opened twice in one process (closing one handle drops the other's locks),
# so environments are shared by path and counted.
_shared_lock = threading.Lock()
_shared: dict[str, tuple[lmdb.Environment, bool, int]] = {}


def _acquire_env(directory: Path, *, readonly: bool, map_size: int) -> lmdb.Environment:
    key = str(directory.resolve())
    with _shared_lock:
        if key in _shared:
            env, env_readonly, count = _shared[key]
            if env_readonly and not readonly:
                raise StoreError(
                    f"the ledger at {directory} is already open read-only in this process"
                )
            _shared[key] = (env, env_readonly, count + 1)
            return env
        try:
            env = lmdb.open(
                key,
                map_size=map_size,
                max_dbs=len(_DB_NAMES) + 2,
                subdir=True,
                readonly=readonly,
                create=not readonly,
                lock=True,
                max_spare_txns=1,  # see "reading events" in Ledger
            )
        except lmdb.Error as exc:
            raise StoreError(f"cannot open the ledger at {directory}: {exc}") from exc
        if not readonly:
            env.reader_check()  # clear reader slots left by processes that died
        _shared[key] = (env, readonly, 1)
        return env


def _release_env(env: lmdb.Environment) -> None:
    with _shared_lock:
        for key, (shared, readonly, count) in list(_shared.items()):
            if shared is env:
                if count > 1:
                    _shared[key] = (shared, readonly, count - 1)
                else:
                    del _shared[key]
                    env.close()
                return


def _format_record() -> bytes:
    return encode({"format": FORMAT, "extensions": []})


def check_format(raw: bytes | None, where: str) -> None:
    """Refuse a format record this version cannot read."""
    if raw is None:
        raise FormatError(f"{where} is not an oloproof ledger: it has no format record")
    try:
        record = decode(raw)
    except LedgerError:
        record = None
    if (
        not isinstance(record, dict)
        or isinstance(record.get("format"), bool)
        or not isinstance(record.get("format"), int)
        or not isinstance(record.get("extensions"), list)
    ):
        raise FormatError(f"{where} has an unreadable format record")
    version = record["format"]
    if version > FORMAT:
        raise UnsupportedFormatError(
            f"ledger format {version} at {where}; this oloproof reads ≤{FORMAT} — upgrade"
        )
    if version < 1:
        raise FormatError(f"{where} declares ledger format {version}, which never existed")
    unknown = sorted(str(e) for e in record["extensions"] if e not in KNOWN_EXTENSIONS)
    if unknown:
        raise UnsupportedFormatError(
            f"ledger at {where} uses extension {', '.join(unknown)}, "
            "which this oloproof does not know — upgrade"
        )


def open_ledger(
    path: str | os.PathLike[str],
    *,
    indexer: Indexer | None = None,
    create: bool = True,
    readonly: bool = False,
    map_size: int | None = None,
) -> Ledger:
    """Open the ledger kept in ``path`` (a project's ``.oloproof/`` directory).

    With ``create`` (the default) a missing ledger is created; otherwise, or when
    ``readonly``, a missing one raises ``StoreError``. ``indexer`` derives the application's
    secondary indexes; pass the same one every time the ledger is written. ``map_size`` is the
    initial LMDB map size in bytes (it grows by itself when full).
    """
    root = Path(path)
    directory = root / STORE_DIR
    if not (directory / "data.mdb").exists():
        if readonly or not create:
            raise StoreError(f"no ledger at {root}: it holds no {STORE_DIR}/data.mdb")
        try:
            directory.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"cannot create a ledger at {root}: {exc.strerror}") from exc
    env = _acquire_env(directory, readonly=readonly, map_size=map_size or _DEFAULT_MAP_SIZE)
    try:
        dbs = _open_databases(env, root, readonly=readonly)
    except BaseException:
        _release_env(env)
        raise
    return Ledger(env, dbs, root, indexer=indexer, readonly=readonly)


def _open_databases(env: lmdb.Environment, root: Path, *, readonly: bool) -> dict[bytes, Any]:
    try:
        with env.begin() as txn:
            names = [key for key, _ in txn.cursor()]
        if b"meta" not in names:
            if names or readonly:
                raise FormatError(f"{root} is not an oloproof ledger: it has no format record")
            with env.begin(write=True) as txn:
                meta = env.open_db(b"meta", txn=txn, create=True)
                if txn.get(b"format", db=meta) is None:
                    txn.put(b"format", _format_record(), db=meta)
                for name in _DB_NAMES:
                    env.open_db(name, txn=txn, create=True)
        meta = env.open_db(b"meta", create=False)
        with env.begin() as txn:
            check_format(txn.get(b"format", db=meta), str(root))
        try:
            return {name: env.open_db(name, create=False) for name in _DB_NAMES}
        except lmdb.NotFoundError as exc:
            raise FormatError(f"the ledger at {root} is missing one of its databases") from exc
    except lmdb.Error as exc:
        raise StoreError(f"cannot read the ledger at {root}: {exc}") from exc


class Snapshot:
    """A consistent read-only view of the raw tables (one LMDB read transaction).

    Used by ``verify``; the application should use ``Ledger``'s methods.
    """

    def __init__(self, ledger: Ledger, txn: Any) -> None:
        self._ledger = ledger
        self._txn = txn

    def records(self) -> Iterator[tuple[bytes, bytes, bytes]]:
        """Every ``(sequence key, recorded digest, event bytes)`` in append order."""
        for key, value in self._txn.cursor(db=self._ledger._events):
            yield key, value[:32], value[32:]

    def record_at(self, seq_key: bytes) -> tuple[bytes, bytes] | None:
        value = self._txn.get(seq_key, db=self._ledger._events)
        return None if value is None else (value[:32], value[32:])

    def addr_get(self, digest: bytes) -> bytes | None:
        result: bytes | None = self._txn.get(digest, db=self._ledger._addr)
        return result

    def addr_entries(self) -> Iterator[tuple[bytes, bytes]]:
        yield from self._txn.cursor(db=self._ledger._addr)

    def index_get(self, key: bytes) -> bytes | None:
        result: bytes | None = self._txn.get(key, db=self._ledger._index)
        return result

    def index_entries(self) -> Iterator[tuple[bytes, bytes]]:
        yield from self._txn.cursor(db=self._ledger._index)

    def refs(self) -> Iterator[tuple[str, bytes]]:
        for name, digest in self._txn.cursor(db=self._ledger._refs):
            yield name.decode("utf-8"), digest

    def exists(self, digest: bytes) -> bool:
        """Whether an event with this digest is stored (its record, not just an addr entry)."""
        seq_key = self.addr_get(digest)
        if seq_key is None:
            return False
        record = self.record_at(seq_key)
        return record is not None and record[0] == digest

    def count_events(self) -> int:
        return self._entries(self._ledger._events)

    def count_addr(self) -> int:
        return self._entries(self._ledger._addr)

    def count_index(self) -> int:
        return self._entries(self._ledger._index)

    def _entries(self, db: Any) -> int:
        entries: int = self._txn.stat(db)["entries"]
        return entries


class Ledger:
    """An open ledger. Use ``open_ledger`` to make one; close it (or use ``with``) when done.

    Several processes may open the same ledger and append at once (LMDB serialises their
    commits). One ``Ledger`` may be shared by threads; a batch belongs to the ``Ledger``, not
    to a thread, so while one is open every thread's writes join it.
    """

    def __init__(
        self,
        env: lmdb.Environment,
        dbs: dict[bytes, Any],
        path: Path,
        *,
        indexer: Indexer | None,
        readonly: bool,
    ) -> None:
        self.path = path
        self.readonly = readonly
        self._env: lmdb.Environment | None = env
        self._events = dbs[b"events"]
        self._addr = dbs[b"addr"]
        self._index = dbs[b"index"]
        self._refs = dbs[b"refs"]
        self._indexer = indexer
        self._lock = threading.RLock()
        self._depth = 0
        self._generation = 0  # counts chunk commits, so a savepoint knows it was overtaken
        self._savepoints: list[tuple[int, int, int]] = []
        self._pending = _Pending()

    # -- lifecycle -------------------------------------------------------------------------

    def close(self) -> None:
        """Close the ledger; an open batch's uncommitted events are dropped."""
        with self._lock:
            if self._env is not None:
                env, self._env = self._env, None
                self._pending = _Pending()
                _release_env(env)

    def __enter__(self) -> Ledger:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self._env is None else ("read-only" if self.readonly else "open")
        return f"<Ledger {self.path} {state}>"

    @property
    def indexer(self) -> Indexer | None:
        return self._indexer

    # -- transactions ----------------------------------------------------------------------

    def _environment(self) -> lmdb.Environment:
        if self._env is None:
            raise StoreError(f"the ledger at {self.path} is closed")
        return self._env

    def _begin(self) -> Any:
        env = self._environment()
        try:
            return env.begin()
        except lmdb.MapResizedError:
            env.set_mapsize(0)  # another process grew the map: adopt its size
            return env.begin()
        except lmdb.Error as exc:
            raise StoreError(f"cannot read the ledger at {self.path}: {exc}") from exc

    @contextmanager
    def snapshot(self) -> Iterator[Snapshot]:
        """A consistent read-only view of the raw tables, for ``verify``."""
        txn = self._begin()
        try:
            yield Snapshot(self, txn)
        except lmdb.Error as exc:
            raise StoreError(f"cannot read the ledger at {self.path}: {exc}") from exc
        finally:
            txn.abort()

    def _write(self, body: Callable[[Any], T]) -> T:
        """Run ``body`` in one write transaction, growing the map and retrying when full."""
        env = self._environment()
        if self.readonly:
            raise StoreError(f"the ledger at {self.path} was opened read-only")
        while True:
            try:
                with env.begin(write=True) as txn:
                    return body(txn)
            except lmdb.MapFullError:
                env.set_mapsize(env.info()["map_size"] * 2)
            except lmdb.MapResizedError:
                env.set_mapsize(0)
            except lmdb.Error as exc:
                raise StoreError(f"cannot write to the ledger at {self.path}: {exc}") from exc

    # -- writing events --------------------------------------------------------------------

    def _prefixes(self, address: str, event: Event) -> tuple[bytes, ...]:
        """The index entry prefixes of ``event``: its type's, then the indexer's, each once."""
        prefixes: tuple[bytes, ...] = _type_prefixes.get(event.type) or _type_prefix(event.type)
        if self._indexer is not None:
            more = []
            for name, key in self._indexer(address, event):
                if name == TYPE_INDEX:
                    raise ValueError(f"the index name {TYPE_INDEX!r} is reserved by the ledger")
                more.append(index_prefix(name, key))
            if more:
                prefixes = tuple(dict.fromkeys((*prefixes, *more)))
        return prefixes

    def put(self, event: Event, *, data: bytes | None = None) -> str:
        """Store ``event`` and return its address; storing an event already there is a no-op.

        ``data``, when given, must be ``event.to_bytes()``: a writer that already encoded the
        event (to learn its address before storing it) saves encoding it twice.
        """
        if data is None:
            data = event.to_bytes()
        digest = sha256(data).digest()
        address = "sha256:" + digest.hex()
        with self._lock:
            if self._depth:
                pending = self._pending
                if digest not in pending.data:
                    pending.add(digest, data, self._prefixes(address, event))
                    if pending.size >= CHUNK_BYTES or len(pending.data) >= CHUNK_EVENTS:
                        self._flush()
                return address
            if self.readonly:
                raise StoreError(f"the ledger at {self.path} was opened read-only")
            if self._committed(digest):
                return address
            one = _Pending()
            one.add(digest, data, self._prefixes(address, event))
            self._commit(one)
        return address

    def _committed(self, digest: bytes) -> bool:
        txn = self._begin()
        try:
            return txn.get(digest, db=self._addr) is not None
        finally:
            txn.abort()

    def _commit(self, pending: _Pending) -> int:
        """Write ``pending`` in one transaction; return how many events were new."""

        def body(txn: Any) -> int:
            cursor = txn.cursor(db=self._events)
            first = _SEQ.unpack(cursor.key())[0] + 1 if cursor.last() else 1
            seq = first
            get, addr_db, prefixes = txn.get, self._addr, pending.prefixes
            # Kept as single bytes (digest + sequence key; entry key + digest) and split as
            # they are written: bytes are not tracked by the garbage collector, tuples are.
            addrs: list[bytes] = []
            entries: list[bytes] = []

            def records() -> Iterator[tuple[bytes, bytes]]:
                nonlocal seq
                for digest, data in pending.data.items():
                    if get(digest, db=addr_db) is not None:
                        continue  # already stored (perhaps by another process meanwhile)
                    seq_key = _SEQ.pack(seq)
                    seq += 1
                    addrs.append(digest + seq_key)
                    for prefix in prefixes[digest]:
                        entries.append(prefix + seq_key + digest)
                    yield seq_key, digest + data

            cursor.putmulti(records(), append=True)
            addrs.sort()
            txn.cursor(db=addr_db).putmulti((a[:32], a[32:]) for a in addrs)
            entries.sort()
            txn.cursor(db=self._index).putmulti((e[:-32], e[-32:]) for e in entries)
            for op in pending.refs:
                current = get(op.name, db=self._refs)
                if op.expected is not ANY and current != op.expected:
                    raise RefConflictError(
                        op.name.decode(), _address_or_none(op.expected), _address_or_none(current)
                    )
                txn.put(op.name, op.digest, db=self._refs)
            return seq - first

        return self._write(body)

    @contextmanager
    def batch(self) -> Iterator[Ledger]:
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

    def _import_verified(
        self,
        events: list[tuple[bytes, bytes, Event]],
        refs: list[tuple[str, str, str | None]],
    ) -> int:
        """Write already-verified ``(digest, bytes, event)`` items and ``(name, address,
        expected)`` refs in one transaction of their own; return how many events were new."""
        with self._lock:
            if self._depth:
                raise StoreError("cannot import an archive inside a batch: import it outside")
            pending = _Pending()
            for digest, data, event in events:
                pending.add(digest, data, self._prefixes(format_address(digest), event))
            for name, address, expected in refs:
                pending.refs.append(
                    _RefOp(
                        check_ref_name(name).encode(),
                        parse_address(address),
                        None if expected is None else parse_address(expected),
                    )
                )
            return self._commit(pending)

    # -- reading events --------------------------------------------------------------------
    #
    # Every read checks the bytes it returns against their address (a sha256 of them), and
    # each call reads in a read transaction begun for it, so it sees every commit made before
    # it began, by this process or another. The lmdb binding keeps one finished read
    # transaction reset in reserve (``max_spare_txns``) and renews it on the next ``begin``,
    # so a fresh snapshot costs about 0.1 µs. Reads of many events (``get_many``,
    # ``lookup_events``, ``events``) share one transaction for each chunk of ``_SCAN_CHUNK``.

    def _records(self, digests: list[bytes]) -> list[bytes | None]:
        """The stored bytes of each digest, checked against it (``None`` when it is not
        stored), all read in one transaction."""
        pending = self._pending.data
        found: list[bytes | None] = []
        txn = self._begin()
        try:
            get, addr_db, events_db = txn.get, self._addr, self._events
            for digest in digests:
                data = pending.get(digest) if pending else None
                if data is None:
                    seq_key = get(digest, db=addr_db)
                    value = None if seq_key is None else get(seq_key, db=events_db)
                    data = None if value is None else _checked(digest, value)
                found.append(data)
        finally:
            txn.abort()
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
        return _decode(address, data)

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
                events.append(_decode(address, data))
        return events

    def has(self, address: str) -> bool:
        """Whether an event with this full address is stored."""
        digest = parse_address(address)
        return digest in self._pending.data or self._committed(digest)

    def __contains__(self, address: object) -> bool:
        return isinstance(address, str) and self.has(address)

    def __len__(self) -> int:
        txn = self._begin()
        try:
            count: int = txn.stat(self._events)["entries"]
            count += sum(1 for d in list(self._pending.data) if txn.get(d, db=self._addr) is None)
        finally:
            txn.abort()
        return count

    def events(self, type: str | None = None) -> Iterator[tuple[str, Event]]:
        """Every ``(address, event)`` in append order, or those of one ``type``.

        Each event is checked against its address as it is read. Events appended while
        iterating may or may not be seen; a batch's pending events come last.
        """
        if type is None:
            return self._checked_events(self._scan_records(), None)
        return self.lookup_events(TYPE_INDEX, type)

    def _checked_events(
        self, records: Iterator[tuple[bytes, bytes]], prefix: bytes | None
    ) -> Iterator[tuple[str, Event]]:
        """``(address, event)`` of each ``(digest, bytes)`` record after checking its hash,
        then the batch's pending events not yet committed (those filed under ``prefix``)."""
        for digest, data in records:
            address = "sha256:" + digest.hex()
            if sha256(data).digest() != digest:
                raise CorruptEventError(address)
            yield address, _decode(address, data)
        for digest, data in self._new_pending(prefix):
            address = format_address(digest)
            yield address, _decode(address, data)

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
        txn = self._begin()
        try:
            get, addr_db = txn.get, self._addr
            return [(digest, data) for digest, data in waiting if get(digest, db=addr_db) is None]
        finally:
            txn.abort()

    def _scan_records(self) -> Iterator[tuple[bytes, bytes]]:
        # Short read transactions, one per chunk, so iterating never pins the database and the
        # caller may write between items.
        start = _SEQ.pack(1)
        while True:
            chunk: list[tuple[bytes, bytes]] = []
            txn = self._begin()
            try:
                cursor = txn.cursor(db=self._events)
                if cursor.set_range(start):
                    for key, value in cursor:
                        chunk.append((key, value))
                        if len(chunk) >= _SCAN_CHUNK:
                            break
            finally:
                txn.abort()
            for _, value in chunk:
                yield value[:32], value[32:]
            if len(chunk) < _SCAN_CHUNK:
                return
            start = _SEQ.pack(_SEQ.unpack(chunk[-1][0])[0] + 1)

    def _scan_index(self, prefix: bytes) -> Iterator[tuple[bytes, bytes]]:
        start = prefix
        while True:
            chunk: list[tuple[bytes, bytes]] = []
            last = b""
            txn = self._begin()
            try:
                cursor = txn.cursor(db=self._index)
                if cursor.set_range(start):
                    for key, digest in cursor:
                        if not key.startswith(prefix):
                            break
                        value = txn.get(key[-8:], db=self._events)
                        if value is not None and value.startswith(digest):  # else stale
                            chunk.append((digest, value[32:]))
                        last = key
                        if len(chunk) >= _SCAN_CHUNK:
                            break
            finally:
                txn.abort()
            yield from chunk
            if len(chunk) < _SCAN_CHUNK:
                return
            start = last + b"\x00"

    # -- resolving text --------------------------------------------------------------------

    def resolve(self, text: str) -> str:
        """Turn a full address, a unique prefix of ≥ 8 hex digits, or a ref name into an address."""
        return resolve_with(
            text,
            exact=lambda d: d in self._pending.data or self._committed(d),
            ref=self.get_ref,
            by_prefix=self._by_prefix,
        )

    def _by_prefix(self, hexpart: str, limit: int) -> list[str]:
        pending = list(self._pending.data)
        found = {format_address(d) for d in pending if d.hex().startswith(hexpart)}
        even = hexpart[: len(hexpart) // 2 * 2]
        txn = self._begin()
        try:
            cursor = txn.cursor(db=self._addr)
            if cursor.set_range(bytes.fromhex(even)):
                for digest in cursor.iternext(keys=True, values=False):
                    hexed = digest.hex()
                    if not hexed.startswith(even) or len(found) >= limit:
                        break
                    if hexed.startswith(hexpart):
                        found.add(format_address(digest))
        finally:
            txn.abort()
        return sorted(found)[:limit]

    # -- refs ------------------------------------------------------------------------------

    def get_ref(self, name: str) -> str | None:
        """The address a ref points at, or ``None`` when no ref has that name."""
        raw = check_ref_name(name).encode()
        for op in reversed(self._pending.refs):
            if op.name == raw:
                return format_address(op.digest)
        txn = self._begin()
        try:
            digest = txn.get(raw, db=self._refs)
        finally:
            txn.abort()
        return None if digest is None else format_address(digest)

    def set_ref(
        self, name: str, address: str, *, expected: str | Literal[_Whatever.ANY] | None = ANY
    ) -> None:
        """Point ref ``name`` at the stored event ``address``.

        With ``expected`` (an address, or ``None`` for "must not exist yet") the change is a
        compare-and-swap: ``RefConflictError`` if the ref holds anything else. Inside a batch
        the ref changes when the batch commits, and the swap is checked again then.
        """
        raw = check_ref_name(name).encode()
        digest = parse_address(address)
        want = expected if expected is ANY or expected is None else parse_address(expected)
        with self._lock:
            if not (digest in self._pending.data or self._committed(digest)):
                raise MissingEventError(address, f"ref {name!r} cannot point at it")
            op = _RefOp(raw, digest, want)
            if self._depth:
                if want is not ANY:
                    current = self.get_ref(name)
                    current_digest = None if current is None else parse_address(current)
                    if current_digest != want:
                        raise RefConflictError(name, _address_or_none(want), current)
                self._pending.refs.append(op)
            else:
                one = _Pending()
                one.refs.append(op)
                self._commit(one)

    def refs(self, prefix: str = "") -> list[tuple[str, str]]:
        """Every ``(name, address)`` ref whose name starts with ``prefix``, sorted by name."""
        found: dict[str, str] = {}
        start = prefix.encode()
        txn = self._begin()
        try:
            cursor = txn.cursor(db=self._refs)
            if cursor.set_range(start) if start else cursor.first():
                for name, digest in cursor:
                    if not name.startswith(start):
                        break
                    found[name.decode()] = format_address(digest)
        finally:
            txn.abort()
        for op in self._pending.refs:
            if op.name.startswith(start):
                found[op.name.decode()] = format_address(op.digest)
        return sorted(found.items())

    # -- indexes ---------------------------------------------------------------------------

    def lookup(self, index: str, key: str) -> list[str]:
        """Addresses of the events filed under ``key`` in ``index``, in append order."""
        prefix = index_prefix(index, key)
        found: list[str] = []
        txn = self._begin()
        try:
            cursor = txn.cursor(db=self._index)
            if cursor.set_range(prefix):
                for entry, digest in cursor:
                    if not entry.startswith(prefix):
                        break
                    found.append(format_address(digest))
        finally:
            txn.abort()
        found.extend(format_address(digest) for digest, _ in self._new_pending(prefix))
        return found

    def lookup_events(self, index: str, key: str) -> Iterator[tuple[str, Event]]:
        """``(address, event)`` of each event filed under ``key`` in ``index``, in append order.

        What ``lookup`` and then ``get`` of each address give, read in one pass: each index
        entry leads straight to its event's record, one read transaction serves a chunk of
        events, and each event is checked against its address. For replaying all the events
        of one key (a run's cases). An index entry whose record no longer matches it is
        skipped (``verify`` reports the index as stale); a batch's pending events come last.
        """
        prefix = index_prefix(index, key)
        return self._checked_events(self._scan_index(prefix), prefix)

    def latest(self, index: str, key: str) -> str | None:
        """The address of the last event filed under ``key`` in ``index``, or ``None``."""
        prefix = index_prefix(index, key)
        waiting = self._new_pending(prefix)
        if waiting:
            return format_address(waiting[-1][0])
        txn = self._begin()
        try:
            last = self._last_entry(txn, prefix)
        finally:
            txn.abort()
        return None if last is None else format_address(last[1])

    def latest_event(self, index: str, key: str) -> tuple[str, Event] | None:
        """``(address, event)`` of the last event filed under ``key`` in ``index``, or ``None``.

        What ``latest`` and then ``get`` give (a cache lookup), in one read transaction that
        goes from the index entry straight to the event's record; the event is checked
        against its address as ``get`` checks it.
        """
        prefix = index_prefix(index, key)
        waiting = self._new_pending(prefix)
        if waiting:
            digest, data = waiting[-1]
            address = format_address(digest)
            return address, _decode(address, data)
        txn = self._begin()
        try:
            last = self._last_entry(txn, prefix)
            if last is None:
                return None
            entry, digest = last
            value = txn.get(entry[-8:], db=self._events)
        finally:
            txn.abort()
        address = format_address(digest)
        if value is None or not value.startswith(digest):
            return address, self.get(address)  # a stale entry: find the event by its address
        return address, _decode(address, _checked(digest, value))

    def _last_entry(self, txn: Any, prefix: bytes) -> tuple[bytes, bytes] | None:
        """The last ``(entry key, digest)`` of the index entries under ``prefix``, if any."""
        cursor = txn.cursor(db=self._index)
        positioned = cursor.set_range(prefix + b"\xff" * 9)  # past every entry under prefix
        if cursor.prev() if positioned else cursor.last():
            entry, digest = cursor.item()
            if entry.startswith(prefix):
                return entry, digest
        return None

    def derive_prefixes(self, address: str, event: Event) -> tuple[bytes, ...]:
        """The index entry prefixes ``put`` files ``event`` under (for verify and rebuild)."""
        return self._prefixes(address, event)

    def rebuild_indexes(self) -> None:
        """Recompute the ``addr`` table and every index from the events alone.

        An event whose bytes no longer hash to its address keeps its ``addr`` entry but is not
        indexed (its content cannot be trusted); ``verify`` reports it.
        """

        def body(txn: Any) -> None:
            txn.drop(self._addr, delete=False)
            txn.drop(self._index, delete=False)
            addrs: list[tuple[bytes, bytes]] = []
            entries: list[tuple[bytes, bytes]] = []
            for seq_key, value in txn.cursor(db=self._events):
                digest, data = value[:32], value[32:]
                addrs.append((digest, seq_key))
                if digest_of(data) != digest:
                    continue
                try:
                    event = event_from_trusted(data)
                except Exception:  # hashes right yet does not decode: verify reports it
                    continue
                for prefix in self._prefixes(format_address(digest), event):
                    entries.append((prefix + seq_key, digest))
            addrs.sort()
            entries.sort()
            txn.cursor(db=self._addr).putmulti(addrs)
            txn.cursor(db=self._index).putmulti(entries)

        with self._lock:
            self._write(body)

    # -- verify ----------------------------------------------------------------------------

    def verify(
        self,
        progress: Callable[[int, int], None] | None = None,
        *,
        extra_checks: Iterable[Callable[[Ledger], Iterable[Problem]]] = (),
    ) -> VerifyReport:
        """Check every event, link, ref and index; see ``ledger.verify``."""
        from ledger.verify import verify_ledger

        return verify_ledger(self, progress=progress, extra_checks=extra_checks)


def _address_or_none(digest: Any) -> str | None:
    return None if digest is None else format_address(digest)


def _checked(digest: bytes, value: bytes) -> bytes:
    """The event bytes of an ``events`` record read for ``digest``, after checking that the
    record is the one of ``digest`` and that its bytes still hash to it."""
    data = value[32:]
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
