"""What a path names when it is no regular file, or cannot be looked up at all: the words
every reader of the user's files (settings, cases, labels, qrels) and the command line use."""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable
from pathlib import Path

LOOKUP_FAULTS = {
    errno.ELOOP: "a loop of symbolic links",
    errno.ENAMETOOLONG: "its name is too long",
}

_KINDS: tuple[tuple[Callable[[int], bool], str], ...] = (
    (stat.S_ISFIFO, "a named pipe"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def lookup_fault(path: Path) -> str | None:
    """Why ``path`` cannot be looked up at all (a loop of symbolic links, a name too long),
    or None: a path that is simply missing, or under a file, is for the reader or writer to
    name."""
    try:
        os.stat(path)
    except OSError as exc:
        return LOOKUP_FAULTS.get(exc.errno or 0)
    return None


def not_a_file(mode: int) -> str | None:
    """What a file of ``mode`` is when it is neither a regular file nor a folder (``a named
    pipe``), else None."""
    return next((name for test, name in _KINDS if test(mode)), None)
