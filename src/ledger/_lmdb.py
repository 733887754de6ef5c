"""The LMDB environment: opening and sharing it, transactions, a raw snapshot of its tables.

This is the only module that imports ``lmdb``. The other store modules (``_reads``,
``_indexes``, ``_writes``, ``_refs`` and ``store``) read and write in the transactions that
``_Tables`` begins; nothing else in the package touches LMDB.

``_write`` takes a body to run rather than handing out a transaction: when the map is full it
grows the map and runs the same body again from the start, and likewise when another process
has grown the map. LMDB allows the map to change size only while no transaction is open in the
process, and one environment serves every thread and every ``Ledger`` on its path, so each
transaction passes the environment's ``_Gate`` and a resize waits at it for the others to end.

Opening takes the store's open lock shared before anything else (``ledger._openlock``: a
compaction holds it alone while it replaces the data file), then checks the data file against
its own meta pages (``ledger._datafile``), so a truncated file is refused before LMDB maps it,
and maps it at least at the size its newest commit recorded; opening the databases adopts a
size another process gave the map meanwhile (MDB_MAP_RESIZED) and tries again. Every LMDB
error a read meets becomes a ``LedgerError``: ``DamagedStoreError`` when LMDB found a page
that is not what its tree expects.

A ledger on a file system mounted read-only (a WORM archive, a read-only mount of a CI
artifact, a disc) is opened read-only and without LMDB's lock file (``lock=False``): there
``lock.mdb`` can be neither made nor written, and its reader table is needed only so that a
writer does not reuse pages a reader still reads, while no writer can change the file through
a read-only mount. The caveat: a writer reaching the same file through another, writable mount
sees none of these readers, and a page it reuses may then read as damage that is not in the
file. What such a copy holds should not change while it is read.
"""

from __future__ import annotations

import threading
import time
import weakref
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from hashlib import sha256
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import lmdb

from ledger._datafile import check_data_file
from ledger._failures import write_failure
from ledger._filter import Filter, FilterCell, digest_hash, prefix_hash
from ledger._openlock import release, share
from ledger._pending import _Pending
from ledger._records import DICTIONARY_KEY, ZSTD_MAGIC, Records
from ledger._runs import (
    ADDR_TAG,
    EMPTY_DIRECTORY,
    INDEX_TAG,
    RUNS_KEY,
    Run,
    RunSet,
    base_run,
    read_directory,
)
from ledger.chain import GENESIS, ChainRecord, pack_record, unpack_record
from ledger.codec import decode, encode
from ledger.errors import (
    DamagedIndexesError,
    DamagedStoreError,
    FormatError,
    LedgerError,
    StaleIndexesError,
    StoreError,
)
from ledger.format import (
    _DB_NAMES,
    _SEQ,
    _V1_DB_NAMES,
    BINARY_REFS,
    CHAINLESS_FORMAT,
    COMPACT_INDEX,
    ENTRY_HEAD,
    FORMAT,
    RUN_TABLE_NAMES,
    RUN_TABLES,
    SORTED_RUNS,
    _format_record,
    check_format,
    event_seq,
    extensions_of,
    index_name_of,
    index_prefix,
    legacy_index_prefix,
)

if TYPE_CHECKING:
    from ledger.application import Application

_DEFAULT_MAP_SIZE = 64 << 20

T = TypeVar("T")


# How long a resize waits for transactions open in other threads to end before giving up.
_RESIZE_WAIT_S = 60.0


class _Count:
    """One thread's count of the transactions it has open."""

    __slots__ = ("__weakref__", "n")

    def __init__(self) -> None:
        self.n = 0


