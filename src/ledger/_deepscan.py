"""The page-level scan ``verify`` runs first, in a child process.

LMDB trusts its file: a page overwritten with zeros or garbage can make it stop the whole
process (SIGABRT, ``Assertion 'IS_LEAF(mp)' failed``) or touch memory past the end of the file
(SIGBUS) instead of returning an error. So before ``verify`` reads events in its own process,
a child process (``_pagescan``) first accounts for every page of the file with plain reads
(each is a header page, a page of one table, or free: a header page pointing LMDB at an older
tree reads without an error, and leaves the newer tree's pages unaccounted for), then walks
every key and value of every table through LMDB, which touches every branch, leaf and overflow
page the tables reach. If the child dies by a signal, or LMDB reports
a damaged page to it, the damage is reported as one sentence naming the table and what LMDB
said, and ``verify`` does not read the damaged store itself. The child also counts each table's
entries against the count LMDB keeps in the table's own record (what ``stat`` gives, and so the
ledger's event count): a record damaged so reads without an error, and a count taken from it
would be one the ledger does not hold.

The child needs only ``lmdb``; it prints what it finds, and the table it is about to scan, so
the parent can name the one it died in. Whether it may use LMDB's lock file is the parent's to
say: the ledger found out when it was opened.
"""

from __future__ import annotations

import re
import signal
import subprocess
import sys
from pathlib import Path

__all__ = ["deep_scan"]

_CHILD = Path(__file__).with_name("_pagescan.py")  # run as a script: it needs only lmdb

_ASSERTION = re.compile(r"Assertion '.*' failed in \w+\(\)")


def deep_scan(directory: Path, *, media_read_only: bool) -> tuple[bool, str] | None:
    """``None`` when every page of the LMDB environment in ``directory`` reads back; else
    ``(damaged, sentence)``: damage found, or the scan could not run (so nothing is known).

    ``media_read_only`` is the ledger's own finding (``store.on_read_only_file_system``): on a
    read-only file system there is no lock file to use, nor a writer to lock out, so the child
    opens the store without one, as the ledger itself was opened."""
    lock = "nolock" if media_read_only else "lock"
    try:
        done = subprocess.run(
            [sys.executable, "-I", str(_CHILD), str(directory), lock],
            capture_output=True,
            text=True,
            errors="replace",
            check=False,
        )
    except OSError as exc:
        return False, f"the page-level scan could not start ({exc.strerror})"
    lines = done.stdout.splitlines()
    if done.returncode == 0 and lines[-1:] == ["ok"]:
        return None
    if done.returncode == 0 and lines[-1:] == ["moving"]:
        return False, (
            "the page-level scan found no moment between commits to read the pages at (a "
            "writer kept committing); run verify again"
        )
    pages = [line[6:] for line in lines if line.startswith("pages ")]
    if pages:
        return True, f"the store is damaged below its events: {pages[-1]}"
    tables = [line[6:] for line in lines if line.startswith("table ")]
    where = f"its {tables[-1]} table" if tables else "its main table"
    said = [line[5:] for line in lines if line.startswith("lmdb ")]
    counts = [line.split()[1:] for line in lines if line.startswith("count ")]
    if counts:  # its entries all read, but the table's own record counts others
        held, recorded = (int(n) for n in counts[-1])
        reason = f"LMDB's record of the table counts {recorded:,} entries, but it holds {held:,}"
    elif said:
        reason = f"LMDB says {said[-1]!r}"
    elif done.returncode < 0:
        found = _ASSERTION.search(done.stderr)
        name = signal.Signals(-done.returncode).name
        reason = f"LMDB stopped with {name}" + (f" ({found.group(0)})" if found else "")
    else:
        last = done.stderr.strip().splitlines()[-1:] or ["no reason given"]
        return False, f"the page-level scan failed: {last[0]}"
    return True, f"the store is damaged below its events in {where}: {reason}"
