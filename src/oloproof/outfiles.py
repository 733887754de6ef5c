"""Files written where the user says: CI reports (``--junit``, ``--summary``) and export tables.

Requirements:

1. Nothing of the user's is written over. A file that is there already is replaced only when it
   is empty or is what Oloproof writes at that path (``Kind.ours``: an earlier report or export
   of the same kind, told by its content); the cases file, the project file or a qrels file
   named by mistake is refused with one sentence, before any work, as is any path inside a
   ledger's folder.
2. A path that is there and is not a regular file (``/dev/null``, ``/dev/stdout``, a named
   pipe) is written into, never replaced: renaming a file over it would put a file where the
   device was.
3. A regular file is written whole: a temporary file beside it, renamed into place. The
   temporary file is created new under a name of its own (``.NAME.XXXXXXXX.partial``): a file
   or link already at a fixed name would be written through, and two commands writing one
   path at once would share it. The file that ``$GITHUB_STEP_SUMMARY`` names is appended to
   instead, as every step of a job shares it.
4. A path that is a symbolic link is written through, as a shell's ``>`` writes through it:
   the file it points at (one a CI job uploads, say) is checked and written, made if it is not
   there yet, and the link stays. Renaming over the link would put a file in its place and
   leave an earlier report where it points, to be read as this one.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import secrets
import stat
import tempfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import BinaryIO, TypeVar

from oloproof.errors import ConfigError

_T = TypeVar("_T")
_HEAD = 4096  # what is read of a file to tell whether Oloproof wrote it
# A project's ledger folder (``store.LEDGER_DIR``, above this module): its files, its lock file
# (empty) among them, are the ledger's alone.
_LEDGER_FOLDER = ".oloproof"


@dataclass(frozen=True)
class Kind:
    """What is written at a path: named for messages, and told apart by its first bytes."""

    name: str
    ours: Callable[[bytes, Path], bool]  # given the file's first bytes, and its path


def _first_line(head: bytes) -> bytes:
    return head.split(b"\n", 1)[0].strip()


def _junit(head: bytes, _: Path) -> bool:
    return head.startswith(b"<?xml") and b'<testsuites name="oloproof"' in head


def _summary(head: bytes, _: Path) -> bool:
    return head.startswith(b"### Oloproof ")


def _table_jsonl(head: bytes, _: Path) -> bool:
    try:
        row = json.loads(_first_line(head))
    except ValueError:
        return False
    return isinstance(row, dict) and list(row)[:3] == ["run_id", "case_id", "line"]


def _cases(head: bytes, _: Path) -> bool:
    try:
        case = json.loads(_first_line(head).decode("utf-8-sig"))
    except ValueError:
        return False
    return isinstance(case, dict) and "id" in case and "input" in case


def _table_csv(head: bytes, _: Path) -> bool:
    return head.startswith(b"run_id,case_id,line,")


def _parquet(head: bytes, path: Path) -> bool:
    if not head.startswith(b"PAR1"):
        return False
    try:
        import pyarrow.parquet as pq  # only here: exporting Parquet needs it anyway

        return list(pq.read_schema(path).names[:3]) == ["run_id", "case_id", "line"]
    except Exception:  # not installed, or one of the several errors of a file it cannot read
        return False


def _trec_run(head: bytes, _: Path) -> bool:
    # The tag column is the run's id: a run file of another program has its own.
    fields = _first_line(head).split()
    return len(fields) == 6 and fields[1] == b"Q0" and fields[5].startswith(b"run_")


def _trec_qrels(_: bytes, path: Path) -> bool:
    # A qrels file reads the same whoever wrote it: it is taken as an export's only beside the
    # run file written with it.
    run = path.with_name("run.trec")
    try:
        with run.open("rb") as handle:
            return _trec_run(handle.read(_HEAD), run)
    except OSError:
        return False


CASES = Kind("cases file", _cases)
JUNIT = Kind("JUnit report", _junit)
SUMMARY = Kind("Markdown summary", _summary)
TABLES = {
    "jsonl": Kind("JSON Lines export", _table_jsonl),
    "csv": Kind("CSV export", _table_csv),
    "parquet": Kind("Parquet export", _parquet),
}
TREC = {
    "run.trec": Kind("TREC run file", _trec_run),
    "qrels.trec": Kind("TREC qrels file", _trec_qrels),
}


def is_step_summary(path: Path) -> bool:
    """Whether ``path`` is the file a GitHub job's steps share (``$GITHUB_STEP_SUMMARY``). A
    variable naming what cannot be resolved (a loop of symbolic links) names no such file."""
    shared = os.environ.get("GITHUB_STEP_SUMMARY")
    if not shared:
        return False
    try:
        return path.resolve() == Path(shared).resolve()
    except (OSError, RuntimeError):  # RuntimeError: a symbolic link loop, before Python 3.13
        return False


_LOOKUP_FAULTS = {
    errno.ELOOP: "a loop of symbolic links",
    errno.ENAMETOOLONG: "its name is too long",
}


def check(path: Path, kind: Kind) -> None:
    """Refuse, before any work, a path ``write`` could not or must not write (see the module):
    one that cannot be looked up (a loop of symbolic links, a name too long), a folder, a path
    under a file, a folder that takes no new file (probed with a temporary file, removed at
    once), or a regular file that is not empty and not ``kind``."""
    try:
        os.stat(path)
    except OSError as exc:
        fault = _LOOKUP_FAULTS.get(exc.errno or 0)
        if fault is not None:
            raise ConfigError(f"{path}: cannot write it ({fault})") from None
    if path.is_dir():
        raise ConfigError(f"cannot write {path}: it is a folder")
    if _LEDGER_FOLDER in path.resolve().parts:
        raise ConfigError(f"will not write the {kind.name} to {path}: it is inside a ledger")
    folder = _followed(path).parent  # where the file is made (requirement 4)
    while not folder.exists() and folder != folder.parent:  # write makes the rest
        folder = folder.parent
    if not folder.is_dir():
        raise ConfigError(f"cannot write {path}: {folder} is not a folder")
    if path.exists() and not is_step_summary(path):
        _check_existing(path, kind)
    try:
        with tempfile.NamedTemporaryFile(dir=folder, prefix=f".{path.name}."):
            pass
    except OSError as exc:
        raise ConfigError(f"cannot write {path}: {exc.strerror or exc}") from None


def _followed(path: Path) -> Path:
    """The file ``path`` names when written through (requirement 4): the end of the symbolic
    links at it, or ``path`` itself."""
    return Path(os.path.realpath(path)) if path.is_symlink() else path


def _check_existing(path: Path, kind: Kind) -> None:
    try:
        if not stat.S_ISREG(path.stat().st_mode):
            return  # a device or a pipe: written into (requirement 2)
        with path.open("rb") as handle:
            head = handle.read(_HEAD)
    except OSError as exc:
        raise ConfigError(f"cannot write {path}: {exc.strerror or exc}") from None
    if head and not kind.ours(head, path):
        raise ConfigError(
            f"will not write the {kind.name} over {path}: the file there is not a {kind.name} "
            "Oloproof wrote; give another path, or remove the file first"
        )


def _unended(path: Path) -> bool:
    """Whether ``path`` is a file whose last line has no line end."""
    try:
        found = path.stat()
    except FileNotFoundError:  # appending creates it
        return False
    if not stat.S_ISREG(found.st_mode) or found.st_size == 0:
        return False
    with path.open("rb") as handle:
        handle.seek(-1, os.SEEK_END)
        return handle.read(1) != b"\n"


def remove(path: Path) -> bool:
    """Remove the file at ``path`` (through a link, requirement 4), for a report that could not
    be written in its place; whether it was removed."""
    try:
        _followed(path).unlink()
    except OSError:
        return False
    return True


def write(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` as the module says: whole, into a device or pipe, or
    appended to the job's step summary."""
    write_all([(path, data)])