class _Gate:
    """Lets an environment's transactions run side by side and a change of its map size run
    alone: a resize waits until no transaction is open, and none begins until it is done.

    Transactions are counted per thread, so beginning one takes no lock (reads are the hot
    path): a thread raises its own count and then looks for a resize; a resize raises its flag
    and then waits for every count to reach zero. Under the GIL one of the two always sees the
    other, and the thread backs off.
    """

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._resizing = False
        self._counts: weakref.WeakSet[_Count] = weakref.WeakSet()  # gone with their threads
        self._mine = threading.local()

    def enter(self) -> None:
        count: _Count | None = getattr(self._mine, "count", None)
        if count is None:
            count = self._mine.count = _Count()
            with self._cond:
                self._counts.add(count)
        count.n += 1
        while self._resizing:
            count.n -= 1
            with self._cond:
                self._cond.notify_all()  # the resize may be waiting for this count
                while self._resizing:
                    self._cond.wait()
            count.n += 1

    def leave(self) -> None:
        self._mine.count.n -= 1
        if self._resizing:
            with self._cond:
                self._cond.notify_all()

    @contextmanager
    def held(self) -> Iterator[None]:
        """``enter`` for the block, ``leave`` after it."""
        self.enter()
        try:
            yield
        finally:
            self.leave()

    def resize(self, env: lmdb.Environment, *, grow: bool, where: Path) -> None:
        """Double the map (``grow``), or adopt the size another process gave it."""
        mine: _Count | None = getattr(self._mine, "count", None)
        if mine is not None and mine.n:  # waiting for ourselves would never end
            raise StoreError(
                f"the ledger at {where} needs a larger map, which cannot be set while this "
                "thread holds a read transaction (a snapshot) open"
            )
        with self._cond:
            while self._resizing:
                self._cond.wait()
            self._resizing = True
            try:
                deadline = time.monotonic() + _RESIZE_WAIT_S
                while any(count.n for count in list(self._counts)):
                    left = deadline - time.monotonic()
                    if left <= 0:
                        raise StoreError(
                            f"the ledger at {where} needs a larger map, which cannot be set "
                            "while a transaction stays open in another thread"
                        )
                    self._cond.wait(min(left, 0.05))
                env.set_mapsize(env.info()["map_size"] * 2 if grow else 0)
            finally:
                self._resizing = False
                self._cond.notify_all()


# LMDB must not be opened twice in one process (closing one handle drops the other's locks),
# so environments are shared by path and counted, each with its gate.
_shared_lock = threading.Lock()
_shared: dict[str, tuple[lmdb.Environment, bool, int, _Gate]] = {}


def _gate_of(env: lmdb.Environment) -> _Gate:
    with _shared_lock:
        return next(gate for shared, _, _, gate in _shared.values() if shared is env)


LMDB_ERROR = lmdb.Error
"""For the store's hot read paths, which catch it inline (``_error`` turns it into a
``LedgerError``): a ``with`` block costs them a measurable share."""

# LMDB's errors that mean a page is not what the B-tree expects: the file is damaged.
_DAMAGE = (lmdb.CorruptedError, lmdb.PageNotFoundError, lmdb.InvalidError, lmdb.PanicError)


# What else LMDB cannot say while the ledger opens a file whose header pages were checked,
# unless a table's record was damaged: it looks up only the tables its main table lists (a
# flipped flag makes the lookup miss, a page past the recorded last one fails the transaction).
_DAMAGE_WHEN_OPENING = (lmdb.NotFoundError, lmdb.BadTxnError, lmdb.IncompatibleError)


def _error(exc: lmdb.Error, doing: str, where: Path, *, opening: bool = False) -> LedgerError:
    """The ``LedgerError`` for an LMDB error met while ``doing`` (\"read\", \"write to\");
    ``opening``: while the ledger opens its tables."""
    said = str(exc).split(": ", 1)[-1]  # drop the C function's name
    if isinstance(exc, _DAMAGE) or (opening and isinstance(exc, _DAMAGE_WHEN_OPENING)):
        return DamagedStoreError(
            f"the ledger at {where} is damaged below its events: LMDB says {said!r}"
        )
    return StoreError(f"cannot {doing} the ledger at {where}: {said}")


def _acquire_env(
    directory: Path, *, readonly: bool, map_size: int, lock: bool = True
) -> lmdb.Environment:
    """The environment in ``directory``, shared with the other openings in this process;
    ``lock=False`` only for a read-only one on a read-only file system (see the module)."""
    resolved = directory.resolve()
    key = str(resolved)
    with _shared_lock:
        # Before the file is looked at: a compaction may be about to replace it.
        share(resolved, where=directory.parent)
        try:
            return _acquire_locked(directory, key, readonly=readonly, map_size=map_size, lock=lock)
        except BaseException:
            release(resolved)
            raise


