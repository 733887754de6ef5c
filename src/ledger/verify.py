"""``verify``: an fsck for the ledger that lists every problem and changes nothing.

It reads one consistent snapshot and checks that

- every stored event's bytes still hash to its address (``CorruptEvent``);
- every address in an event's ``refs`` is a stored event (``MissingRef``);
- every named ref points at a stored event (``DanglingName``);
- the ``addr`` table and every index equal what a rebuild from the events would write
  (``StaleIndex``);

then runs the application's own checks. Nothing is repaired or deleted: a corrupt event is
evidence. ``rebuild_indexes`` mends stale indexes; the rest needs a person.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ledger.address import digest_of, format_address, parse_address
from ledger.event import event_from_trusted
from ledger.format import TYPE_INDEX, index_name_of

if TYPE_CHECKING:
    from ledger.store import Ledger

__all__ = [
    "CORRUPT_EVENT",
    "DANGLING_NAME",
    "MISSING_REF",
    "STALE_INDEX",
    "Problem",
    "VerifyReport",
    "verify_ledger",
]

CORRUPT_EVENT = "CorruptEvent"
MISSING_REF = "MissingRef"
DANGLING_NAME = "DanglingName"
STALE_INDEX = "StaleIndex"

_PROGRESS_EVERY = 1024


@dataclass(frozen=True)
class Problem:
    """One thing ``verify`` found wrong.

    ``kind`` is ``CorruptEvent``, ``MissingRef``, ``DanglingName``, ``StaleIndex`` or a kind of
    the application's own (``StaleSummary``…). ``address`` is the event concerned, ``target``
    the address a broken link points at, ``name`` the ref or index concerned.
    """

    kind: str
    address: str | None = None
    detail: str = ""
    target: str | None = None
    name: str | None = None

    def __str__(self) -> str:
        if self.kind == CORRUPT_EVENT:
            text = f"corrupt event {self.address}"
        elif self.kind == MISSING_REF:
            text = f"broken link from {self.address} to {self.target}"
        elif self.kind == DANGLING_NAME:
            text = f"dangling ref {self.name} to missing event {self.address}"
        elif self.kind == STALE_INDEX:
            text = f"stale index {self.name}"
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
class VerifyReport:
    """What ``verify`` found: every problem, and how much it checked."""

    problems: list[Problem] = field(default_factory=list)
    events_checked: int = 0
    refs_checked: int = 0
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when no problem was found."""
        return not self.problems

    def __str__(self) -> str:
        lines = [str(p) for p in self.problems]
        lines.extend(f"note: {n}" for n in self.notes)
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
        }


def verify_ledger(
    ledger: Ledger,
    *,
    progress: Callable[[int, int], None] | None = None,
    extra_checks: Iterable[Callable[[Ledger], Iterable[Problem]]] = (),
) -> VerifyReport:
    """Check ``ledger`` and return every problem found (see the module docstring)."""

    report = VerifyReport()
    problems = report.problems
    with ledger.snapshot() as snap:
        total = snap.count_events()
        corrupt: set[bytes] = set()  # sequence keys of corrupt events: their entries are skipped
        addr_present = 0
        expected: Counter[str] = Counter()  # index name -> entries a rebuild would write
        present: Counter[str] = Counter()  # index name -> of those, entries found as expected
        names: dict[bytes, str] = {}  # index entry prefix -> index name
        done = 0
        for seq_key, digest, data in snap.records():
            done += 1
            address = format_address(digest)
            if snap.addr_get(digest) == seq_key:
                addr_present += 1
            if progress is not None and done % _PROGRESS_EVERY == 0:
                progress(done, total)
            actual = digest_of(data)
            if actual != digest:
                corrupt.add(seq_key)
                problems.append(
                    Problem(CORRUPT_EVENT, address, f"its bytes hash to {format_address(actual)}")
                )
                continue
            try:
                event = event_from_trusted(data)
            except Exception:  # hashes right yet does not decode: only if written wrongly
                corrupt.add(seq_key)
                problems.append(Problem(CORRUPT_EVENT, address, "its bytes do not decode"))
                continue
            for ref in event.refs:
                if not snap.exists(parse_address(ref)):
                    problems.append(Problem(MISSING_REF, address, target=ref))
            for prefix in ledger.derive_prefixes(address, event):
                name = names.get(prefix)
                if name is None:
                    if len(names) > 65536:
                        names.clear()
                    name = names[prefix] = index_name_of(prefix)
                expected[name] += 1
                if snap.index_get(prefix + seq_key) == digest:
                    present[name] += 1
        report.events_checked = done
        if progress is not None:
            progress(done, total)

        stored_addr = snap.count_addr()
        if addr_present != done or stored_addr != addr_present:
            problems.append(
                Problem(
                    STALE_INDEX,
                    name="addr",
                    detail=_stale_detail(done - addr_present, stored_addr - addr_present),
                )
            )

        stored: Counter[str] = Counter()
        for key, _ in snap.index_entries():
            if key[-8:] not in corrupt:
                stored[index_name_of(key)] += 1
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
                problems.append(
                    Problem(STALE_INDEX, name=name, detail=_stale_detail(missing, extra))
                )

        for name, digest in snap.refs():
            report.refs_checked += 1
            if not snap.exists(digest):
                problems.append(Problem(DANGLING_NAME, format_address(digest), name=name))

    for check in extra_checks:
        problems.extend(check(ledger))
    return report


def _stale_detail(missing: int, extra: int) -> str:
    parts = []
    if missing:
        parts.append(f"{missing} entr{'y' if missing == 1 else 'ies'} missing")
    if extra:
        parts.append(f"{extra} entr{'y' if extra == 1 else 'ies'} that a rebuild would drop")
    return ", ".join(parts) + "; run rebuild_indexes()"
