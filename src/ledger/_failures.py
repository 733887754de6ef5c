"""Why a write to the store failed, in plain words where the cause can be seen.

LMDB reports a write it could not finish as ``Input/output error`` whatever the reason; the
two common reasons are a full device and a file size limit on the process (``ulimit -f``),
and both can be seen from outside once the write has failed.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

# A device with less than this left is full for a store whose commits write many pages.
_FULL_BELOW = 1 << 20


def write_failure(root: Path, data_file: Path, detail: str) -> str:
    """The sentence for a failed write to the store kept in ``root``."""
    try:
        free = shutil.disk_usage(root).free
    except OSError:
        free = _FULL_BELOW
    if free < _FULL_BELOW:
        return f"no space left on the device that holds {root}"
    limit = _file_size_limit()
    if limit is not None and _size(data_file) + _FULL_BELOW > limit:
        return (
            f"the ledger's file {data_file} reached the largest file size this process may "
            f"write ({limit} bytes, ulimit -f)"
        )
    return f"cannot write to the ledger at {root}: {detail}"


def _file_size_limit() -> int | None:
    try:
        import resource
    except ImportError:  # not a POSIX system
        return None
    soft = resource.getrlimit(resource.RLIMIT_FSIZE)[0]
    return None if soft == resource.RLIM_INFINITY else soft


def _size(path: Path) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0