def _staging_file(target: Path) -> tuple[Path, BinaryIO]:
    """A new file beside ``target``, under a name no file held (requirement 3), open for
    writing. Made as ``open`` makes a file (its mode from the umask, which ``mkstemp`` would
    not honour), but never opening one that is there, a link least of all."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    for _ in range(8):
        tmp = target.with_name(f".{target.name}.{secrets.token_hex(4)}.partial")
        with contextlib.suppress(FileExistsError):  # one in 4 billion: another name
            return tmp, os.fdopen(os.open(tmp, flags, 0o666), "wb")
    raise FileExistsError(errno.EEXIST, "no free name for a temporary file", str(target.parent))


def write_all(files: Sequence[tuple[Path, bytes]]) -> None:
    """``write`` each of ``files``, all or none of the regular ones (``open_all``)."""
    with open_all([path for path, _ in files]) as handles:
        for (path, data), handle in zip(files, handles, strict=True):
            written(path, partial(handle.write, data))


def written(path: Path, step: Callable[[], _T]) -> _T:
    """``step()``, a write into the file at ``path``: a failure (a full device) is one sentence
    naming the path."""
    try:
        return step()
    except OSError as exc:
        raise ConfigError(f"cannot write {path}: {exc.strerror or exc}") from None


@contextlib.contextmanager
def open_all(paths: Sequence[Path]) -> Iterator[list[BinaryIO]]:
    """Handles to write each of ``paths`` into, so that an export streams its tables, all or
    none of the regular files taking their places: each is written beside its place first,
    and only once the block ends without an error do they take their places. An export's
    tables are then never one of this export and one of an earlier, and a full device (or
    Ctrl-C) leaves no hidden half file behind, taking its room. A device or pipe is written
    into, and the job's step summary appended to (requirements 2 and 3)."""
    staged: list[tuple[Path, Path, Path]] = []  # the file written, its place, the path given
    handles: list[BinaryIO] = []
    path = paths[0] if paths else Path()
    try:
        try:
            with contextlib.ExitStack() as stack:
                for path in paths:
                    if is_step_summary(path):
                        unended = _unended(path)
                        handles.append(stack.enter_context(path.open("ab")))
                        if unended:  # an earlier step's text would run into ours
                            handles[-1].write(b"\n")
                    elif path.exists() and not stat.S_ISREG(path.stat().st_mode):
                        handles.append(stack.enter_context(path.open("wb")))
                    else:
                        target = _followed(path)
                        target.parent.mkdir(parents=True, exist_ok=True)
                        tmp, staging = _staging_file(target)
                        staged.append((tmp, target, path))
                        handles.append(stack.enter_context(staging))
                yield handles
            for tmp, target, given in staged:
                path = given  # named should the rename fail
                tmp.replace(target)
        except BaseException:
            for tmp, _, _ in staged:
                with contextlib.suppress(OSError):
                    tmp.unlink()
            raise
    except OSError as exc:
        raise ConfigError(f"cannot write {path}: {exc.strerror or exc}") from None
