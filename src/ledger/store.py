"""The LMDB event store: ``open_ledger`` and the ``Ledger`` it returns.

``Ledger`` is one class assembled from the store's modules, one concept each. Only these
modules touch LMDB, and of them only ``_lmdb`` imports it:

    format     the on-disk format: the format record, the tables, sequence and index keys
    chain      the commit chain: how each commit's head is made (no LMDB)
    _datafile  LMDB's meta pages, read and checked before the file is mapped (no LMDB)
    _openlock  the lock every opening holds shared and a compaction alone (no LMDB)
    _lmdb      the environment: opening and sharing it, transactions, the raw ``Snapshot``
    _pending   what a batch holds until it commits (no LMDB)
    _reads     get, get_bytes, get_many, has, events: every read checked against its address
    _indexes   filing events under index entries; lookup, latest, rebuild_indexes
    _writes    put and batch: events encoded and hashed first, then one short transaction
               that also appends the commit's record to the chain
    _refs      refs (compare-and-swap) and resolve
    store      open_ledger; the Ledger's lifecycle and verify

Each part is a base class of ``Ledger``, stacked in that order (``_Tables`` in ``_lmdb``, then
``_Reader``, ``_Indexes``, ``_Writer``, ``_Refs``), each using only the parts below it: reads
see the open batch, writes file events under their index entries, and refs commit through
the write path. They are base classes rather than objects a ``Ledger`` delegates to, so the
hot paths (``get``, ``has``, ``put``) stay one method call on the ledger.

Around the store, each over a ``Snapshot`` or the ``Ledger``'s methods: ``verify`` (with
``_deepscan``, the page-level scan in a child process), ``archive`` (with ``_closure``, what
travels together, and ``_archive_file``, the bytes of an archive) and ``compact``. What the
program says about itself is an ``application.Application``.

Module constants are read where they are defined: ``CHUNK_BYTES`` and ``CHUNK_EVENTS`` in
``ledger._writes``, ``_SCAN_CHUNK`` in ``ledger._reads``; the names here are re-exports.
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import os
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Final

from ledger._lmdb import (
    _DEFAULT_MAP_SIZE,
    Snapshot,
    _acquire_env,
    _open_databases,
    _release_env,
    _shares,
    other_processes,
)
from ledger._pending import ANY, _Pending
from ledger._refs import _Refs
from ledger._writes import CHUNK_BYTES, CHUNK_EVENTS, Prepared
from ledger.address import format_address
from ledger.application import Application, Indexer
from ledger.errors import ReadOnlyFileSystemError, StoreError
from ledger.format import FORMAT
from ledger.format import KNOWN_EXTENSIONS as KNOWN_EXTENSIONS
from ledger.format import TYPE_INDEX as TYPE_INDEX
from ledger.format import check_format as check_format
from ledger.format import index_name_of as index_name_of
from ledger.format import index_prefix as index_prefix

if TYPE_CHECKING:
    from ledger.verify import Problem, VerifyReport

__all__ = [
    "ANY",
    "CHUNK_BYTES",
    "CHUNK_EVENTS",
    "FORMAT",
    "Indexer",
    "Ledger",
    "Prepared",
    "Snapshot",
    "on_read_only_file_system",
    "open_ledger",
]

STORE_DIR: Final = "ledger"


def open_ledger(
    path: str | os.PathLike[str],
    *,
    app: Application | None = None,
    indexer: Indexer | None = None,
    create: bool = True,
    readonly: bool = False,
    map_size: int | None = None,
) -> Ledger:
    """Open the ledger kept in ``path`` (a directory; the store is its ``ledger/`` folder).

    With ``create`` (the default) a missing ledger is created; otherwise, or when
    ``readonly``, a missing one raises ``StoreError``. ``app`` says who the program is (its
    name, archive magic, indexes and upcasting: ``ledger.Application``); ``indexer`` alone
    may be given instead, for a program that only adds indexes. Pass the same indexer every
    time the ledger is written. ``map_size`` is the initial LMDB map size in bytes (it grows
    by itself when full). A damaged data file is refused (``DamagedStoreError``) before it is
    mapped; a format-1 ledger opened for writing is given its chain (``ledger.format``), and
    one whose indexes another version of the program filed has them rebuilt
    (``Application.indexes``). While a compaction is under way in another process, opening is
    refused at once (``StoreError`` naming its pid), for reading too (``ledger._openlock``).
    A ledger on a file system mounted read-only opens with ``readonly`` only (see
    ``on_read_only_file_system``); opening it to write, or creating one there, raises
    ``ReadOnlyFileSystemError`` before anything is touched.
    """
    if app is None:
        app = Application(indexer=indexer)
    elif indexer is not None:
        app = dataclasses.replace(app, indexer=indexer)
    root = Path(path)
    directory = root / STORE_DIR
    exists = (directory / "data.mdb").exists()
    if not exists and (readonly or not create):
        raise missing_ledger(root)
    media_read_only = on_read_only_file_system(root)
    if media_read_only and not readonly:
        raise ReadOnlyFileSystemError(str(root))
    if not exists:
        try:
            directory.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"cannot create a ledger at {root}: {exc.strerror}") from exc
    with contextlib.nullcontext() if exists else _creating(directory):
        if not exists and _lost(directory):
            raise missing_ledger(root)  # a new ledger there would hide the loss
        env = _acquire_env(
            directory,
            readonly=readonly,
            map_size=map_size or _DEFAULT_MAP_SIZE,
            lock=not media_read_only,
        )
    try:
        dbs = _open_databases(env, root, readonly=readonly, name=app.name)
        ledger = Ledger(env, dbs, root, app=app, readonly=readonly, media_read_only=media_read_only)
    except BaseException:
        _release_env(env)  # and with it the open lock, which would keep a compaction out
        raise
    try:
        ledger.keep_indexes_current()
    except BaseException:
        ledger.close()
        raise
    return ledger


def on_read_only_file_system(path: str | os.PathLike[str]) -> bool:
    """Whether the ledger kept in ``path`` is on a file system mounted read-only (its store
    folder, or the nearest folder above it that exists, is). ``open_ledger`` opens such a
    ledger with ``readonly`` alone, and without LMDB's lock file (see ``ledger._lmdb``)."""
    here = Path(path).absolute() / STORE_DIR
    while True:
        try:
            return bool(os.statvfs(here).f_flag & os.ST_RDONLY)
        except (FileNotFoundError, NotADirectoryError):
            if here.parent == here:
                return False
            here = here.parent
        except OSError:
            return False  # not for us to say: opening it will tell what is wrong


