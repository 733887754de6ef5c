"""The LMDB environment: opening and sharing it, transactions, a raw snapshot of its tables.

This is the only module that imports ``lmdb``. The other store modules (``_reads``,
``_indexes``, ``_writes``, ``_refs`` and ``store``) read and write in the transactions that
``_Tables`` begins; nothing else in the package touches LMDB.

``_write`` takes a body to run rather than handing out a transaction: when the map is full it
grows the map and runs the same body again from the start, and likewise when another process
has grown the map.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import lmdb

from ledger._pending import _Pending
from ledger.errors import FormatError, StoreError
from ledger.format import _DB_NAMES, _format_record, check_format

if TYPE_CHECKING:
    from ledger._indexes import Indexer

_DEFAULT_MAP_SIZE = 64 << 20

T = TypeVar("T")


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
                max_spare_txns=1,  # see ledger._reads
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

    def _committed(self, digest: bytes) -> bool:
        txn = self._begin()
        try:
            return txn.get(digest, db=self._addr) is not None
        finally:
            txn.abort()