def _acquire_locked(
    directory: Path, key: str, *, readonly: bool, map_size: int, lock: bool
) -> lmdb.Environment:
    """``_acquire_env`` once the open lock is held (``ledger._openlock``)."""
    if key in _shared:
        env, env_readonly, count, gate = _shared[key]
        if env_readonly and not readonly:
            raise StoreError(f"the ledger at {directory} is already open read-only in this process")
        _shared[key] = (env, env_readonly, count + 1, gate)
        return env
    data = directory / "data.mdb"
    if data.exists():
        # Look before LMDB maps it, and map it at least as large as its last commit did.
        map_size = max(map_size, check_data_file(data).map_size)
    try:
        env = lmdb.open(
            key,
            map_size=map_size,
            max_dbs=len(_DB_NAMES) + RUN_TABLES + 2,
            subdir=True,
            readonly=readonly,
            create=not readonly,
            lock=lock,
            max_spare_txns=1,  # see ledger._reads
        )
    except lmdb.Error as exc:
        raise StoreError(f"cannot open the ledger at {directory}: {exc}") from exc
    if not readonly:
        env.reader_check()  # clear reader slots left by processes that died
    _shared[key] = (env, readonly, 1, _Gate())
    return env


def _shares(env: lmdb.Environment) -> bool:
    """Whether more than one ``Ledger`` in this process has ``env`` open."""
    with _shared_lock:
        return any(shared is env and count > 1 for shared, _, count, _ in _shared.values())


def _release_env(env: lmdb.Environment) -> None:
    with _shared_lock:
        for key, (shared, readonly, count, gate) in list(_shared.items()):
            if shared is env:
                if count > 1:
                    _shared[key] = (shared, readonly, count - 1, gate)
                else:
                    del _shared[key]
                    env.close()
                release(Path(key))
                return


_OPEN_TRIES = 100  # another process growing the map again and again is still making progress


def _open_databases(
    env: lmdb.Environment, root: Path, *, readonly: bool, name: str = "ledger"
) -> dict[bytes, Any]:
    """The named databases (``chain`` is None in a format-1 ledger opened read-only),
    creating them in a new ledger and migrating a format-1 ledger opened for writing."""
    gate = _gate_of(env)
    for _ in range(_OPEN_TRIES):
        try:
            with gate.held():
                return _open_once(env, root, readonly=readonly, name=name)
        except lmdb.MapResizedError:
            pass  # another process grew the map after this one mapped it: adopt its size
        except lmdb.MapFullError:
            gate.resize(env, grow=True, where=root)  # no room for the new tables
            continue
        except lmdb.Error as exc:
            raise _error(exc, "read", root, opening=True) from exc
        gate.resize(env, grow=False, where=root)
    raise StoreError(f"cannot open the ledger at {root}: its map kept growing while it was opened")


def _open_once(env: lmdb.Environment, root: Path, *, readonly: bool, name: str) -> dict[bytes, Any]:
    with env.begin() as txn:
        names = [key for key, _ in txn.cursor()]
    if b"meta" not in names:
        if names or readonly:
            raise FormatError(f"{root} is not a ledger: it has no format record")
        with env.begin(write=True) as txn:
            meta = env.open_db(b"meta", txn=txn, create=True)
            if txn.get(b"format", db=meta) is None:  # else another process made it meanwhile
                txn.put(b"format", _format_record(), db=meta)
                txn.put(RUNS_KEY, EMPTY_DIRECTORY, db=meta)
                for table in (*_DB_NAMES, *RUN_TABLE_NAMES):
                    env.open_db(table, txn=txn, create=True)
        with env.begin() as txn:
            names = [key for key, _ in txn.cursor()]
    meta = _open_tables(env, (b"meta",))[b"meta"]
    with env.begin() as txn:
        raw = txn.get(b"format", db=meta)
        version = check_format(raw, str(root), name)
    if version == CHAINLESS_FORMAT and not readonly:
        _migrate(env, meta, root, name)
        version = FORMAT
    if not readonly:
        _declare_binary_refs(env, meta)
        missing = [table for table in RUN_TABLE_NAMES if table not in names]
        if missing:  # a ledger written before runs: refiled in them (``keep_indexes_current``)
            with env.begin(write=True) as txn:
                for table in missing:
                    env.open_db(table, txn=txn, create=True)
            names.extend(missing)
    tables = _DB_NAMES if version == FORMAT else _V1_DB_NAMES
    if SORTED_RUNS in extensions_of(raw or b""):
        tables = (*tables, *RUN_TABLE_NAMES)
    else:  # read in the first layout, or about to be refiled: its run tables, if made
        tables = (*tables, *(table for table in RUN_TABLE_NAMES if table in names))
    try:
        dbs = _open_tables(env, tables)
    except lmdb.NotFoundError as exc:
        raise FormatError(f"the ledger at {root} is missing one of its databases") from exc
    dbs.setdefault(b"chain", None)
    return dbs


