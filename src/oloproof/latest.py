"""What ``latest`` names: the newest top-level run that finished.

Requirements (``docs/running.md``, "Which run is latest"):

1. A run moves the ``latest`` ref when it finishes: every planned case ran, though some may
   have errored. A run stopped by bad input, an interrupted run and a diagnosis's child run
   never become ``latest``, so the commands that decide or diagnose (``compare``,
   ``diagnose``, ``inspect``'s gate) never take such a run for it. Newest means started last,
   as ``oloproof runs`` orders them: an older run resumed to its end after a newer one
   finished leaves ``latest`` where it is (``move_latest``).
2. A ledger written before that rule may hold ``latest`` on a run that did not finish;
   ``latest_run`` then walks back to the newest top-level run that did. The ref moves in the
   commit that stores the run's end (``runner``), so a process killed at any moment leaves
   its run either unfinished or ``latest``.
3. When the newest top-level run did not finish, ``latest_note`` says so in one sentence
   (which run, why, and which run ``latest`` names instead), so nobody mistakes the run they
   just started for the one a command read. A run another process is still writing is said
   to be running, not to have stopped, and no ``--resume`` is offered for it.
4. A run brought by an ``oloproof ledger import`` that was cut short (``import_unfinished``)
   is finished by importing the same archive again, never by ``--resume``, which would
   execute its cases here and record them as the run made elsewhere; every sentence that
   would offer ``--resume`` for it says so instead (``import_again_text``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from ledger import Event, Ledger, RefConflictError
from oloproof import events as ev
from oloproof.bodies import planned_cases
from oloproof.display import an_event
from oloproof.errors import LedgerAccessError, UnknownIdError
from oloproof.redaction import redact_text
from oloproof.runlock import writer_of

LATEST = "latest"
"""The ref a finished top-level run moves."""

FINISHED = "complete"
"""The run_end state of a run whose every planned case ran."""

_REASON_LIMIT = 160


def run_end(ledger: Ledger, run_id: str) -> Mapping[str, Any] | None:
    """The body of a run's latest run_end event, or None when it has none."""
    found: Mapping[str, Any] | None = None
    for _, event in ledger.lookup_events("run_meta", run_id):
        if event.type == ev.RUN_END:
            found = event.body
    return found


def import_unfinished(ledger: Ledger, run_id: str) -> bool:
    """Whether the run came through an ``oloproof ledger import`` that did not finish. A run
    writes its event and the ref of its id in one commit, and an import sets the refs it
    carries (a run's id among them) only once all its events are written: a run event without
    that ref arrived by an import cut short, and importing the same archive again completes
    it."""
    return ledger.get_ref(run_id) is None


def import_again_text(run_id: str) -> str:
    """What to do about a run ``import_unfinished`` finds."""
    return (
        f"{run_id} came into this ledger by an `oloproof ledger import` that did not finish; "
        "import the same archive again to complete it (oloproof ledger import ARCHIVE)"
    )


@dataclass(frozen=True)
class StillRunning:
    """A run a live process is writing now (a run or a ``--resume`` under way), as a command
    that reads it finds it: it reads only the cases written so far."""

    run_id: str
    cases: int
    planned_cases: int
    pid: int

    def state(self) -> str:
        """``is still running (k of n cases so far; another process (pid P) is writing it)``."""
        return (
            f"is still running ({self.cases} of {self.planned_cases} cases so far; another "
            f"process (pid {self.pid}) is writing it)"
        )

    def text(self) -> str:
        """``run_… is still running (…)``."""
        return f"{self.run_id} {self.state()}"

    def to_json(self) -> dict[str, Any]:
        return {"run_id": self.run_id, "cases": self.cases, "planned_cases": self.planned_cases}


def still_running(ledger: Ledger, body: Mapping[str, Any]) -> StillRunning | None:
    """The run ``body`` records, if a live process is writing it now, else None."""
    run_id = str(body["run_id"])
    pid = writer_of(ledger.path, run_id)
    if pid is None:
        return None
    cases = sum(1 for _ in ledger.iter_lookup("run_cases", run_id))
    return StillRunning(run_id, cases, planned_cases(body), pid)


def _top_level(body: Mapping[str, Any]) -> bool:
    return not body.get("parent")


def _finished(ledger: Ledger, body: Mapping[str, Any]) -> bool:
    end = run_end(ledger, body["run_id"])
    return end is not None and end.get("state") == FINISHED


def latest_run(ledger: Ledger) -> str | None:
    """The address of the run ``latest`` names: the newest top-level run that finished."""
    address = ledger.get_ref(LATEST)
    if address is not None and ledger.has(address):
        event = ledger.get(address)
        if event.type == ev.RUN and _top_level(event.body) and _finished(ledger, event.body):
            return address
    for candidate, event in _newest_first(ledger):
        if _top_level(event.body) and _finished(ledger, event.body):
            return candidate
    return None


def _newest_first(ledger: Ledger) -> list[tuple[str, Event]]:
    """Every run, newest first, through the checked list of runs: read through the index by
    type alone, a run one damaged page hid there was passed over, and ``latest`` (or the note
    on a newer run that did not finish) named an older run without a word."""
    return listed_runs(ledger)[::-1]