def missing_ledger(root: Path) -> StoreError:
    """The error for a ledger folder that holds no store, or a store that lost its data file."""
    directory = root / STORE_DIR
    data = directory / "data.mdb"
    if data.is_symlink() and not data.exists():
        return StoreError(
            f"the ledger at {root} has lost its data file: {data} is a link to "
            f"{os.readlink(data)}, which does not exist, so the history it held is not there; "
            f"mount or restore what it links to, or remove {directory} to start a new, empty "
            "ledger"
        )
    if _lost(directory):
        return StoreError(
            f"the ledger at {root} has lost its data file: {directory} still holds LMDB's "
            "lock.mdb but no data.mdb, so the history it held is not there; restore data.mdb "
            f"from a backup, or remove {directory} to start a new, empty ledger"
        )
    return StoreError(f"no ledger at {root}: it holds no {STORE_DIR}/data.mdb")


def _lost(directory: Path) -> bool:
    """Whether the store in ``directory`` held a ledger whose data file is gone: LMDB makes its
    lock file only as it opens (or creates) the data file, and nothing but a compaction, which
    puts a data file in place first, removes it. A data file that is a link to nothing was
    kept elsewhere (a disk not mounted): LMDB would create a new one where it points."""
    data = directory / "data.mdb"
    return not data.exists() and ((directory / "lock.mdb").exists() or data.is_symlink())


@contextlib.contextmanager
def _creating(directory: Path) -> Iterator[None]:
    """Hold ``directory`` alone while a ledger may be created in it: LMDB makes its lock file a
    moment before the data file, and a second process looking in between must not take a
    ledger being created for one that lost its data file. Where the folder cannot be locked
    (a network file system), creation goes on without."""
    fd = os.open(directory, os.O_RDONLY)
    try:
        with contextlib.suppress(OSError):
            fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # and with it the lock


class Ledger(_Refs):
    """An open ledger. Use ``open_ledger`` to make one; close it (or use ``with``) when done.

    Several processes may open the same ledger and append at once (LMDB serialises their
    commits). One ``Ledger`` may be shared by threads; a batch belongs to the ``Ledger``, not
    to a thread, so while one is open every thread's writes join it.
    """

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

    def other_processes(self) -> list[int]:
        """Ids of the other living processes that have this ledger open (LMDB's reader
        table), and of this process too when another ``Ledger`` in it shares the file."""
        env = self._environment()
        found = other_processes(env)
        if _shares(env):
            found.insert(0, os.getpid())
        return found

    def _put_meta(self, key: bytes, value: bytes) -> None:
        """Set one record of the ``meta`` table (the format record is not one to set)."""
        if key == b"format":
            raise StoreError("the format record is the ledger's own")
        self._write(lambda txn: txn.put(key, value, db=self._meta))

    def head(self) -> tuple[int, str | None]:
        """The number of commits in the chain and the newest one's head (``None`` before the
        first commit, or for a format-1 ledger opened read-only, which has no chain)."""
        number, head = self._tip()
        return number - 1, None if number == 1 else format_address(head)

    # -- verify ----------------------------------------------------------------------------

    def verify(
        self,
        progress: Callable[[int, int], None] | None = None,
        *,
        extra_checks: Iterable[Callable[[Ledger], Iterable[Problem]]] = (),
        head: str | None = None,
        deep: bool = True,
    ) -> VerifyReport:
        """Check every page, event, link, ref, index and the chain; see ``ledger.verify``."""
        from ledger.verify import verify_ledger

        return verify_ledger(
            self, progress=progress, extra_checks=extra_checks, head=head, deep=deep
        )
