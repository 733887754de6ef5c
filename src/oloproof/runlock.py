"""One writer per run: an OS lock on ``.oloproof/locks/RUN_ID.lock`` while a run is written.

Two processes writing one run (``run --resume`` twice, or a resume while the run still
executes) would execute every missing case twice and record two ends and two decisions. The
lock is ``flock``: the kernel releases it when its process ends however it ends (a crash, a
``kill -9``), so a run whose writer died can be resumed at once, and there is no pid file to
clean up. The holder writes its pid into the file, so a refusal can say who holds the run.

The file is removed by its holder before it lets go; a process that locked a file removed
meanwhile (it opened it just before) notices the file is gone and starts again. A lock file
that cannot be made or written (a full disk) refuses the run in one sentence before anything is
recorded, as a failed write to the ledger stops it (``docs/running.md``). Run ids are read from
the ledger, where an imported archive may have put any text: one that is not a plain file name
(a ``/``, a leading dot) is refused, as it would name a file outside the locks folder.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from oloproof.errors import LedgerAccessError

LOCKS_DIR = "locks"


@contextmanager
def run_writer(ledger_dir: Path, run_id: str) -> Iterator[None]:
    """Hold the run's lock for the block; refuse at once when another process holds it."""
    path = _lock_path(ledger_dir, run_id)
    if path is None:
        raise LedgerAccessError(
            f"cannot write run {run_id!r}: a run id names its lock file, and this one is not "
            "a file name; start a new run instead: oloproof run"
        )
    fd = _acquire(path, run_id)
    try:
        yield
    finally:
        # Already gone, or the directory is not writable: the lock still ends with the close.
        with contextlib.suppress(OSError):
            os.unlink(path)
        os.close(fd)


def names_a_file(run_id: str) -> bool:
    """Whether ``run_id`` can name a file or folder (its lock, its bundle) without leaving the
    folder it is made in: ids are read from the ledger, where an imported archive may have
    put any text."""
    return bool(run_id) and "/" not in run_id and "\0" not in run_id and run_id[0] != "."


def _lock_path(ledger_dir: Path, run_id: str) -> Path | None:
    """The run's lock file, or None when the id cannot name one (``names_a_file``)."""
    return ledger_dir / LOCKS_DIR / f"{run_id}.lock" if names_a_file(run_id) else None


def _acquire(path: Path, run_id: str) -> int:
    try:
        return _lock(path, run_id)
    except OSError as exc:
        raise _unwritable(path, run_id, exc) from None


def _lock(path: Path, run_id: str) -> int:
    path.parent.mkdir(parents=True, exist_ok=True)
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _holder(fd)
            os.close(fd)
            raise LedgerAccessError(
                f"run {run_id} is being written by {holder}; "
                "wait for it to finish (or stop it) and resume then"
            ) from None
        except BaseException:
            os.close(fd)
            raise
        if _still_named(fd, path):
            try:
                os.ftruncate(fd, 0)
                os.write(fd, f"{os.getpid()}\n".encode())
            except OSError:
                # Ours now: removed as its holder removes it, so no file is left without a pid.
                with contextlib.suppress(OSError):
                    os.unlink(path)
                os.close(fd)
                raise
            return fd
        os.close(fd)  # the holder before us removed this file as we opened it: start again


def _unwritable(path: Path, run_id: str, exc: OSError) -> LedgerAccessError:
    """The sentence for a lock file that cannot be made or written (a full disk, a quota, or
    something other than a folder where its folder should be)."""
    if exc.errno == errno.ENOSPC:
        why = f"no space left on the device that holds {path.parent}"
    elif exc.errno in (errno.EEXIST, errno.ENOTDIR) and not path.parent.is_dir():
        # mkdir says "file exists" of a file or a dangling link: name what is there instead.
        what = (
            f"a link to {os.readlink(path.parent)}, which does not exist"
            if path.parent.is_symlink()
            else "not a folder"
        )
        why = f"{path.parent} is {what}: remove it, and it is made again"
    else:
        why = (exc.strerror or str(exc)).lower()
    return LedgerAccessError(
        f"cannot write run {run_id}: its lock file {path} could not be written ({why}); "
        "nothing was recorded"
    )


def locked_runs(ledger_dir: Path) -> list[str]:
    """The ids of the runs that have a lock file, in order: those a process may be writing now
    (``writer_of`` tells which one is), and those whose writer ended without removing it."""
    try:
        names = os.listdir(ledger_dir / LOCKS_DIR)
    except OSError:  # no run ever took a lock here
        return []
    return sorted(name.removesuffix(".lock") for name in names if name.endswith(".lock"))


def writer_of(ledger_dir: Path, run_id: str) -> int | None:
    """The pid of the live process writing the run, if one is (Linux: its open lock file in
    /proc; elsewhere None). Read only: a lock taken to ask would turn a resume away."""
    path = _lock_path(ledger_dir, run_id)
    if path is None:  # no process can hold such a run's lock (``run_writer``)
        return None
    try:
        text = path.read_text(encoding="ascii").strip()
        target = os.path.realpath(path)
        pid = int(text)
        fds = os.listdir(f"/proc/{pid}/fd")
    except (OSError, ValueError, UnicodeDecodeError):  # no lock, no pid yet, or no /proc
        return None
    for fd in fds:
        with contextlib.suppress(OSError):  # closed meanwhile
            if os.readlink(f"/proc/{pid}/fd/{fd}") == target:
                return pid
    return None  # a lock file a crashed writer left, its pid now another process's


def _still_named(fd: int, path: Path) -> bool:
    try:
        return os.stat(path).st_ino == os.fstat(fd).st_ino
    except FileNotFoundError:
        return False


def _holder(fd: int) -> str:
    try:
        text = os.pread(fd, 32, 0).decode("ascii").strip()
    except (OSError, UnicodeDecodeError):
        text = ""
    return f"another process (pid {text})" if text.isdigit() else "another process"
