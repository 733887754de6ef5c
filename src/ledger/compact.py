"""Compaction: replace a ledger by one that holds only the history reachable from what is kept.

Requirements:

1. What is kept is the closure of the program's roots (``ledger._closure``: refs, and the
   program's ``Links``), with the refs that point into it; everything else goes. Events keep
   their bytes, so their addresses, and their relative order.
2. The new store is written beside the old one (``<dir>/compact/ledger``), then verified in
   full (pages, events, links, refs, indexes, chain, and the program's own checks). Only a
   store that verifies replaces the old one, by renaming its data file over the old data file
   in one step: a crash at any moment leaves either the old ledger or the new one, never a
   mixture. A compaction that fails removes its scratch folder; one killed leaves it, and the
   next removes it.
3. Nothing else may have the ledger open meanwhile: a process that kept the old file open
   would go on writing to it after the swap, and its writes would be lost. The compaction
   holds the open lock (``ledger._openlock``) alone from before it looks until after the
   rename: it refuses when another process holds it (naming one from LMDB's reader table),
   and every process that opens the ledger while it works is refused. Its scratch folder is
   cleared under the lock too, so a second compaction cannot remove the first one's.
4. The new store begins a new chain (its history is not the old one); its ``meta`` table
   records the head and commit count of the history it replaced (``b"compacted"``), which
   ``verify`` reports, so a head published before compaction can still be traced to it.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ledger._closure import Selection, select_closure
from ledger._lmdb import Snapshot
from ledger._openlock import held_here, release, take_alone
from ledger._writes import CHUNK_BYTES, CHUNK_EVENTS
from ledger.address import format_address
from ledger.application import Application, Links
from ledger.codec import encode
from ledger.errors import IntegrityError, StoreError
from ledger.event import event_from_trusted
from ledger.format import _SEQ
from ledger.store import STORE_DIR, Ledger, missing_ledger, open_ledger
from ledger.verify import chain_problems

if TYPE_CHECKING:
    from ledger.verify import Problem

__all__ = ["SCRATCH_DIR", "CompactSummary", "compact_ledger"]

SCRATCH_DIR = "compact"
"""The folder, inside the ledger's directory, a compaction writes its new store in."""


@dataclass(frozen=True)
class CompactSummary:
    """What a compaction kept and what it saved."""

    events_before: int
    events_after: int
    bytes_before: int
    bytes_after: int
    head_before: str | None
    commits_before: int
    head_after: str | None
    commits_after: int
    refs_kept: list[str] = field(default_factory=list)
    refs_dropped: list[str] = field(default_factory=list)


def compact_ledger(
    path: str | os.PathLike[str],
    choose: Callable[[Ledger], Iterable[str]],
    *,
    app: Application | None = None,
    links: Links | None = None,
    checks: Iterable[Callable[[Ledger], Iterable[Problem]]] = (),
    progress: Callable[[str], None] | None = None,
) -> CompactSummary:
    """Compact the ledger kept in ``path`` (see the module); ``choose(ledger)`` names the
    roots to keep (addresses, prefixes or ref names), ``checks`` are the program's own verify
    checks, ``progress(step)`` hears each step as it starts. ``IntegrityError`` when the new
    store does not verify (the old one is then left as it was)."""
    root = Path(path)
    directory = root / STORE_DIR
    if not (directory / "data.mdb").exists():
        raise missing_ledger(root)
    resolved = directory.resolve()
    if not take_alone(resolved, where=root):
        if held_here(resolved):  # the reader table would name this very process
            raise StoreError(
                f"the ledger at {root} is open in this process: close it, then compact it"
            )
        raise _in_use(root, _holders(root, app))
    try:
        return _compact(root, choose, app, links, checks, progress or (lambda step: None))
    finally:
        # Whatever stopped it (a full device, a store that did not verify, Ctrl-C), what it
        # wrote goes: left there, it would hold the room the ledger needs next. Under the
        # lock, so it is never another compaction's.
        shutil.rmtree(root / SCRATCH_DIR, ignore_errors=True)
        release(resolved)