def _open_tables(env: lmdb.Environment, tables: Iterable[bytes]) -> dict[bytes, Any]:
    """Handles of existing tables. A writable environment opens them in a write transaction
    begun here: py-lmdb would begin its own holding the GIL, and so wait for a commit running
    on another thread of this process while that commit waits for the GIL."""
    if env.flags()["readonly"]:
        return {table: env.open_db(table, create=False) for table in tables}
    with env.begin(write=True) as txn:
        return {table: env.open_db(table, txn=txn, create=False) for table in tables}


def _declare_binary_refs(env: lmdb.Environment, meta: Any) -> None:
    """Have the format record of a ledger opened for writing declare ``binary-refs`` before
    anything is written that spells refs so (a ledger written before holds only text refs)."""
    with env.begin() as txn:
        if BINARY_REFS in extensions_of(txn.get(b"format", db=meta) or b""):
            return
    with env.begin(write=True) as txn:
        _declare(txn, meta, BINARY_REFS)  # a no-op if another process declared it meanwhile


def _declare(txn: Any, meta_db: Any, extension: str) -> None:
    """Have the format record declare ``extension``, in the write transaction ``txn`` that
    first writes what it names (a version that does not know it then refuses the ledger)."""
    record = decode(txn.get(b"format", db=meta_db))
    if extension not in record["extensions"]:
        record["extensions"] = sorted({*record["extensions"], extension})
        txn.put(b"format", encode(record), db=meta_db)


def _migrate(env: lmdb.Environment, meta: Any, root: Path, name: str) -> None:
    """Give a format-1 ledger its chain, in one transaction: the first commit hashes every
    event it holds (``ledger.chain``), and the format record says 2."""
    with env.begin(write=True) as txn:
        if check_format(txn.get(b"format", db=meta), str(root), name) != CHAINLESS_FORMAT:
            return  # another process migrated it meanwhile
        events = env.open_db(b"events", txn=txn, create=False)
        chain = env.open_db(b"chain", txn=txn, create=True)
        head = sha256(GENESIS)
        count = last = 0
        for key, value in txn.cursor(db=events):
            head.update(value[:32])
            count += 1
            last = _SEQ.unpack(key)[0]
        if count:
            txn.put(_SEQ.pack(1), pack_record(head.digest(), 1, last), db=chain)
        txn.put(b"migrated", encode({"from": CHAINLESS_FORMAT, "events": count}), db=meta)
        # Its index keeps the first layout until it is refiled (``keep_indexes_current``).
        txn.put(b"format", encode({"format": FORMAT, "extensions": []}), db=meta)


