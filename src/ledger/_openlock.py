"""The open lock: every process that has a ledger open holds it shared; a compaction, alone.

A compaction (``ledger.compact``) replaces the store's data file by a new one, in one rename.
A process that has the old file open when that happens goes on working in it: what it writes
from then on is lost with the old file, and what it reads is a history the ledger no longer
holds. Looking for such processes once, when the compaction starts, leaves a window: one that
opens the ledger a moment later is not seen. So the two exclude each other with a lock on a
file of its own, ``open.lock`` in the store's folder beside ``data.mdb``:

- every opening of the ledger takes it shared before LMDB maps the file, and keeps it for as
  long as the ledger stays open; while a compaction holds it, the opening is refused at once
  with one sentence naming the compaction's process (a compaction of a large ledger takes
  minutes: a command that hung silently meanwhile would look broken);
- a compaction takes it exclusively before it looks for other processes and keeps it until
  the new file is in place, so nothing can open the ledger in between.

Readers take it as writers do: a reader that opened the old file keeps its map of it after
the rename and would go on showing a history that is gone, and an opening for reading may
write (a format record, refiled indexes) when the ledger needs it.

The lock is ``flock``: the kernel lets go of it when its process ends, however it ends, so a
compaction that crashed blocks nobody. The compaction writes its pid into the file, for the
refusals to name, and empties it before it lets go. The file is never removed: a process
holds the lock through the file it opened, and another removed in between would not be it.

Within a process the lock is taken once per store and counted (two ``flock``\\ s of one
process on one file exclude each other), as LMDB's environment is shared (``ledger._lmdb``).
While this process compacts, the thread compacting may open the ledger (the compaction reads
the old store so); any other thread is refused as another process would be.

Where the file exists but cannot be written (a folder this user may not write, a file system
mounted read-only), it is opened for reading and locked so: ``flock`` needs no write access,
and a compaction reaching the same file through a writable mount still finds it held. A store
whose folder cannot hold the file (read-only, and the file not made yet) is opened without the
lock: nothing can compact it through that folder either, as that renames a file into it.
Where the folder could hold the file but a folder or a link to nothing stands in its place, the
opening is refused: without the lock it would be invisible to a compaction started once the
file is put right.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from ledger.errors import StoreError

LOCK_FILE: Final = "open.lock"

# How long a refusal waits for a compaction that has just taken the lock to write its pid.
_PID_WAIT_S = 0.1


@dataclass
class _Held:
    fd: int | None  # None: opened without the lock (see the module)
    compactor: int | None  # the thread compacting, while this process holds the lock alone
    uses: int


_guard = threading.Lock()
_held: dict[Path, _Held] = {}


def share(directory: Path, where: Path) -> None:
    """Take the lock of the store in ``directory`` (resolved) for one more opening of it in
    this process, or refuse (``StoreError``) while a compaction holds it; ``where`` is the
    ledger as messages name it. Undo with ``release``."""
    with _guard:
        held = _held.get(directory)
        if held is not None:
            if held.compactor not in (None, threading.get_ident()):
                raise StoreError(_compacting(where, "another thread of this process", os.getpid()))
            held.uses += 1
            return
        fd = _open_shared(directory / LOCK_FILE, where)
        if fd is not None:
            try:
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            except BlockingIOError:
                pid = _pid_in(fd)
                os.close(fd)
                raise StoreError(_compacting(where, "another process", pid)) from None
            except BaseException:
                os.close(fd)
                raise
        _held[directory] = _Held(fd, None, 1)


def take_alone(directory: Path, where: Path) -> bool:
    """Take the lock of the store in ``directory`` (resolved) for a compaction by this thread;
    ``False`` when another process, or another opening in this one, has the store open.
    Undo with ``release``."""
    path = directory / LOCK_FILE
    with _guard:
        if directory in _held:
            return False
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise StoreError(
                f"cannot compact the ledger at {where}: {exc.strerror} ({path})"
            ) from exc
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            os.ftruncate(fd, 0)
            os.write(fd, f"{os.getpid()}\n".encode())
        except BlockingIOError:
            os.close(fd)
            return False
        except OSError as exc:  # a full device: nothing compacted yet, so say so before it starts
            os.close(fd)
            raise StoreError(
                f"cannot compact the ledger at {where}: {exc.strerror} ({path})"
            ) from exc
        except BaseException:
            os.close(fd)
            raise
        _held[directory] = _Held(fd, threading.get_ident(), 1)
        return True


def held_here(directory: Path) -> bool:
    """Whether an opening in this process holds the store in ``directory`` (resolved)."""
    with _guard:
        return directory in _held


def release(directory: Path) -> None:
    """Undo one ``share`` or ``take_alone`` of the store in ``directory``; the last lets go."""
    with _guard:
        held = _held[directory]
        held.uses -= 1
        if held.uses:
            return
        del _held[directory]
        if held.fd is None:
            return
        if held.compactor is not None:
            with contextlib.suppress(OSError):  # only the refusals' wording depends on it
                os.ftruncate(held.fd, 0)
        os.close(held.fd)


def _open_shared(path: Path, where: Path) -> int | None:
    try:
        return os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError:
        pass  # a folder or a file this user may not write: a shared lock needs only reading
    _refuse_a_lock_that_is_no_file(path, where)
    try:
        return os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise StoreError(f"cannot open the ledger at {where}: {exc.strerror} ({path})") from exc


def _refuse_a_lock_that_is_no_file(path: Path, where: Path) -> None:
    """Refuse a lock file that a folder or a dangling link stands in for, in a folder that
    could hold it: opened without the lock, the ledger would be invisible to a compaction
    started once the file is put right, which would then swap the store under it."""
    if not os.access(path.parent, os.W_OK):
        return  # read-only media: nothing can compact the store through this folder
    if path.is_dir():
        what = "a folder"
    elif path.is_symlink() and not path.exists():
        what = f"a link to {os.readlink(path)}, which does not exist"
    else:
        return
    raise StoreError(
        f"cannot open the ledger at {where}: its lock file {path} is {what}; remove it (the "
        "ledger makes the file again)"
    )


def _pid_in(fd: int) -> int | None:
    """The compacting process's pid, which it writes just after it takes the lock."""
    deadline = time.monotonic() + _PID_WAIT_S
    while True:
        with contextlib.suppress(OSError, UnicodeDecodeError):
            text = os.pread(fd, 32, 0).decode("ascii").strip()
            if text.isdigit():
                return int(text)
        if time.monotonic() > deadline:
            return None
        time.sleep(0.005)


def _compacting(where: Path, who: str, pid: int | None) -> str:
    named = who if pid is None else f"{who} (pid {pid})"
    return (
        f"the ledger at {where} is being compacted by {named}: "
        "try again when the compaction is done"
    )