def _compact(
    root: Path,
    choose: Callable[[Ledger], Iterable[str]],
    app: Application | None,
    links: Links | None,
    checks: Iterable[Callable[[Ledger], Iterable[Problem]]],
    say: Callable[[str], None],
) -> CompactSummary:
    """``compact_ledger`` once it holds the open lock alone: nothing else can open the
    ledger until it lets go, after the rename."""
    scratch = root / SCRATCH_DIR
    shutil.rmtree(scratch, ignore_errors=True)  # what a compaction cut short left
    data_file = root / STORE_DIR / "data.mdb"
    with open_ledger(root, app=app, create=False) as ledger:
        # A process of a version that takes no open lock is still in LMDB's reader table.
        others = ledger.other_processes()
        if others:
            raise _in_use(root, others)
        roots = [ledger.resolve(text) for text in choose(ledger)]
        say("selecting")
        bytes_before = data_file.stat().st_size
        commits_before, head_before = ledger.head()
        with ledger.snapshot() as snap:
            # The new store records the old head as that of the history it replaces: a chain
            # its events no longer hash to would be vouched for, and its evidence dropped.
            broken = chain_problems(snap)
            if broken:
                raise IntegrityError(
                    f"the ledger at {root} was not compacted: its history no longer hashes to "
                    f"its recorded head {head_before} ({broken[0]}); verify the ledger before "
                    "compacting it"
                )
            selection = select_closure(snap, roots, links, ledger.app.upcast)
            kept, dropped = _refs(snap, selection)
            events_before = snap.count_events()
            say("writing")
            events_after = _write(snap, selection, kept, scratch, ledger.app)
        with open_ledger(scratch, app=ledger.app, create=False) as fresh:
            fresh._put_meta(
                b"compacted",
                encode(
                    {
                        "head": head_before,
                        "commits": commits_before,
                        "events": events_before,
                        "kept": events_after,
                    }
                ),
            )
            say("verifying")
            report = fresh.verify(extra_checks=checks)
            commits_after, head_after = fresh.head()
        if not report.ok:
            first = report.problems[0]
            raise IntegrityError(
                f"the compacted ledger did not verify ({len(report.problems)} problem(s), the "
                f"first: {first}); the ledger at {root} was left as it was"
            )
    say("swapping")
    _swap(scratch, root)
    return CompactSummary(
        events_before,
        events_after,
        bytes_before,
        data_file.stat().st_size,
        head_before,
        commits_before,
        head_after,
        commits_after,
        sorted(kept),
        sorted(dropped),
    )


def _holders(root: Path, app: Application | None) -> list[int]:
    """The processes LMDB's reader table names as having the ledger open (the lock says
    only that some process has)."""
    with open_ledger(root, app=app, create=False) as ledger:
        return ledger.other_processes()


def _in_use(root: Path, others: list[int]) -> StoreError:
    who = f"another process (pid {others[0]})" if others else "another process"
    return StoreError(
        f"the ledger at {root} is open in {who}: compact it when nothing else is using it"
    )


def _refs(snap: Snapshot, selection: Selection) -> tuple[dict[str, str], list[str]]:
    """The refs that point into the selection, and the names of those that do not."""
    kept: dict[str, str] = {}
    dropped: list[str] = []
    for name, digest in snap.refs():
        seq_key = snap.addr_get(digest)
        if seq_key is not None and _SEQ.unpack(seq_key)[0] in selection:
            kept[name] = format_address(digest)
        else:
            dropped.append(name)
    return kept, dropped


def _write(
    snap: Snapshot, selection: Selection, refs: dict[str, str], scratch: Path, app: Application
) -> int:
    """Write the selected events, in their order, and ``refs`` into a new store in ``scratch``."""
    written = 0
    with open_ledger(scratch, app=app) as fresh:
        chunk: list[tuple[bytes, bytes, tuple[bytes, ...]]] = []
        size = 0
        for seq in selection.seqs():
            stored = snap.record_at(_SEQ.pack(seq))
            if stored is None:  # pragma: no cover - the selection was read from this snapshot
                continue
            digest, data = stored
            event = event_from_trusted(data)
            chunk.append((digest, data, fresh.derive_prefixes(format_address(digest), event)))
            size += len(data)
            if len(chunk) >= CHUNK_EVENTS or size >= CHUNK_BYTES:
                written += fresh._commit_imported(chunk, [])
                chunk, size = [], 0
        written += fresh._commit_imported(chunk, sorted(refs.items()))
    return written


def _swap(scratch: Path, root: Path) -> None:
    """Put the new data file in place of the old one, in one rename."""
    new = scratch / STORE_DIR / "data.mdb"
    with open(new, "rb") as f:
        os.fsync(f.fileno())
    directory = root / STORE_DIR
    os.replace(new, directory / "data.mdb")
    # The lock file described the old data file; the next process to open makes a new one.
    (directory / "lock.mdb").unlink(missing_ok=True)
    descriptor = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(descriptor)  # the rename itself survives a crash
    finally:
        os.close(descriptor)
