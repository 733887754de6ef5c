"""``verify``: an fsck for the ledger that lists every problem, changes nothing, never raises.

In this order it checks that

1. the data file holds what its own meta pages say was committed, and every page of every
   table reads back through LMDB, in a child process so that a page that would stop LMDB
   stops only the child (``DamagedStore``; when the store is damaged, nothing below is read);
2. every stored event's bytes still hash to its address (``CorruptEvent``), are the one
   canonical encoding of an event of the right shape, every ref an address
   (``MalformedEvent``: what ``ledger import`` refuses), and can be read by the application
   (``UnreadableEvent``: its upcaster refused it, a schema newer than the program, say);
3. every address in an event's ``refs`` is a stored event (``MissingRef``);
4. every named ref has a valid name and a digest (``MalformedRef``, what import refuses) and
   points at a stored event (``DanglingName``);
5. the address entries and every index, and the runs that hold them, equal what a rebuild
   from the events would write (``StaleIndex``);
6. the chain re-derives: each commit's head is the hash of the head before it and of the events
   it added, its events are there in order, and every event was added by a commit
   (``BrokenChain``); with ``head``, that head is one of this history's (``UnknownHead``);

then runs the application's own checks, each of whose failures is a problem too (``CheckFailed``)
rather than an exception. Nothing is repaired or deleted: a corrupt event is evidence.
``rebuild_indexes`` mends stale indexes; the rest needs a person.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from hashlib import sha256
from typing import TYPE_CHECKING, Any

from ledger._datafile import check_data_file
from ledger._deepscan import deep_scan
from ledger._filter import FILTER_KEY
from ledger._lmdb import Snapshot
from ledger._records import undecodable
from ledger._runs import ADDR_TAG, INDEX_TAG
from ledger.address import check_ref_name, digest_of, format_address, parse_address
from ledger.chain import GENESIS, ChainRecord, unpack_record
from ledger.codec import decode
from ledger.errors import AddressError, DamagedIndexesError, LedgerError
from ledger.event import Event
from ledger.format import _SEQ, TYPE_INDEX
from ledger.memo import Recent

if TYPE_CHECKING:
    from ledger.store import Ledger

__all__ = [
    "BROKEN_CHAIN",
    "CHECK_FAILED",
    "CORRUPT_EVENT",
    "DAMAGED_STORE",
    "DANGLING_NAME",
    "MALFORMED_EVENT",
    "MALFORMED_REF",
    "MISSING_REF",
    "STALE_INDEX",
    "UNKNOWN_HEAD",
    "UNREADABLE_EVENT",
    "ChainSummary",
    "Problem",
    "VerifyReport",
    "chain_problems",
    "verify_ledger",
]

DAMAGED_STORE = "DamagedStore"
CORRUPT_EVENT = "CorruptEvent"
MALFORMED_EVENT = "MalformedEvent"
UNREADABLE_EVENT = "UnreadableEvent"
MISSING_REF = "MissingRef"
DANGLING_NAME = "DanglingName"
MALFORMED_REF = "MalformedRef"
STALE_INDEX = "StaleIndex"
BROKEN_CHAIN = "BrokenChain"
UNKNOWN_HEAD = "UnknownHead"
CHECK_FAILED = "CheckFailed"

_PROGRESS_EVERY = 1024
_KEPT = 4096  # ref targets, and index prefixes, whose answers _check_events remembers


@dataclass(frozen=True)
class Problem:
    """One thing ``verify`` found wrong.

    ``kind`` is one of the kinds above or a kind of the application's own (``StaleSummary``…).
    ``address`` is the event concerned, ``target`` the address a broken link points at,
    ``name`` the ref, index or table concerned.
    """

    kind: str
    address: str | None = None
    detail: str = ""
    target: str | None = None
    name: str | None = None

    def __str__(self) -> str:
        if self.kind == CORRUPT_EVENT:
            text = f"corrupt event {self.address}"
        elif self.kind == MALFORMED_EVENT:
            text = f"malformed event {self.address}"
        elif self.kind == UNREADABLE_EVENT:
            text = f"unreadable event {self.address}"
        elif self.kind == MISSING_REF:
            text = f"broken link from {self.address} to {self.target}"
        elif self.kind == DANGLING_NAME:
            text = f"dangling ref {self.name} to missing event {self.address}"
        elif self.kind == MALFORMED_REF:
            text = f"malformed ref {self.name!r}"
        elif self.kind == STALE_INDEX:
            text = f"stale index {self.name}"
        elif self.kind == DAMAGED_STORE:
            text = "damaged store"
        elif self.kind == BROKEN_CHAIN:
            text = "broken chain"
        elif self.kind == UNKNOWN_HEAD:
            text = "unknown head"
        else:
            text = " ".join(p for p in (self.kind, self.name, self.address) if p)
        return f"{text}: {self.detail}" if self.detail else text

    def to_dict(self) -> dict[str, Any]:
        """A plain-data form, for JSON output."""
        return {
            "kind": self.kind,
            "address": self.address,
            "target": self.target,
            "name": self.name,
            "detail": self.detail,
            "message": str(self),
        }


@dataclass
class ChainSummary:
    """What ``verify`` re-derived of the chain.

    ``head`` is the newest commit's head as re-derived from the events (``None`` before the
    first commit, or without a chain); ``migrated`` the number of events a format-1 ledger held
    when its chain began (their hash is its first commit), ``None`` for a ledger born chained;
    ``found`` the commit number of the head asked for, if it was found.
    """

    present: bool = True
    commits: int = 0
    head: str | None = None
    migrated: int | None = None
    compacted_from: str | None = None
    asked: str | None = None
    found: int | None = None

    def lines(self) -> list[str]:
        if not self.present:
            return ["chain: none (a format-1 ledger opened read-only; open it for writing once)"]
        lines = [f"chain: {self.commits} commit(s), head {self.head or '(none yet)'}"]
        if self.migrated is not None:
            lines.append(
                f"chain: its first commit hashes the {self.migrated} event(s) the ledger held "
                "before it had a chain"
            )
        if self.compacted_from is not None:
            lines.append(
                f"chain: it began when a history whose head was {self.compacted_from} was "
                "compacted; heads of that history are not heads of this one"
            )
        if self.asked is not None and self.found is not None:
            lines.append(
                f"head {self.asked} is commit {self.found} of {self.commits} of this history"
            )
        return lines

    def to_dict(self) -> dict[str, Any]:
        return {
            "present": self.present,
            "commits": self.commits,
            "head": self.head,
            "migrated": self.migrated,
            "compacted_from": self.compacted_from,
            "asked": self.asked,
            "found": self.found,
        }


@dataclass
class VerifyReport:
    """What ``verify`` found: every problem, and how much it checked."""

    problems: list[Problem] = field(default_factory=list)
    events_checked: int = 0
    refs_checked: int = 0
    notes: list[str] = field(default_factory=list)
    chain: ChainSummary = field(default_factory=ChainSummary)

    @property
    def ok(self) -> bool:
        """True when no problem was found."""
        return not self.problems

    def __str__(self) -> str:
        lines = [str(p) for p in self.problems]
        lines.extend(f"note: {n}" for n in self.notes)
        lines.extend(self.chain.lines())
        outcome = "ok" if self.ok else f"{len(self.problems)} problem(s)"
        lines.append(
            f"checked {self.events_checked} event(s) and {self.refs_checked} ref(s): {outcome}"
        )
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        """A plain-data form, for JSON output."""
        return {
            "ok": self.ok,
            "events_checked": self.events_checked,
            "refs_checked": self.refs_checked,
            "problems": [p.to_dict() for p in self.problems],
            "notes": list(self.notes),
            "chain": self.chain.to_dict(),
        }


def verify_ledger(
    ledger: Ledger,
    *,
    progress: Callable[[int, int], None] | None = None,
    extra_checks: Iterable[Callable[[Ledger], Iterable[Problem]]] = (),
    head: str | None = None,
    deep: bool = True,
) -> VerifyReport:
    """Check ``ledger`` and return every problem found (see the module docstring).

    ``deep=False`` skips the page-level scan of step 1: only for a store known to be sound
    (LMDB may then stop the process on a damaged page).
    """
    from ledger.store import STORE_DIR

    report = VerifyReport()
    directory = ledger.path / STORE_DIR
    try:
        check_data_file(directory / "data.mdb")
    except LedgerError as exc:
        report.problems.append(Problem(DAMAGED_STORE, detail=str(exc)))
        report.notes.append("nothing else was read: the store is damaged")
        return report
    scanned = deep_scan(directory, media_read_only=ledger.media_read_only) if deep else None
    if scanned is not None:
        damaged, sentence = scanned
        report.problems.append(Problem(DAMAGED_STORE if damaged else CHECK_FAILED, detail=sentence))
        report.notes.append("nothing else was read: the pages could not be shown to be sound")
        return report
    try:
        with ledger.snapshot() as snap:
            readable = _check_events(ledger, snap, report, progress)
            _check_chain(snap, report, head)
    except LedgerError as exc:  # the store failed under the checks (damage found late)
        report.problems.append(Problem(DAMAGED_STORE, detail=str(exc)))
        return report
    if not readable:  # the program's checks read through the indexes
        report.notes.append("the program's own checks were not run: they read the indexes")
        return report
    for check in extra_checks:
        report.problems.extend(_guarded(check, ledger))
    return report


def _guarded(check: Callable[[Ledger], Iterable[Problem]], ledger: Ledger) -> Iterator[Problem]:
    """The problems ``check`` finds, and one ``CheckFailed`` if it raises instead."""
    try:
        yield from check(ledger)
    except Exception as exc:  # verify never raises: a failing check is itself a finding
        name = getattr(check, "__name__", type(check).__name__)
        yield Problem(CHECK_FAILED, name=name, detail=f"{type(exc).__name__}: {exc}")


def _check_events(
    ledger: Ledger,
    snap: Snapshot,
    report: VerifyReport,
    progress: Callable[[int, int], None] | None,
) -> bool:
    """Check every event, its links, the address and index entries and the refs; return
    whether the entries could be read at all."""
    problems = report.problems
    total = snap.count_events()
    runs_readable = _runs_readable(snap, report)
    corrupt: set[bytes] = set()  # sequence keys of unusable events: their entries are skipped
    addr_present = 0
    expected: Counter[str] = Counter()  # index name -> entries a rebuild would write
    present: Counter[str] = Counter()  # index name -> of those, entries found as expected
    names: Recent[bytes, str] = Recent(_KEPT)  # index entry prefix -> index name
    # Whether each ref target lately asked for exists: refs recur (every case result links its
    # run, every judgment its execution, every retrieval a corpus's passages), and within one
    # snapshot the answer cannot change.
    reached: Recent[bytes, bool] = Recent(_KEPT)
    done = 0
    for seq_key, digest, data in snap.records():
        done += 1
        address = format_address(digest)
        if runs_readable and snap.addr_at(seq_key, digest):
            addr_present += 1
        if progress is not None and done % _PROGRESS_EVERY == 0:
            progress(done, total)
        actual = digest_of(data)
        if actual != digest:
            corrupt.add(seq_key)
            detail = (
                "its compressed record does not decompress"
                if undecodable(data)
                else f"its bytes hash to {format_address(actual)}"
            )
            problems.append(Problem(CORRUPT_EVENT, address, detail))
            continue
        try:
            event = Event.from_bytes(data)  # refuses what `import` refuses
        except LedgerError as exc:
            corrupt.add(seq_key)
            problems.append(Problem(MALFORMED_EVENT, address, str(exc)))
            continue
        if runs_readable:
            for ref in event.refs:
                if not reached.get(parse_address(ref), snap.exists):
                    problems.append(Problem(MISSING_REF, address, target=ref))
        try:
            prefixes = ledger.derive_prefixes(address, event)
        except LedgerError as exc:
            corrupt.add(seq_key)
            problems.append(Problem(UNREADABLE_EVENT, address, str(exc)))
            continue
        except Exception as exc:  # the application's indexer failed on bytes it once filed
            corrupt.add(seq_key)
            detail = f"the application cannot index it ({type(exc).__name__}: {exc})"
            problems.append(Problem(MALFORMED_EVENT, address, detail))
            continue
        for prefix in prefixes:
            name = names.get(prefix, snap.index_name)
            expected[name] += 1
            if runs_readable and snap.index_at(prefix + seq_key) == snap.entry_value(digest):
                present[name] += 1
    report.events_checked = done
    if progress is not None:
        progress(done, total)
    if not runs_readable:
        return False

    stored_addr, stored = _check_runs(snap, report, corrupt, snap.last_seq())
    if addr_present != done or stored_addr != addr_present:
        detail = _stale_detail(done - addr_present, stored_addr - addr_present)
        problems.append(Problem(STALE_INDEX, name="addr", detail=detail))
    _check_indexes(ledger, report, expected, present, stored)
    for name, digest in snap.refs():
        report.refs_checked += 1
        try:
            check_ref_name(name)
        except AddressError as exc:
            problems.append(Problem(MALFORMED_REF, name=name, detail=str(exc)))
            continue
        if len(digest) != 32:
            detail = f"it holds {len(digest)} bytes, not a 32-byte digest"
            problems.append(Problem(MALFORMED_REF, name=name, detail=detail))
        elif not snap.exists(digest):
            problems.append(Problem(DANGLING_NAME, format_address(digest), name=name))
    return True


def _runs_readable(snap: Snapshot, report: VerifyReport) -> bool:
    """Whether the runs' directory can be read; if not, that is the problem found, and the
    checks that look events up by address cannot be made."""
    try:
        snap.runs()
    except DamagedIndexesError as exc:
        report.problems.append(Problem(STALE_INDEX, name="runs", detail=str(exc)))
        report.notes.append(
            "links, refs and index entries were not checked: the run directory is unreadable"
        )
        return False
    return True


def _check_runs(
    snap: Snapshot, report: VerifyReport, corrupt: set[bytes], last: int
) -> tuple[int, Counter[str]]:
    """Walk every key of every run once: count the address entries and, by index name, the
    index entries (those of unusable events aside), and report what is wrong with the runs
    themselves: events no run covers or runs past the last event, a count the directory
    states wrongly, a missing filter, keys that are no entry, and tables no run uses that
    hold entries. Returns the two counts."""
    runs = snap.runs()
    stored_addr = 0
    stored: Counter[str] = Counter()
    found: list[str] = []
    covered = 1
    for run in runs.runs:
        addr = index = other = disordered = 0
        has_filter = False
        previous = b""
        for key, value in snap.run_items(run):
            tag = key[:1]
            if tag == ADDR_TAG:
                addr += 1
            elif tag == INDEX_TAG and run.is_record(key, value):
                name = snap.index_name(key[1:])
                for entry in run.entries_of(key, value):
                    index += 1
                    disordered += entry <= previous
                    previous = entry
                    if entry[-8:] not in corrupt:
                        stored[name] += 1
            elif key == FILTER_KEY:
                has_filter = True
            else:
                other += 1
        stored_addr += addr
        if runs.raw is None:
            continue  # the first layout's tables: no directory, no filter
        if run.first > covered:
            found.append(f"events {covered} to {run.first - 1} are in no run")
        covered = run.end
        if run.entries != addr + index:
            found.append(
                f"run {run.ident} (run{run.table:02d}) is listed with {run.entries} entries "
                f"but holds {addr + index}"
            )
        if not has_filter or snap.filter_of(run) is None:
            found.append(f"run {run.ident} (run{run.table:02d}) has no filter that can be read")
        if other:
            found.append(f"run{run.table:02d} holds {other} key(s) that are no entry")
        if disordered:
            found.append(
                f"run {run.ident} (run{run.table:02d}) files {disordered} index entries out of "
                "order"
            )
    if runs.raw is not None:
        if covered <= last:
            found.append(f"events {covered} to {last} are in no run")
        elif covered > last + 1:
            found.append(f"the runs cover events up to {covered - 1}, past the last ({last})")
        for table, entries in snap.unused_run_tables():
            found.append(f"run{table:02d} holds {entries} entries of no run")
    report.problems.extend(
        Problem(STALE_INDEX, name="runs", detail=f"{text}; run rebuild_indexes()") for text in found
    )
    return stored_addr, stored


def _check_indexes(
    ledger: Ledger,
    report: VerifyReport,
    expected: Counter[str],
    present: Counter[str],
    stored: Counter[str],
) -> None:
    skipped = ledger.indexer is None and any(n != TYPE_INDEX for n in stored)
    if skipped:
        report.notes.append(
            "application indexes were not checked: the ledger was opened without its indexer"
        )
    for name in sorted(set(expected) | set(stored)):
        if skipped and name != TYPE_INDEX:
            continue
        missing = expected[name] - present[name]
        extra = stored[name] - present[name]
        if missing or extra:
            detail = _stale_detail(missing, extra)
            report.problems.append(Problem(STALE_INDEX, name=name, detail=detail))


def chain_problems(snap: Snapshot) -> list[Problem]:
    """What ``verify`` finds wrong with the chain alone: the events no longer hash to the heads
    recorded for them (a compaction checks this before it records the head it replaces)."""
    report = VerifyReport()
    _check_chain(snap, report, None)
    return report.problems


def _check_chain(snap: Snapshot, report: VerifyReport, asked: str | None) -> None:
    """Re-derive every commit's head from the events it added (see ``ledger.chain``)."""
    summary = report.chain
    if not snap.has_chain():
        summary.present = False
        if asked is not None:
            report.problems.append(
                Problem(UNKNOWN_HEAD, detail=f"{asked}: this ledger has no chain to look in")
            )
        return
    wanted = _parse_head(asked, report)
    summary.asked = asked
    _read_origin(snap, report)
    records = snap.records()
    pending = next(records, None)  # the next event record not yet matched to a commit
    previous, expected_first, broken_before = GENESIS, 1, False
    outside: list[int] = []  # events between commits that no commit added
    for key, value in snap.chain_entries():
        try:
            record = unpack_record(key, value)
        except ValueError:
            report.problems.append(
                Problem(BROKEN_CHAIN, detail=f"chain record {key.hex()} is not 8 + 48 bytes")
            )
            return
        summary.commits += 1
        found = _commit_problems(record, summary.commits, previous, expected_first)
        head = sha256(previous)
        missing = 0
        seq, end = record.first, record.first + record.count
        while seq < end:
            while pending is not None and _SEQ.unpack(pending[0])[0] < seq:
                outside.append(_SEQ.unpack(pending[0])[0])
                pending = next(records, None)
            # Jump to the next stored event rather than step through the numbers before it:
            # a count damaged on disk can claim billions of events.
            stored = end if pending is None else min(_SEQ.unpack(pending[0])[0], end)
            missing += stored - seq
            if pending is None or stored == end:
                break
            head.update(pending[1])
            pending = next(records, None)
            seq = stored + 1
        if missing:
            found.append(f"{missing} of its {record.count} event(s) are missing")
        derived = head.digest()
        if derived != record.head:
            found.append(
                f"its events hash to {format_address(derived)}, not to its recorded head "
                f"{format_address(record.head)} (an event was deleted, reordered or rewritten)"
            )
        for text in found:
            report.problems.append(Problem(BROKEN_CHAIN, detail=f"commit {record.commit}: {text}"))
        broken_before = broken_before or bool(found)
        if wanted is not None and summary.found is None and record.head == wanted:
            summary.found = record.commit
            if broken_before:
                report.problems.append(
                    Problem(
                        UNKNOWN_HEAD,
                        detail=f"{asked} was commit {record.commit}, but the history up to it "
                        "no longer hashes to it",
                    )
                )
        previous, expected_first = record.head, record.first + record.count
        summary.head = format_address(derived)
    if outside:
        report.problems.append(
            Problem(
                BROKEN_CHAIN,
                detail=f"{len(outside)} event(s) between commits were added by none, the "
                f"first at event {outside[0]}",
            )
        )
    _check_unchained(pending, records, expected_first, report)
    if wanted is not None and summary.found is None:
        detail = f"{asked} is not the head of any commit in this history"
        if summary.compacted_from is not None:
            detail += f" (it began by compacting a history whose head was {summary.compacted_from})"
        report.problems.append(Problem(UNKNOWN_HEAD, detail=detail))