class Snapshot:
    """A consistent read-only view of the raw tables (one LMDB read transaction).

    Used by ``verify`` and archives; the application should use ``Ledger``'s methods.
    """

    def __init__(self, ledger: _Tables, txn: Any) -> None:
        self._ledger = ledger
        self._txn = txn
        self._runs: RunSet | None = None

    def records(self, start: int = 1) -> Iterator[tuple[bytes, bytes, bytes]]:
        """Every ``(sequence key, recorded digest, event bytes)`` from ``start``, in order."""
        cursor = self._txn.cursor(db=self._ledger._events)
        if cursor.set_range(_SEQ.pack(start)):
            data = self._ledger._data
            for key, value in cursor:
                event_seq(key, self._ledger.path)
                yield key, value[:32], data(value[32:], self._txn)

    def seq_keys(self) -> Iterator[bytes]:
        """The sequence key of every event record, in order (the records are not read)."""
        for key in self._txn.cursor(db=self._ledger._events).iternext(keys=True, values=False):
            event_seq(key, self._ledger.path)
            yield key

    def record_at(self, seq_key: bytes) -> tuple[bytes, bytes] | None:
        if len(seq_key) != 8:  # an addr entry no write made: verify counts it stale
            return None
        value = self._txn.get(seq_key, db=self._ledger._events)
        return None if value is None else (value[:32], self._ledger._data(value[32:], self._txn))

    def last_seq(self) -> int:
        cursor = self._txn.cursor(db=self._ledger._events)
        return event_seq(cursor.key(), self._ledger.path) if cursor.last() else 0

    def runs(self) -> RunSet:
        """The runs that hold the address and index entries (``ledger._runs``);
        ``DamagedIndexesError`` when their directory cannot be read."""
        if self._runs is None:
            self._runs = self._ledger._run_set(self._txn)
        return self._runs

    def addr_get(self, digest: bytes) -> bytes | None:
        """The sequence key the address entries file ``digest`` under, or ``None``."""
        return self.runs().seq_of(self._txn, digest)

    def addr_at(self, seq_key: bytes, digest: bytes) -> bool:
        """Whether the run that covers ``seq_key`` files ``digest`` under it, where a lookup
        finds it (its filter holds the digest)."""
        run = self.runs().covering(_SEQ.unpack(seq_key)[0])
        if run is None or not run.may_hold(self._txn, digest_hash(digest)):
            return False
        return run.addr(self._txn, digest) == seq_key

    def index_at(self, entry_key: bytes) -> bytes | None:
        """The value of the index entry ``entry_key`` (prefix + sequence key) in the run that
        covers its event, where a lookup finds it; else ``None``."""
        run = self.runs().covering(_SEQ.unpack(entry_key[-8:])[0])
        if run is None or not run.may_hold(self._txn, prefix_hash(entry_key[:-8])):
            return None
        return run.index_at(self._txn, entry_key)

    def run_items(self, run: Run) -> Iterator[tuple[bytes, bytes]]:
        """Every ``(key, value)`` ``run`` holds, in order: its address entries (tag
        ``ADDR_TAG``), its index records (``INDEX_TAG``), its filter and anything else its
        table holds. The first layout's tables are given with those tags put in front."""
        if run.table >= 0:
            yield from self._txn.cursor(db=run.index_db)
            return
        for key, value in self._txn.cursor(db=run.addr_db):
            yield ADDR_TAG + key, value
        for key, value in self._txn.cursor(db=run.index_db):
            yield INDEX_TAG + key, value

    def filter_of(self, run: Run) -> Filter | None:
        """``run``'s filter, or ``None`` when it has none that can be read."""
        return None if run.cell is None else run.cell.of(self._txn)

    def unused_run_tables(self) -> Iterator[tuple[int, int]]:
        """``(table, entries)`` of each run table that no run (nor the merge under way) uses
        and yet holds entries."""
        used = self.runs().tables()
        for table, db in enumerate(self._ledger._run_dbs):
            if table not in used:
                entries: int = self._txn.stat(db)["entries"]
                if entries:
                    yield table, entries

    def index_prefix(self, name: str, key: str) -> bytes:
        """The entry prefix of ``(name, key)`` in the ledger's index layout."""
        return self._ledger._prefix(name, key)

    def entry_value(self, digest: bytes) -> bytes:
        """The value an index entry filing the event of ``digest`` holds."""
        return self._ledger._entry_value(digest)

    def index_name(self, entry_key: bytes) -> str:
        """The index name an entry key (or prefix) files under."""
        return index_name_of(entry_key, legacy=self._ledger._legacy_index)

    def index_entries(self, prefix: bytes) -> Iterator[tuple[bytes, bytes]]:
        """``(entry key, digest head)`` of the index entries under ``prefix``, in append
        order."""
        return self.runs().entries(self._txn, prefix)

    def count_index(self) -> int:
        """How many index entries the runs hold."""
        return sum(1 for run in self.runs().runs for _ in run.scan(self._txn, b""))

    def refs(self) -> Iterator[tuple[str, bytes]]:
        """Every ``(name, digest)`` ref; a name that is not UTF-8 comes back with its bad
        bytes escaped (``verify`` reports it)."""
        for name, digest in self._txn.cursor(db=self._ledger._refs):
            yield name.decode("utf-8", "backslashreplace"), digest

    def ref_get(self, name: str) -> bytes | None:
        """The digest ref ``name`` points at, or None (also for text that cannot be a name)."""
        try:
            result: bytes | None = self._txn.get(name.encode("utf-8"), db=self._ledger._refs)
        except (UnicodeEncodeError, lmdb.BadValsizeError):
            return None
        return result

    def has_chain(self) -> bool:
        """Whether the ledger has a chain table (a format-1 ledger opened read-only has not)."""
        return self._ledger._chain is not None

    def chain_entries(self) -> Iterator[tuple[bytes, bytes]]:
        """The raw ``(key, value)`` entries of the chain table, in commit order."""
        if self._ledger._chain is not None:
            yield from self._txn.cursor(db=self._ledger._chain)

    def chain(self) -> Iterator[ChainRecord]:
        """The chain's records in commit order. One in a wrong shape (a flipped bit in its
        node's key or value size) is damage to the file: ``DamagedStoreError``, where
        ``verify``, which reads the raw entries, names it a broken chain."""
        after = 0
        for key, value in self.chain_entries():
            try:
                record = unpack_record(key, value)
            except ValueError as exc:
                raise DamagedStoreError(
                    f"the ledger at {self._ledger.path} is damaged below its events: the record "
                    f"after commit {after} of its chain is not in shape ({exc})"
                ) from exc
            after = record.commit
            yield record

    def meta(self, key: bytes) -> bytes | None:
        result: bytes | None = self._txn.get(key, db=self._ledger._meta)
        return result

    def exists(self, digest: bytes) -> bool:
        """Whether an event with this digest is stored (its record, not just an addr entry)."""
        seq_key = self.addr_get(digest)
        if seq_key is None or len(seq_key) != 8:
            return False
        value = self._txn.get(seq_key, db=self._ledger._events)  # not unpacked: only its digest
        return value is not None and value[:32] == digest

    def count_events(self) -> int:
        """How many event records there are, counted: LMDB's own count, in the table's record,
        is what a damaged page makes it (a compaction would record and print it)."""
        return sum(1 for _ in self.seq_keys())


