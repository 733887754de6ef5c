"""The LMDB environment: opening and sharing it, transactions, a raw snapshot of its tables.

This is the only module that imports ``lmdb``. The other store modules (``_reads``,
``_indexes``, ``_writes``, ``_refs`` and ``store``) read and write in the transactions that
``_Tables`` begins; nothing else in the package touches LMDB.

``_write`` takes a body to run rather than handing out a transaction: when the map is full it
grows the map and runs the same body again from the start, and likewise when another process
has grown the map. LMDB allows the map to change size only while no transaction is open in the
process, and one environment serves every thread and every ``Ledger`` on its path, so each
transaction passes the environment's ``_Gate`` and a resize waits at it for the others to end.
"""

from __future__ import annotations

import threading
import time
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import lmdb

from ledger._failures import write_failure
from ledger._pending import _Pending
from ledger.errors import FormatError, StoreError
from ledger.format import _DB_NAMES, _format_record, check_format

if TYPE_CHECKING:
    from ledger._indexes import Indexer

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


def _acquire_env(directory: Path, *, readonly: bool, map_size: int) -> lmdb.Environment:
    key = str(directory.resolve())
    with _shared_lock:
        if key in _shared:
            env, env_readonly, count, gate = _shared[key]
            if env_readonly and not readonly:
                raise StoreError(
                    f"the ledger at {directory} is already open read-only in this process"
                )
            _shared[key] = (env, env_readonly, count + 1, gate)
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
                max_spare_txns=1,  # see ledger._reads
            )
        except lmdb.Error as exc:
            raise StoreError(f"cannot open the ledger at {directory}: {exc}") from exc
        if not readonly:
            env.reader_check()  # clear reader slots left by processes that died
        _shared[key] = (env, readonly, 1, _Gate())
        return env


def _release_env(env: lmdb.Environment) -> None:
    with _shared_lock:
        for key, (shared, readonly, count, gate) in list(_shared.items()):
            if shared is env:
                if count > 1:
                    _shared[key] = (shared, readonly, count - 1, gate)
                else:
                    del _shared[key]
                    env.close()
                return


def _open_databases(env: lmdb.Environment, root: Path, *, readonly: bool) -> dict[bytes, Any]:
    try:
        with _gate_of(env).held():
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

    def __init__(self, ledger: _Tables, txn: Any) -> None:
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
        indexer: Indexer | None,
        readonly: bool,
    ) -> None:
        self.path = path
        self.readonly = readonly
        self._env: lmdb.Environment | None = env
        self._gate = _gate_of(env)
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
            raise StoreError(f"cannot read the ledger at {self.path}: {exc}") from exc

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

    @contextmanager
    def snapshot(self) -> Iterator[Snapshot]:
        """A consistent read-only view of the raw tables, for ``verify``."""
        txn = self._begin()
        try:
            yield Snapshot(self, txn)
        except lmdb.Error as exc:
            raise StoreError(f"cannot read the ledger at {self.path}: {exc}") from exc
        finally:
            self._end(txn)

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
                data_file = Path(env.path()) / "data.mdb"
                raise StoreError(write_failure(self.path, data_file, str(exc))) from exc
            self._gate.resize(env, grow=grow, where=self.path)

    def _committed(self, digest: bytes) -> bool:
        txn = self._begin()
        try:
            return txn.get(digest, db=self._addr) is not None
        finally:
            self._end(txn)