def _read_origin(snap: Snapshot, report: VerifyReport) -> None:
    """Where the chain began: a migration from format 1, or a compaction (``meta`` records)."""
    for key, what in ((b"migrated", "migration"), (b"compacted", "compaction")):
        raw = snap.meta(key)
        if raw is None:
            continue
        try:
            record = decode(raw)
            if key == b"migrated":
                report.chain.migrated = int(record["events"])
            else:
                report.chain.compacted_from = str(record["head"])
        except (LedgerError, KeyError, TypeError, ValueError):
            report.problems.append(Problem(BROKEN_CHAIN, detail=f"its {what} record is unreadable"))


def _commit_problems(
    record: ChainRecord, number: int, previous: bytes, expected_first: int
) -> list[str]:
    found = []
    if record.commit != number:
        found.append(f"it is numbered {record.commit} but is the chain's record {number}")
    if record.first != expected_first:
        found.append(
            f"it starts at event {record.first}, but the commit before it ended at event "
            f"{expected_first - 1}"
        )
    return found


def _check_unchained(
    pending: tuple[bytes, bytes, bytes] | None,
    records: Iterator[tuple[bytes, bytes, bytes]],
    expected_first: int,
    report: VerifyReport,
) -> None:
    """Report events that no commit added (appended behind the chain's back)."""
    if pending is None:
        return
    first = _SEQ.unpack(pending[0])[0]
    count = 1 + sum(1 for _ in records)
    report.problems.append(
        Problem(
            BROKEN_CHAIN,
            detail=f"{count} event(s) from event {first} on were added by no commit "
            f"(the chain ends at event {expected_first - 1})",
        )
    )


def _parse_head(asked: str | None, report: VerifyReport) -> bytes | None:
    if asked is None:
        return None
    try:
        return parse_address(asked.strip().lower())
    except AddressError:
        report.problems.append(
            Problem(
                UNKNOWN_HEAD,
                detail=f"{asked!r} is not a head: expected 'sha256:' and 64 hex digits",
            )
        )
        return None


def _stale_detail(missing: int, extra: int) -> str:
    parts = []
    if missing:
        parts.append(f"{missing} entr{'y' if missing == 1 else 'ies'} missing")
    if extra:
        parts.append(f"{extra} entr{'y' if extra == 1 else 'ies'} that a rebuild would drop")
    return ", ".join(parts) + "; run rebuild_indexes()"