class _Reading:
    """``_Tables._reading``: a class rather than a generator, as it is on every read path."""

    __slots__ = ("_tables", "_txn")

    def __init__(self, tables: _Tables) -> None:
        self._tables = tables

    def __enter__(self) -> Any:
        self._txn = self._tables._begin()
        return self._txn

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, _: Any) -> None:
        self._tables._end(self._txn)
        if isinstance(exc, lmdb.Error):
            raise _error(exc, "read", self._tables.path) from exc


class _Tables:
    """An open ledger's state, and the transactions every part of ``Ledger`` works in.

    ``Ledger`` (``ledger.store``) is built on it; see there for how the parts stack.
    """

    def __init__(
        self,
        env: lmdb.Environment,
        dbs: dict[bytes, Any],
        path: Path,
        *,
        app: Application,
        readonly: bool,
        media_read_only: bool = False,
    ) -> None:
        self.path = path
        self.readonly = readonly
        self.media_read_only = media_read_only  # on a file system mounted read-only
        self.app = app
        self._env: lmdb.Environment | None = env
        self._gate = _gate_of(env)
        self._events = dbs[b"events"]
        self._addr = dbs[b"addr"]
        self._index = dbs[b"index"]
        self._run_dbs = tuple(dbs[name] for name in RUN_TABLE_NAMES if name in dbs)
        self._refs = dbs[b"refs"]
        self._chain = dbs[b"chain"]
        self._meta = dbs[b"meta"]
        self._indexer = app.indexer
        self._upcast = app.upcast
        self._expand = app.expand
        self._lock = threading.RLock()
        self._depth = 0
        self._generation = 0  # counts chunk commits, so a savepoint knows it was overtaken
        self._savepoints: list[tuple[int, int, int]] = []
        self._pending = _Pending()
        with self._reading() as txn:
            self._packing = Records(self._stored_dictionary(txn))
            # Only ever change from True to False, and _base to None: ``rebuild_indexes``
            # refiles the entries.
            extensions = extensions_of(txn.get(b"format", db=self._meta) or b"")
            self._legacy_index = COMPACT_INDEX not in extensions
            self._base: RunSet | None = None
            if SORTED_RUNS not in extensions:
                self._base = RunSet((base_run(self._addr, self._index),), 1, None)
        # The run directory last read, and the filters of its runs (see ``_run_set``).
        self._last_runs: RunSet | None = None
        self._runs_at: tuple[int, RunSet] | None = None  # a read snapshot's id, its runs
        self._cells: dict[tuple[int, int, int, int, int], FilterCell] = {}

    def _prefix(self, name: str, key: str) -> bytes:
        """The index entry prefix of ``(name, key)`` in this ledger's layout."""
        if self._legacy_index:
            return legacy_index_prefix(name, key)
        return index_prefix(name, key)

    def _check_layout(self, txn: Any) -> None:
        """Stop a process reading entries in a first layout once another process has refiled
        them (``rebuild_indexes``): its lookups would find nothing, silently."""
        if self._base is not None:
            extensions = extensions_of(txn.get(b"format", db=self._meta) or b"")
            if SORTED_RUNS in extensions or (self._legacy_index and COMPACT_INDEX in extensions):
                raise StaleIndexesError(
                    f"the indexes of the ledger at {self.path} were refiled by another process "
                    "after this one opened it; open it again to read them"
                )

    def _run_set(self, txn: Any, *, write: bool = False) -> RunSet:
        """The runs holding the address and index entries in ``txn``'s snapshot: read from
        its directory record, each run's filter (read when first needed) kept for as long as
        the run is listed."""
        base = self._base
        if base is not None:
            self._check_layout(txn)
            return base
        # A read transaction's id names its snapshot: the same id, the same runs. A write
        # transaction's is the id its commit will have, so it is never taken from or kept.
        at = self._runs_at
        snapshot = None if write else txn.id()
        if at is not None and at[0] == snapshot:
            return at[1]
        raw = txn.get(RUNS_KEY, db=self._meta)
        last = self._last_runs
        if last is not None and last.raw == raw:
            if snapshot is not None:
                self._runs_at = (snapshot, last)
            return last
        try:
            next_ident, rows, merging = read_directory(raw)
        except FormatError as exc:
            raise DamagedIndexesError(
                f"the indexes of the ledger at {self.path} cannot be read: {exc}"
            ) from None
        cells = self._cells
        kept: dict[tuple[int, int, int, int, int], FilterCell] = {}
        runs = []
        for row in rows:
            db = self._run_dbs[row[1]]
            cell = kept[row] = cells.get(row) or FilterCell(db)
            runs.append(Run(*row, db, db, cell=cell))
        found = RunSet(runs, next_ident, raw, merging)
        self._cells, self._last_runs = kept, found
        if snapshot is not None:
            self._runs_at = (snapshot, found)
        return found

    def _adopt_runs(self, runs: RunSet) -> None:
        """Remember ``runs``, the directory a commit of this process wrote, and the filters it
        made (called once the commit succeeded)."""
        self._cells = {
            (r.ident, r.table, r.first, r.end, r.entries): r.cell
            for r in runs.runs
            if r.cell is not None
        }
        self._last_runs = runs

    def _entry_value(self, digest: bytes) -> bytes:
        """The value of an index entry filing the event of ``digest``, in this layout."""
        return digest if self._legacy_index else digest[:ENTRY_HEAD]

    def _stored_dictionary(self, txn: Any) -> bytes | None:
        """The ledger's zstd dictionary (read in ``txn``, or in a read transaction of its
        own), or ``None`` while it has none."""
        if txn is None:
            with self._reading() as txn:
                return self._stored_dictionary(txn)
        found = txn.get(DICTIONARY_KEY, db=self._meta)
        return None if found is None else bytes(found)

    def _data(self, stored: bytes, txn: Any = None) -> bytes:
        """The event bytes of the part of an ``events`` record after its digest (see
        ``ledger._records``); ``txn`` is the transaction the record was read in, if open."""
        if stored[:4] != ZSTD_MAGIC:
            return stored
        return self._packing.unpack(stored, lambda: self._stored_dictionary(txn))

    # -- transactions ----------------------------------------------------------------------

    def _environment(self) -> lmdb.Environment:
        if self._env is None:
            raise StoreError(f"the ledger at {self.path} is closed")
        return self._env

    def _begin(self) -> Any:
        """A read transaction; end it with ``_end``."""
        env = self._environment()
        try:
            try:
                return self._enter_and_begin(env)
            except lmdb.MapResizedError:  # another process grew the map: adopt its size
                self._gate.resize(env, grow=False, where=self.path)
                return self._enter_and_begin(env)
        except lmdb.Error as exc:
            raise _error(exc, "read", self.path) from exc

    def _enter_and_begin(self, env: lmdb.Environment) -> Any:
        self._gate.enter()
        try:
            return env.begin()
        except BaseException:
            self._gate.leave()
            raise

    def _end(self, txn: Any) -> None:
        txn.abort()
        self._gate.leave()

    def _reading(self) -> _Reading:
        """A read transaction for a ``with`` block; LMDB's errors in it become
        ``LedgerError``s."""
        return _Reading(self)

    @contextmanager
    def snapshot(self) -> Iterator[Snapshot]:
        """A consistent read-only view of the raw tables, for ``verify`` and archives."""
        with self._reading() as txn:
            yield Snapshot(self, txn)

    def _write(self, body: Callable[[Any], T]) -> T:
        """Run ``body`` in one write transaction, growing the map and retrying when full."""
        env = self._environment()
        if self.readonly:
            raise StoreError(f"the ledger at {self.path} was opened read-only")
        while True:
            try:
                with self._gate.held(), env.begin(write=True) as txn:
                    return body(txn)
            except lmdb.MapFullError:
                grow = True
            except lmdb.MapResizedError:
                grow = False
            except lmdb.Error as exc:
                if isinstance(exc, _DAMAGE):
                    raise _error(exc, "write to", self.path) from exc
                # A full disk or a file size limit, said in plain words where it can be seen.
                data_file = Path(env.path()) / "data.mdb"
                detail = str(exc).split(": ", 1)[-1]
                raise StoreError(write_failure(self.path, data_file, detail)) from exc
            self._gate.resize(env, grow=grow, where=self.path)

    def _committed(self, digest: bytes) -> bool:
        txn = self._begin()  # not _reading(): this is has(), on every write's path
        try:
            return self._run_set(txn).seq_of(txn, digest) is not None
        except lmdb.Error as exc:
            raise _error(exc, "read", self.path) from exc
        finally:
            self._end(txn)