def listed_runs(ledger: Ledger) -> list[tuple[str, Event]]:
    """Every ``(address, run event)``, in append order, read through the ledger's index by
    type; refused (``index_disagreement``) when that index misses a run the ledger holds.

    Each run's id is a ref to its run event, written with it: a run event an id names that
    the index does not list is hidden by a damaged index page, and a list of runs without it
    would look whole ("no runs yet"). A ref to an event the ledger lacks, or to another kind
    of event, is ``verify``'s to name. An entry of a damaged page may file another kind of
    event under runs, which is no run to list.
    """
    runs = list(ledger.events(ev.RUN))
    for address, event in runs:
        if event.type != ev.RUN:
            raise LedgerAccessError(
                f"the ledger's index of runs lists {address}, which is {an_event(event.type)}: "
                "rebuild the indexes with: oloproof ledger rebuild-indexes"
            )
    listed = {address for address, _ in runs}
    for run_id, address in ledger.refs(ev.RUN_ID_PREFIX):
        if address in listed or not ledger.has(address) or ledger.get(address).type != ev.RUN:
            continue
        raise index_disagreement(run_id, "its run event is missing from the index of runs")
    return runs


def index_disagreement(run_id: str, problem: str) -> LedgerAccessError:
    """The refusal of a read that found ``run_id``'s indexes disagreeing (``problem`` says
    how), naming ``oloproof ledger rebuild-indexes``."""
    # Rebuilt indexes still miss a case result the ledger does not hold (an archive imported
    # without it): verify lists those, so the hint names it too.
    return LedgerAccessError(
        f"the ledger's indexes disagree with run {run_id}: {problem}; "
        "rebuild them with: oloproof ledger rebuild-indexes (if they still disagree, the "
        "ledger lacks some of the run's events: oloproof verify lists them)"
    )


def move_latest(ledger: Ledger, address: str, body: Mapping[str, Any]) -> None:
    """Point ``latest`` at the top-level run of ``body`` (at ``address``), finishing now, unless
    it names a run that started after it: a run resumed to its end, or the slower of two runs
    side by side. A compare-and-swap: when another run moved ``latest`` between the look and
    the move, look again. Called inside the batch that stores the run's end, the swap is
    checked again as it commits (``RefConflictError`` from the batch: write it again)."""
    while True:
        held = ledger.get_ref(LATEST)
        current = latest_run(ledger)
        if current is not None and _started_later(ledger.get(current).body, body):
            return
        try:
            ledger.set_ref(LATEST, address, expected=held)
            return
        except RefConflictError:
            continue  # another run moved it meanwhile: that run may be the newer one


def _started_later(one: Mapping[str, Any], other: Mapping[str, Any]) -> bool:
    """Whether run ``one`` started after run ``other``. A start time is kept to the second;
    within one, the run id says which came later (it begins with its creation time, to the
    millisecond), as the order the runs were recorded in does for ``oloproof runs``."""
    return (started_at(one["created_at"]), one["run_id"]) > (
        started_at(other["created_at"]),
        other["run_id"],
    )


def started_at(created_at: str) -> datetime:
    """A run's ``created_at`` as a moment (read as UTC when it names no zone)."""
    moment = datetime.fromisoformat(created_at)
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def resolve_latest(ledger: Ledger) -> str:
    """``latest_run``, or an ``UnknownIdError`` saying why no run is ``latest`` yet."""
    address = latest_run(ledger)
    if address is not None:
        return address
    newest = _newest_top_level(ledger)
    why = f"; the newest run, {_unfinished_text(ledger, newest[1])}" if newest is not None else ""
    raise UnknownIdError(f"no run has finished yet, so `latest` names no run{why}")


def latest_note(ledger: Ledger) -> str | None:
    """One sentence when the newest top-level run is not ``latest`` because it did not finish."""
    newest = _newest_top_level(ledger)
    if newest is None or _finished(ledger, newest[1]):
        return None
    chosen = latest_run(ledger)
    if chosen is None:
        return None
    chosen_id = ledger.get(chosen).body["run_id"]
    return (
        f"note: the newest run, {_unfinished_text(ledger, newest[1])}; `latest` is {chosen_id}, "
        "the newest run that finished"
    )


def unfinished_text(ledger: Ledger, body: Mapping[str, Any]) -> str | None:
    """``run_…, did not finish (k of n cases; …)`` or ``run_…, stopped: why`` for a run that
    ended (or was killed) before all its planned cases ran; None for one that finished or that
    another process is still writing (``still_running`` says that)."""
    if _finished(ledger, body) or still_running(ledger, body) is not None:
        return None
    return _unfinished_text(ledger, body)


def _newest_top_level(ledger: Ledger) -> tuple[str, Mapping[str, Any]] | None:
    for address, event in _newest_first(ledger):
        if _top_level(event.body):
            return address, event.body
    return None


def _unfinished_text(ledger: Ledger, body: Mapping[str, Any]) -> str:
    """``run_… is still running (…)``, ``run_… stopped: why`` or ``run_… did not finish (k of n
    cases; …)``."""
    run_id = body["run_id"]
    # A run another process writes has not stopped, whatever an earlier go of it recorded, and
    # the resume the other sentences offer would be refused while it runs.
    running = still_running(ledger, body)
    if running is not None:
        return f"{run_id}, {running.state()}"
    end = run_end(ledger, run_id)
    if end is not None and end.get("state") == "stopped":
        # Redacted before it is cut: a secret declared after the run was stored whole, and a
        # cut through it would leave a part the redaction of what is printed cannot find.
        reason = redact_text(str(end.get("reason") or "no reason recorded"))
        if len(reason) > _REASON_LIMIT:
            reason = reason[: _REASON_LIMIT - 1] + "…"
        return f"{run_id}, stopped: {reason}"
    planned = planned_cases(body)
    # A resume killed after writing cases wrote no end: the index counts them.
    written = sum(1 for _ in ledger.iter_lookup("run_cases", run_id))
    cases = max(int(end["cases"]), written) if end is not None else written
    if import_unfinished(ledger, run_id):
        finish = import_again_text(run_id)
    else:
        finish = f"finish it with: oloproof run --resume {run_id}"
    return f"{run_id}, did not finish ({cases} of {planned} cases; {finish})"
