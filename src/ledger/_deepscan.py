"""The page-level scan ``verify`` runs first, in a child process.

LMDB trusts its file: a page overwritten with zeros or garbage can make it stop the whole
process (SIGABRT, ``Assertion 'IS_LEAF(mp)' failed``) or touch memory past the end of the file
(SIGBUS) instead of returning an error. So before ``verify`` reads events in its own process,
a child process walks every key and value of every table through LMDB, which touches every
branch, leaf and overflow page the tables reach. If the child dies by a signal, or LMDB reports
a damaged page to it, the damage is reported as one sentence naming the table and what LMDB
said, and ``verify`` does not read the damaged store itself. The child also counts each table's
entries against the count LMDB keeps in the table's own record (what ``stat`` gives, and so the
ledger's event count): a record damaged so reads without an error, and a count taken from it
would be one the ledger does not hold.

The child needs only ``lmdb``; it prints the table it is about to scan, so the parent can name
the one it died in. Whether it may use LMDB's lock file is the parent's to say: the ledger found
out when it was opened.
"""

from __future__ import annotations

import re
import signal
import subprocess
import sys
from pathlib import Path

__all__ = ["deep_scan"]

_SCRIPT = r"""
import sys
import lmdb

env = lmdb.open(sys.argv[1], readonly=True, lock=sys.argv[2] == "lock", max_dbs=256, subdir=True)


def walked(txn, db):
    held = 0
    for key, value in txn.cursor(db=db):
        len(value)
        held += 1
    said = txn.stat(db)["entries"]
    if held != said:
        print("count", held, said, flush=True)
    return held == said


def scanned(txn):
    print("table main", flush=True)
    if not walked(txn, env.open_db(None, txn=txn, create=False)):
        return False
    for name in [bytes(key) for key, _ in txn.cursor()]:
        print("table", name.decode("utf-8", "replace"), flush=True)
        if not walked(txn, env.open_db(name, txn=txn, create=False)):
            return False
    return True


try:
    with env.begin(buffers=True) as txn:
        if scanned(txn):
            print("ok", flush=True)
except lmdb.Error as exc:
    print("lmdb", str(exc).split(": ", 1)[-1], flush=True)
"""

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
            [sys.executable, "-I", "-c", _SCRIPT, str(directory), lock],
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