class DigestMap:
    """Digests, each with a few bytes of its own (empty for a set), that keep memory flat:
    held in memory up to ``limit`` members, then in a scratch LMDB file of its own (in a
    temporary folder, removed by ``close``).

    For streaming through an archive, which must know which events it holds, and where, without
    holding them; the scratch file is never part of a ledger.
    """

    # Members written to the scratch file a transaction at a time, once it is in use. LMDB
    # copies each page a transaction changes into memory it keeps for later transactions, and
    # random digests change about a page each: 8,192 a transaction held some 25 MB more at
    # 450,000 members; 1,024 keeps it to a few MB, flat, for about a tenth more time.
    _FLUSH = 1024

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self._memory: dict[bytes, bytes] = {}
        self._scratch: tuple[lmdb.Environment, str] | None = None
        self._count = 0

    def add(self, digest: bytes, value: bytes = b"") -> None:
        """Keep ``digest`` (with ``value``); one already kept keeps its first value."""
        if digest in self:
            return
        self._count += 1
        self._memory[digest] = value
        if len(self._memory) >= (self._FLUSH if self._scratch else self._limit):
            self._spill()

    def get(self, digest: bytes) -> bytes | None:
        """The value kept with ``digest``, or None when it is not kept."""
        found = self._memory.get(digest)
        if found is not None or self._scratch is None:
            return found
        with self._scratch[0].begin() as txn:
            value: bytes | None = txn.get(digest)
            return value

    def __contains__(self, digest: object) -> bool:
        return isinstance(digest, bytes) and self.get(digest) is not None

    def __len__(self) -> int:
        return self._count

    def __iter__(self) -> Iterator[bytes]:
        if self._scratch is not None:
            with self._scratch[0].begin() as txn:
                yield from txn.cursor().iternext(keys=True, values=False)
        yield from list(self._memory)

    def starting_with(self, hexpart: str) -> list[bytes]:
        """The digests kept whose hex begins with ``hexpart``, sorted."""
        low = bytes.fromhex(hexpart[: len(hexpart) // 2 * 2])
        found = [d for d in self._memory if d.hex().startswith(hexpart)]
        if self._scratch is not None:
            with self._scratch[0].begin() as txn:
                cursor = txn.cursor()
                if cursor.set_range(low):
                    for digest in cursor.iternext(keys=True, values=False):
                        if not digest.startswith(low):
                            break
                        if digest.hex().startswith(hexpart):
                            found.append(digest)
        return sorted(found)

    def _spill(self) -> None:
        import tempfile

        if self._scratch is None:
            folder = tempfile.mkdtemp(prefix="ledger-digests-")
            env = lmdb.open(folder, map_size=1 << 40, sync=False, metasync=False, lock=False)
            self._scratch = (env, folder)
        with self._scratch[0].begin(write=True) as txn:
            txn.cursor().putmulti(sorted(self._memory.items()))
        self._memory = {}

    def close(self) -> None:
        import shutil

        if self._scratch is not None:
            env, folder = self._scratch
            self._scratch = None
            env.close()
            shutil.rmtree(folder, ignore_errors=True)
        self._memory = {}

    def __enter__(self) -> DigestMap:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def other_processes(env: lmdb.Environment) -> list[int]:
    """Process ids, other than this one, that LMDB's reader table lists for ``env`` and that
    are still alive: the processes that have the ledger open (each holds a reader slot from
    its first read on)."""
    import os

    found: set[int] = set()
    for line in env.readers().splitlines()[1:]:
        fields = line.split()
        if fields and fields[0].isdigit():
            found.add(int(fields[0]))
    found.discard(os.getpid())
    alive = []
    for pid in sorted(found):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            continue
        except PermissionError:
            pass  # alive, but another user's
        alive.append(pid)
    return alive
