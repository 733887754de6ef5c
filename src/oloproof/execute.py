"""The scheduler: run a system over cases, judge each output, and record it all as events.

Cases run ``concurrency`` at a time (worker coroutines pulling from one queue; sync systems on a
thread pool). Each finished case becomes an execution event, one judgment event per evaluator
and a case_result event that ties them to the run. Events are written in batched transactions;
Ctrl-C, SIGTERM or an exception loses only the cases still in flight (the rest is written on the
way out), a hard kill at most the last two unwritten batches too (one may be being written
while the next gathers), and the run can be resumed.

Caches, and where a result comes from (``CacheCounts``):

- An execution is reused from an earlier run (a *hit*) when one of the same identity (the
  system's identity, which includes the code fingerprint and ``version``, any intervention, and
  the case input; under a gold-context intervention, the case's gold passages too, which take
  the retrieved context's place) is stored and did not error, unless the run is
  ``--no-cache`` or the system does not let its executions be reused (an HTTP endpoint
  without ``reuse``).
- A judgment is reused when the execution it judges holds one of the same identity: the
  evaluator's spec and the values of exactly what it declares it reads
  (``oloproof.evaluators.reads``). A failed judge call is never reused.
- Within one run each execution identity is executed, and each judgment identity judged, once:
  a repeated input *shares* what its first occurrence made (a repeat of something the first
  occurrence reused counts as reused). Shared results are counted apart from hits and misses,
  so a brand-new ledger never shows a hit.
"""

from __future__ import annotations

import asyncio
import dataclasses
import gc
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from ledger import CodecError, Event, Ledger, Prepared
from oloproof import events as ev
from oloproof.aio import Deadline
from oloproof.bodies import CaseResultBody, ExecutionBody, JudgmentBody, VerdictCopy
from oloproof.call_totals import CallTotals
from oloproof.dataset import Case
from oloproof.engines import Engine
from oloproof.engines.local import LocalEngine, Outcome, error_record, interrupts_the_run
from oloproof.errors import OloproofError
from oloproof.evaluators.base import AsyncEvaluator, CaseView, Evaluator, ExcludesByCase
from oloproof.evaluators.reads import ReadDeclaration, reads_of
from oloproof.identities import (
    HIT,
    MISS,
    SHARED,
    Made,
    ReadKeys,
    RunMemory,
    bits,
    cached_judgments,
    execution_identity,
    judgment_identity,
    reuses_executions,
    system_identity,
)
from oloproof.repeats import combine_verdicts
from oloproof.results import Verdict
from oloproof.sdk import watching_late_records
from oloproof.stored_form import (
    Stored,
    evaluator_part,
    make_stored,
    remember,
    stored_judgment,
)
from oloproof.systems.base import (
    ExecContext,
    Execution,
    System,
    UnrecordableOutput,
    plain_output,
    unrecordable,
)

Progress = Callable[[int, int], None]
AnyEvaluator = Evaluator | AsyncEvaluator
Labeller = Callable[[Case, Execution | None], dict[str, str]]

# Larger commits amortise the ledger's hash-keyed tables, whose pages every commit rewrites (a
# 100,000-case full run spent ~0.15 ms a case writing in 1,000-event commits, ~0.085 ms in
# 10,000-event ones; 20,000 saved under 10% more); a hard kill loses at most this tail.
_FLUSH_EVENTS = 10_000
_FLUSH_SECONDS = 2.0
# What waits for a commit is held in memory, decoded as well as encoded (a staged case's
# execution, its retrieval and context, ~5x its stored bytes): bounded in bytes as well, or a
# fast run of large cases (a diagnosis replaying 2,000 cached generations in under 2 s) holds
# them all. The bound also sets the run's memory: LMDB keeps, for reuse, the pages of its
# largest commit, and once the hash-keyed tables outgrow a commit each new entry dirties a page
# of its own. With 1 MB rather than 4 MB a 100,000-case run held 40 MB less (trivial cases: 89
# against 129 MB; 82 against 118 MB at 30,000 staged ones), in the same time, for about 1.5x
# the bytes written.
_FLUSH_BYTES = 1 << 20
# A flush is written on a thread of its own when the run used less CPU than this share of the
# time since the last one (``writes_behind``). Measured at each flush, every thread but the
# writer's counted: 2,000 cases sleeping 20 ms at concurrency 50, 0.57-0.89 (1.22 to 1.12
# times the loop alone written behind); a trivial sync system, 1.01-1.04; a staged one,
# 0.99-1.04; a cached re-run, 0.98-1.0 (35% slower behind). The event loop's thread alone
# put a staged run, whose stages run on threads, at 0.84-0.93: close enough to 0.8 to be
# taken for a waiting one.
_BEHIND_BUSY = 0.9
# A run that mostly waits also flushes once it holds this many events and this long passed:
# its thread has the time, and the run's end then waits for a small last commit. The 2,000
# sleeping cases, 1 MB a flush: the last commit ~2,500 events, ~30 ms; with these, ~400 events,
# 6-10 ms (1.103x to 1.091x the loop alone, medians of 5 alternations). Not fewer events: a
# slow model's run committing a few events four times a second rewrites a path of B-tree pages
# for each, where one commit every 2 s shares them.
_EAGER_EVENTS = 512
_EAGER_SECONDS = 0.25
# A run whose every worker waits on its system (a stalled model server), or whose event loop a
# case holds (a synchronous call made on the loop, an async system's blocking code), finishes
# no case to flush on: a thread writes what it finished before once no flush came for this
# long. Twice the flush time, so that a run whose cases do finish keeps flushing on its own.
_IDLE_FLUSH_SECONDS = 2 * _FLUSH_SECONDS
# Cases that never wait (an async system that awaits nothing, a fully cached run) would keep
# the event loop from running anything else, Ctrl-C's handler included: a worker hands it a
# turn at least this often.
_YIELD_SECONDS = 0.05
# Texts a writer remembers having added, so that it does not prepare them again: enough for the
# passages a corpus keeps handing back, bounded whatever the number of distinct ones.
_TEXTS_KEPT = 16_384
# Stage retrievals a writer remembers: enough for the cases in flight between a stage and the
# execution that used it.
_RETRIEVALS_KEPT = 1_024


@dataclass
class CacheCounts:
    """Where a run's results came from: reused from an earlier run (hit), made by this run
    (miss), or shared within this run by a repeated input; the report's Cache and Stages lines."""

    execution_hit: int = 0
    execution_miss: int = 0
    judgment_hit: int = 0
    judgment_miss: int = 0
    stages: dict[str, list[int]] = field(default_factory=dict)
    execution_shared: int = 0
    judgment_shared: int = 0
    calls: CallTotals = field(default_factory=CallTotals)  # the system's own model calls

    def add_execution(self, source: str) -> None:
        if source == HIT:
            self.execution_hit += 1
        elif source == MISS:
            self.execution_miss += 1
        else:
            self.execution_shared += 1

    def add_judgment(self, source: str) -> None:
        if source == HIT:
            self.judgment_hit += 1
        elif source == MISS:
            self.judgment_miss += 1
        else:
            self.judgment_shared += 1

    def add_stage(self, stage: str, hit: bool) -> None:
        counts = self.stages.setdefault(stage, [0, 0])
        counts[0 if hit else 1] += 1

    def add(self, other: CacheCounts) -> None:
        """Add ``other``'s counts to these."""
        self.execution_hit += other.execution_hit
        self.execution_miss += other.execution_miss
        self.judgment_hit += other.judgment_hit
        self.judgment_miss += other.judgment_miss
        self.execution_shared += other.execution_shared
        self.judgment_shared += other.judgment_shared
        self.calls.add(other.calls)
        for stage, (hit, miss) in other.stages.items():
            counts = self.stages.setdefault(stage, [0, 0])
            counts[0] += hit
            counts[1] += miss


class LedgerStageCache:
    """Stage outputs as ``oloproof.stage`` events, found by identity through the index."""

    def __init__(self, ledger: Ledger, writer: EventWriter) -> None:
        self._ledger = ledger
        self._writer = writer

    async def lookup(self, identity: str) -> dict[str, Any] | None:
        """The stage body with ``identity`` plus its ``address``, or None."""
        pending = self._writer.pending_stage(identity)
        if pending is not None:
            return pending
        found = self._ledger.latest_event("stage", identity)
        if found is None:
            return None
        address, event = found
        self._writer.saw_stage(address, event.body)
        return {**event.body, "address": address}

    def record(self, stage: str, identity: str, result: dict[str, Any]) -> str:
        body = {"stage": stage, "identity": identity, **result}
        return self._writer.add_stored(make_stored(ev.STAGE, body))


class EventWriter:
    """Buffers events and writes them in batched transactions.

    Each event is made ready to store (encoded, hashed, its index entries worked out) as it is
    added, so a flush only writes. When the run mostly waits on its system (a model server),
    a flush it asks for on its way (``maybe_flush``) is written on a thread of its own while
    the cases go on (``_Behind``), and the run then hardly waits on its ledger.
    """

    def __init__(self, ledger: Ledger) -> None:
        self._ledger = ledger
        self._pending: list[Prepared] = []
        self._pending_bytes = 0
        self._stages: dict[str, dict[str, Any]] = {}
        self._behind: _Behind | None = None
        self._texts: dict[str, None] = {}  # texts added lately, oldest first
        # The retrievals of retrieve stages stored or found lately, by address: an execution
        # made from one is then stored as referring to it without making the stage again.
        self.retrievals: dict[str, Any] = {}
        self._last_flush = time.monotonic()
        # The process's CPU time at the last flush, and what writes on the writer's thread
        # used of it since (``writes_behind`` asks what the run itself used).
        self._last_cpu = time.process_time()
        self._writer_cpu = 0.0
        # Taken by the run's thread as it hands what is pending to a write or takes a write's
        # items back, and by ``flush_idle``'s thread as it copies what is pending: never as
        # an event is added.
        self._handing = threading.Lock()
        self._idle_last: Prepared | None = None  # the last event ``flush_idle`` wrote

    def add(self, event: Event) -> str:
        """Buffer ``event``; return its address."""
        item = self._ledger.prepare(event)
        self._pending.append(item)
        self._pending_bytes += len(item.data)
        return item.address

    def add_stored(self, stored: Stored) -> str:
        """Buffer an execution, stage or case result event and the texts or case it refers to;
        return its address.

        A part added lately is not prepared again (a corpus's passages recur from case to
        case); one added long ago is, and the ledger skips storing it a second time.
        """
        texts = self._texts
        for address, part in stored.parts:
            if address not in texts:
                remember(texts, address, None, _TEXTS_KEPT)
                self.add(part)
        address = self.add(stored.event)
        if stored.event.type == ev.STAGE:
            self._stages[stored.body["identity"]] = {**stored.body, "address": address}
            self.saw_stage(address, stored.body)
        return address

    def saw_stage(self, address: str, body: Mapping[str, Any]) -> None:
        """Remember a retrieve stage's retrieval (see ``retrievals``)."""
        if body.get("stage") == "retrieve" and "retrieval" in body:
            remember(self.retrievals, address, body["retrieval"], _RETRIEVALS_KEPT)

    def pending_stage(self, identity: str) -> dict[str, Any] | None:
        found = self._stages.get(identity)
        if found is None and self._behind is not None:
            found = self._behind.stages.get(identity)
        return found

    def maybe_flush(self, memory: RunMemory) -> None:
        """Write what has gathered when it is enough events or time: on a thread of its own
        when the run's thread has mostly been waiting since the last flush, else at once;
        ``memory`` then forgets what was written.

        A run that mostly waits flushes sooner as well (``_EAGER_EVENTS``), so that its end
        waits for a small last commit.
        """
        now = time.monotonic()
        since = now - self._last_flush
        full = bool(self._pending) and (
            len(self._pending) >= _FLUSH_EVENTS
            or self._pending_bytes >= _FLUSH_BYTES
            or since > _FLUSH_SECONDS
        )
        if self._behind is not None:
            if not full and self._behind.thread.is_alive():
                return
            # Full while the write before is still going: wait for it, so that what is
            # pending never grows past one flush (a commit twice the size dirties twice the
            # pages, which LMDB then keeps in memory).
            self._settle(memory)
        if not full and (len(self._pending) < _EAGER_EVENTS or since <= _EAGER_SECONDS):
            return
        cpu = time.process_time()
        if writes_behind(cpu - self._last_cpu - self._writer_cpu, since):
            self._write_behind(memory, now, cpu)
        elif full:
            written = memory.finished()
            self._write_pending()
            memory.forget(written)
            self._last_flush, self._last_cpu, self._writer_cpu = now, cpu, 0.0

    def _write_behind(self, memory: RunMemory, now: float, cpu: float) -> None:
        """Hand what is pending to a write on a thread of its own (``_Behind``); ``now`` and
        ``cpu`` are the clock and the process's CPU time when it was asked for."""
        with self._handing:
            self._behind = _Behind(self._ledger, self._pending, self._stages, memory)
            self._pending, self._pending_bytes, self._stages = [], 0, {}
        self._last_flush, self._last_cpu, self._writer_cpu = now, cpu, 0.0

    def flush_idle(self) -> None:
        """Write what waited longer than ``_IDLE_FLUSH_SECONDS`` since the last flush, unless
        a write is under way (``_IdleFlushes``'s call, on a thread of its own: the run's thread
        may be held in a case's code, even one that never hands the loop a turn).

        A copy is written, and nothing the run's thread keeps is changed: its next flush
        writes these events again, which the ledger stores once. The copy is a start of what
        the run added, in order, so every event in it comes after those it refers to.
        """
        if time.monotonic() - self._last_flush <= _IDLE_FLUSH_SECONDS:
            return
        with self._handing:
            behind = self._behind
            if behind is not None and (behind.thread.is_alive() or behind.error is not None):
                return  # what is pending may refer to what that write has not stored
            items = self._pending[:]
        if items and items[-1] is not self._idle_last:
            self._ledger.put_all(items)
            self._idle_last = items[-1]

    def _settle(self, memory: RunMemory) -> None:
        """Wait for the write started on its way and raise what it raised; ``memory`` then
        forgets what it wrote (the ledger has it now)."""
        behind = self._behind
        if behind is None:
            return
        behind.thread.join()
        self._writer_cpu += behind.cpu
        with self._handing:
            # Only once joined: a Ctrl-C in the join leaves it to ``flush``.
            self._behind = None
            if behind.error is not None:
                # Written again with what followed them, or not at all: later events refer
                # to these, and none may be stored without what it refers to.
                self._pending[:0] = behind.items
                self._pending_bytes += sum(len(item.data) for item in behind.items)
                self._stages = {**behind.stages, **self._stages}
        if behind.error is not None:
            raise behind.error
        memory.forget(behind.written)

    def flush(self, memory: RunMemory) -> None:
        """Write everything added, and wait until it is written."""
        try:
            self._settle(memory)
        finally:
            # Not while a write started on the way may still be going (the join above was
            # interrupted): what is pending refers to what it writes, and would go first.
            if self._behind is None:
                self._write_pending()

    def _write_pending(self) -> None:
        if self._pending:
            self._ledger.put_all(self._pending)
            self._pending.clear()
            self._pending_bytes = 0
            self._stages.clear()


def writes_behind(cpu_s: float, wall_s: float) -> bool:
    """Whether a flush goes on a thread of its own, given the CPU time the run used (every
    thread of the process but the writer's: a sync system's threads hold the GIL as the event
    loop does) and the time that passed since the last one.

    Only when the run often waited (for a model server, a sleep): a thread writing beside a
    busy one makes both wait, as each LMDB read and put hands the GIL to the other, which may
    keep it up to the 5 ms switch interval.
    """
    return cpu_s < _BEHIND_BUSY * wall_s


class _IdleFlushes:
    """The thread that calls ``EventWriter.flush_idle`` every ``_FLUSH_SECONDS`` while a run
    goes: a thread, not a task, so that it writes even while a case holds the event loop."""

    def __init__(self, writer: EventWriter) -> None:
        self._writer = writer
        self._stopped = threading.Event()
        self.error: BaseException | None = None  # what a write raised; it stopped there
        self._thread = threading.Thread(target=self._flushes, name="oloproof-idle-flush")
        self._thread.start()

    def _flushes(self) -> None:
        main = threading.main_thread()
        try:
            # Also ends once the main thread has: a second Ctrl-C or SIGTERM ends the command
            # at once, skipping the ``stop`` in its cleanup, and the process would then wait
            # for this thread for ever.
            while not self._stopped.wait(_FLUSH_SECONDS) and main.is_alive():
                self._writer.flush_idle()
        except BaseException as exc:  # raised in the run's thread by ``execute_cases``
            self.error = exc

    def stop(self) -> None:
        """Stop it, once the write under way (if any) is done."""
        self._stopped.set()
        self._thread.join()


class _Behind:
    """One flush written on a thread of its own (``EventWriter.maybe_flush``).

    Until it is settled its stage outputs stay visible to the run (``pending_stage``), and the
    run keeps in memory the executions and judgments it holds: the run's own reads of the
    ledger find them only once it is settled.
    """

    def __init__(
        self,
        ledger: Ledger,
        items: list[Prepared],
        stages: dict[str, dict[str, Any]],
        memory: RunMemory,
    ) -> None:
        self.items = items
        self.stages = stages
        # What the run may forget once these are written: what it finished before now, whose
        # events are all among ``items``.
        self.written = memory.finished()
        self.error: BaseException | None = None
        self.cpu = 0.0  # the CPU time the write took, once written
        # Not a daemon: what was handed to it is written before the process exits.
        self.thread = threading.Thread(target=self._write, args=(ledger,), name="oloproof-writer")
        self.thread.start()

    def _write(self, ledger: Ledger) -> None:
        try:
            start = time.thread_time()
            try:
                ledger.put_all(self.items)
            finally:
                self.cpu = time.thread_time() - start
        except BaseException as exc:  # raised in the run's thread by EventWriter._settle
            self.error = exc


@dataclass
class RunSpec:
    """Everything a run needs besides the cases themselves."""

    run_id: str
    run_address: str
    system: System
    evaluators: Sequence[AnyEvaluator]
    concurrency: int
    timeout_s: float
    use_cache: bool = True
    use_stage_cache: bool = True
    reuse_judgments: bool = True
    """Whether an execution identical to a stored one keeps that one's judgments; off, every
    judgment is made again (a diagnosis's child runs: a judge sampled at a non-zero temperature
    is one draw, and a diagnosis made again must observe it again)."""
    intervention: dict[str, Any] | None = None
    replay: dict[str, Any] = field(default_factory=dict)
    labeller: Labeller | None = None
    # Where each case's system part runs; none: in this process (``LocalEngine``).
    engine: Engine | None = None
    repeats: int = 1
    """Executions of each case (``oloproof.repeats``): repeat r > 0 has its own execution
    identity, so it is a new sample, never a copy of repeat 0."""


CaseSink = Callable[[CaseResultBody], None]


@dataclass
class _Run:
    """One call of ``execute_cases``: its services and memory."""

    ledger: Ledger
    spec: RunSpec
    ctx: ExecContext
    writer: EventWriter
    system_key: str
    reuses: bool
    judges: list[_Judge]
    engine: Engine
    memory: RunMemory = field(default_factory=RunMemory)


async def execute_cases(
    ledger: Ledger,
    spec: RunSpec,
    cases: Sequence[Case],
    *,
    on_case: CaseSink,
    counts: CacheCounts,
    progress: Progress | None = None,
) -> None:
    """Execute and judge ``cases``; every finished case's result body is passed to ``on_case``,
    and where its results came from is added to ``counts``.

    A malformed artifact (an ``OloproofError``) stops the run: cases in flight are dropped,
    finished ones are written, and the error propagates. Cancellation (Ctrl-C) does the same.
    ``counts`` then holds the finished cases' counts only: a dropped case's result is not
    written, so what it reused or made is not counted (a resume counts it when it runs).
    """
    writer = EventWriter(ledger)
    ctx = ExecContext(
        stage_cache=LedgerStageCache(ledger, writer),
        use_stage_cache=spec.use_stage_cache,
        intervention=spec.intervention,
        replay=spec.replay,
    )
    run = _Run(
        ledger,
        spec,
        ctx,
        writer,
        system_identity(spec.system.identity(), spec.intervention),
        spec.use_cache and reuses_executions(spec.system),
        [_Judge.of(e) for e in spec.evaluators],
        spec.engine or LocalEngine(spec.system, spec.timeout_s, spec.concurrency),
    )
    queue = iter(cases)
    done = 0
    total = len(cases)
    turn = time.monotonic()

    async def worker() -> None:
        nonlocal done, turn
        for case in queue:
            late.check()
            mine = CacheCounts()
            body = await (
                _repeated_case(run, case, mine) if spec.repeats > 1 else _one_case(run, case, mine)
            )
            on_case(body)
            counts.add(mine)
            done += 1
            if progress is not None:
                # A progress that also counts verdicts (the CLI's live tally) gets each case.
                case_done = getattr(progress, "case_done", None)
                if case_done is not None:
                    case_done(body)
                progress(done, total)
            writer.maybe_flush(run.memory)
            now = time.monotonic()
            if now - turn > _YIELD_SECONDS:
                turn = now
                await asyncio.sleep(0)

    # Tasks a case starts are watched: what they record after it returned must not be lost.
    with watching_late_records() as late:
        workers = [
            asyncio.create_task(worker()) for _ in range(max(1, min(spec.concurrency, total)))
        ]
        idle = _IdleFlushes(writer)
        # Everything alive now (the dataset above all) outlives the run: frozen, the collector's
        # full passes skip it (at 100,000 cases each pass walked it for ~0.1 s).
        gc.freeze()
        try:
            await asyncio.gather(*workers)
            await late.settle(spec.timeout_s)
            await run.engine.settle()  # and where the engine ran them (a Ray replica)
            idle.stop()
            if idle.error is not None:  # it stopped on an error of its own: the run reports it
                raise idle.error
        except BaseException:
            for task in workers:
                task.cancel()
            await asyncio.gather(*workers, return_exceptions=True)
            raise
        finally:
            gc.unfreeze()
            idle.stop()  # before the last flush, which the ledger may be closed after
            writer.flush(run.memory)


async def _repeated_case(run: _Run, case: Case, counts: CacheCounts) -> CaseResultBody:
    """Execute and judge ``case`` ``repeats`` times; record one case result whose verdicts are
    the repeats' combined (``oloproof.repeats``), and each repeat's own beside them."""
    bodies = [await _one_case(run, case, counts, r, record=False) for r in range(run.spec.repeats)]
    first = bodies[0]
    body: CaseResultBody = {
        **first,
        "status": "ok" if any(b["status"] == "ok" for b in bodies) else "errored",
        "verdicts": combine_verdicts([b["verdicts"] for b in bodies]),
        "repeats": [
            {k: b[k] for k in ("execution", "status", "verdicts", "judgments", "cache")}
            for b in bodies
        ],
    }
    judgments = [a for b in bodies for a in b["judgments"].values()]
    refs = [run.spec.run_address, *(b["execution"] for b in bodies), *judgments]
    return _recorded(run, body, list(dict.fromkeys(refs)))


def _recorded(run: _Run, body: CaseResultBody, refs: list[str]) -> CaseResultBody:
    """Store ``body`` as a case result, and give it back as stored: the run's tally (its
    report's slices) read a declared secret in a case's metadata that the ledger, and every
    report read from it, holds ``[redacted]``."""
    stored = make_stored(ev.CASE_RESULT, body, refs)
    run.writer.add_stored(stored)
    return cast(CaseResultBody, stored.body)


async def _one_case(
    run: _Run, case: Case, counts: CacheCounts, repeat: int = 0, record: bool = True
) -> CaseResultBody:
    """Execute (or reuse) and judge one repeat of ``case``, counting where its results came
    from in ``counts``."""
    input_key, executed_key = ev.input_keys(case.id, case.input)
    identity = execution_identity(run.system_key, _given_key(run.spec, case, executed_key), repeat)
    waiting = run.memory.executions.get(identity)
    if waiting is not None:  # a repeat of an input this run is executing or has just executed
        made = await waiting
        source = HIT if made.source == HIT else SHARED
        return await _finish_case(run, case, input_key, made, source, counts, record)
    made_here = _made_earlier(run, identity)
    if made_here is not None:
        return await _finish_case(run, case, input_key, made_here, SHARED, counts, record)
    future: asyncio.Future[Made] = asyncio.get_running_loop().create_future()
    run.memory.executions[identity] = future
    try:
        made = await _execution(run, case, identity, counts, repeat)
        # Resolved only once it is judged: a repeat then finds the judgments as well.
        body = await _finish_case(run, case, input_key, made, made.source, counts, record)
    except BaseException as exc:
        run.memory.executions.pop(identity, None)
        if isinstance(exc, Exception):
            future.set_exception(exc)  # a repeat waiting on it stops the same way
            # Seen here: the case that raised it reports it, not the event loop. (A done
            # callback would do the same, but its handle keeps the future and its whole
            # execution alive until the loop next runs, which a run of synchronous cases
            # may not let it do for thousands of cases.)
            future.exception()
        else:
            future.cancel()
        raise
    future.set_result(made)
    return body


def _given_key(spec: RunSpec, case: Case, executed_key: str) -> str:
    """The key of what an execution of ``case`` is given: its input's (``ev.input_keys``) and,
    under a gold-context intervention, its gold passages, which replace the retrieved context.
    Two cases asking the same question with other gold passages are then two executions, never
    one shared (the second would be handed the first's passages)."""
    if (spec.intervention or {}).get("kind") != "gold-context":
        return executed_key
    # Stored redacted, as the input, and so kept apart by case where that replaced a secret.
    gold = ev.kept_apart(case.id, case.expected.get("gold_context", []))
    return ev.identity_key({"input": executed_key, "gold": gold})


def _made_earlier(run: _Run, identity: str) -> Made | None:
    """An execution this run made and has already written, read back from the ledger."""
    memory = run.memory
    if not memory.executed_fresh and not memory.executed_stale:
        return None
    key = bits(identity)
    fresh = key in memory.executed_fresh
    if not fresh and key not in memory.executed_stale:
        return None
    found = run.ledger.latest_event("exec", identity)
    if found is None:
        return None
    address, event = found
    body = event.body
    execution = Execution(body["output"], body["artifacts"]) if body["status"] == "ok" else None
    return Made(address, execution, MISS, fresh)


async def _execution(
    run: _Run, case: Case, identity: str, counts: CacheCounts, repeat: int = 0
) -> Made:
    """The case's execution: reused from an earlier run when that is allowed, else run now.

    Repeats after the first skip the stage caches, or a staged system would hand back the
    first repeat's generation for the same context instead of sampling again.
    """
    seen, cached = _cached_execution(run.ledger, identity) if run.reuses else (True, None)
    if cached is not None:
        address, body = cached
        counts.calls.took(body["artifacts"].get("model_call/v1", ()))
        return Made(address, Execution(body["output"], body["artifacts"]), HIT, False)
    ctx = run.ctx if repeat == 0 else dataclasses.replace(run.ctx, use_stage_cache=False)
    # The stages a case ran are counted and linked even when it then errored: they are stored.
    execution, error, stages, calls = await run.engine.execute(case, ctx)
    for stage in stages:
        counts.add_stage(stage.stage, stage.hit)
    try:
        stored = _execution_event(
            identity, case, (execution, error, stages, calls), run.writer.retrievals
        )
        address = run.writer.add_stored(stored)
    except (CodecError, UnrecordableOutput) as exc:  # a NaN, a cycle: it cannot be recorded
        raise unrecordable(case, exc) from None
    recorded_calls = stored.body["artifacts"].get("model_call/v1", ())
    if any(stage.stage == "generate" and stage.hit for stage in stages):
        counts.calls.took(recorded_calls)  # a generation taken from the stage cache
    else:
        counts.calls.made(recorded_calls)
    if execution is not None:
        # Judge what is stored (plain data, secrets replaced), as a later run reusing this
        # execution does, and as a run on Ray does, whose replicas send it so: an output holding
        # a set, bytes or an object is judged as its recorded text on every engine and every run.
        execution = Execution(stored.body["output"], stored.body["artifacts"], execution.stages)
    # An identity never seen means no stored execution has it, so none has this address.
    fresh = not seen or not run.ledger.has(address)
    (run.memory.executed_fresh if fresh else run.memory.executed_stale).add(bits(identity))
    return Made(address, execution, MISS, fresh)


async def _finish_case(
    run: _Run,
    case: Case,
    input_key: str,
    made: Made,
    source: str,
    counts: CacheCounts,
    record: bool = True,
) -> CaseResultBody:
    """Judge the case's execution and record its result in the run."""
    counts.add_execution(source)
    spec = run.spec
    execution = made.execution
    verdicts: dict[str, VerdictCopy] = {}
    judgments: dict[str, str] = {}
    if execution is None:
        for judge in run.judges:
            verdicts[judge.criterion] = _unexecuted_verdict(judge, case)
    else:
        view = CaseView(
            case.id,
            case.input,
            case.expected,
            case.metadata,
            execution.output,
            execution.artifacts,
        )
        # The judgments of an execution this run has just made for the first time are all
        # still to be made: skip the lookup.
        lookup = spec.reuse_judgments and not (made.fresh and source == MISS)
        judged = await _judge_all(run, view, made, lookup)
        for judge, (verdict, address, judged_from) in zip(run.judges, judged, strict=True):
            verdicts[judge.criterion] = _verdict_summary(verdict)
            if address is not None:
                judgments[judge.criterion] = address
                counts.add_judgment(judged_from)
    body: CaseResultBody = {
        "run_id": spec.run_id,
        "case_id": case.id,
        "line": case.line,
        "input_key": input_key,
        "expected": case.expected,
        "metadata": case.metadata,
        "execution": made.address,
        "status": "errored" if execution is None else "ok",
        "verdicts": verdicts,
        "judgments": judgments,
        "cache": {"execution": source},
    }
    if spec.labeller is not None:
        body["labels"] = spec.labeller(case, execution)
    if execution is not None and execution.stages:
        body["stages"] = {s.stage: s.hit for s in execution.stages}
    if record:  # a repeat's body goes into its case's one result instead (_repeated_case)
        return _recorded(run, body, [spec.run_address, made.address, *judgments.values()])
    return body


def _unexecuted_verdict(judge: _Judge, case: Case) -> VerdictCopy:
    """An errored case's verdict: the exclusion its labels or expected values decide whatever
    its output (``ExcludesByCase``), the one it records when it runs, since it could never count
    for that criterion and so must not widen its interval as a missing case; else missing."""
    excluded = judge.case_exclusion(case.id, case.expected) if judge.case_exclusion else None
    if excluded is not None:
        return _verdict_summary(excluded)
    return {"s": "missing", "r": "execution_errored"}


def _cached_execution(
    ledger: Ledger, identity: str
) -> tuple[bool, tuple[str, dict[str, Any]] | None]:
    """Whether an execution of ``identity`` was ever stored, and the latest one if it can be
    reused (an errored one is not: the case is tried again)."""
    found = ledger.latest_event("exec", identity)
    if found is None:
        return False, None
    address, event = found
    if event.body["status"] != "ok":
        return True, None
    return True, (address, dict(event.body))


def _execution_event(
    identity: str, case: Case, outcome: Outcome, retrievals: Mapping[str, Any]
) -> Stored:
    execution, error, stages, calls = outcome
    # An errored execution keeps the model calls it made: their tokens were spent. (It is
    # never reused, so they are never taken for an output's.)
    kept = {"model_call/v1": calls} if calls else {}
    body: ExecutionBody = {
        "identity": identity,
        "input": case.input,
        "status": "ok" if execution is not None else "errored",
        "output": plain_output(execution.output) if execution else None,
        "artifacts": execution.artifacts if execution else kept,
    }
    if error is not None:
        body["error"] = error
    if stages:
        body["stages"] = [
            {"stage": s.stage, "identity": s.identity, "address": s.address} for s in stages
        ]
    return make_stored(ev.EXECUTION, body, [s.address for s in stages], retrievals)


@dataclass(frozen=True)
class _Judge:
    """An evaluator with what every judgment of it shares, computed once per run."""

    evaluator: AnyEvaluator
    spec: dict[str, Any]
    spec_key: str
    stored_spec: tuple[str, Event] | None  # its judgments refer to it (``evaluator_part``)
    reads: ReadDeclaration
    is_async: bool
    case_exclusion: Callable[[str, Mapping[str, Any]], Verdict | None] | None

    @property
    def criterion(self) -> str:
        return self.evaluator.criterion

    @staticmethod
    def of(evaluator: AnyEvaluator) -> _Judge:
        spec = evaluator.spec()
        is_async = not isinstance(evaluator, Evaluator)
        key, stored = ev.identity_key(spec), evaluator_part(spec)
        excludes = evaluator.case_exclusion if isinstance(evaluator, ExcludesByCase) else None
        return _Judge(evaluator, spec, key, stored, reads_of(evaluator), is_async, excludes)


Judged = tuple[Verdict, str | None, str]  # the verdict, its judgment's address, where it came from


async def _judge_all(run: _Run, view: CaseView, made: Made, lookup: bool) -> list[Judged]:
    judges = run.judges
    results: list[Judged | None] = [None] * len(judges)
    waiting: list[tuple[int, _Judge, str]] = []
    keys = ReadKeys(view)
    known = cached_judgments(run.ledger, made.address) if lookup else {}
    for index, judge in enumerate(judges):
        identity = judgment_identity(judge.spec_key, keys.of(judge.reads))
        results[index] = _judged_before(run, made, identity, known)
        if results[index] is not None:
            continue
        if judge.is_async:
            waiting.append((index, judge, identity))
            continue
        verdict = _judge_sync(judge, view, run.spec.timeout_s)
        results[index] = _record_judgment(run, judge, identity, verdict, made)
    if waiting:
        verdicts = await asyncio.gather(*(_judge_async(j, view) for _, j, _ in waiting))
        for (index, judge, identity), verdict in zip(waiting, verdicts, strict=True):
            results[index] = _record_judgment(run, judge, identity, verdict, made)
    return [r for r in results if r is not None]


def _judged_before(
    run: _Run, made: Made, identity: str, known: Mapping[str, tuple[str, Mapping[str, Any]]]
) -> Judged | None:
    """A judgment of this identity already made or reused, and where it came from."""
    pair = (made.address, identity)
    mine = run.memory.judgments.get(pair)
    if mine is not None:
        verdict, address, first = mine
        return verdict, address, HIT if first == HIT else SHARED
    found = known.get(identity)
    if found is None:
        return None
    address, body = found
    verdict = _verdict_from_body(body)
    # Every judgment of an execution first written by this run is this run's; of an older
    # execution, only those the run remembers making.
    stale = run.memory.judged_stale
    here = made.fresh or (bool(stale) and bits(*pair) in stale)
    run.memory.judgments[pair] = (verdict, address, MISS if here else HIT)
    return verdict, address, SHARED if here else HIT


def _judge_sync(judge: _Judge, view: CaseView, timeout_s: float) -> Verdict:
    # Made on the loop, so held to the case's timeout there (``oloproof.aio``): a regular
    # expression backtracking over a hostile output is stopped where it is.
    with Deadline(timeout_s) as due:
        try:
            verdict = judge.evaluator.judge(view)  # type: ignore[union-attr]  # not is_async
        except OloproofError:
            raise
        except BaseException as exc:  # an evaluator that breaks costs its judgment, not the run
            if interrupts_the_run(exc):
                raise
            verdict = _evaluator_raised(exc)
        if due.overran:
            message = f"the judgment took longer than {timeout_s:g} s"
            return Verdict.missing(
                "evaluator_timed_out", type="TimeoutError", message=message, traceback=""
            )
        return verdict


async def _judge_async(judge: _Judge, view: CaseView) -> Verdict:
    try:
        return await judge.evaluator.ajudge(view)  # type: ignore[union-attr]  # is_async
    except OloproofError:
        raise
    except BaseException as exc:  # as in _judge_sync
        if interrupts_the_run(exc):
            raise
        return _evaluator_raised(exc)


def _evaluator_raised(exc: BaseException) -> Verdict:
    return Verdict.missing("evaluator_raised", **error_record(exc))


def _record_judgment(
    run: _Run, judge: _Judge, identity: str, verdict: Verdict, made: Made
) -> Judged:
    if verdict.status == "excluded":
        # An exclusion is no verdict: nothing was judged, so nothing is recorded or cached
        # (decided again from the case and its output, it costs nothing).
        return verdict, None, MISS
    body: JudgmentBody = {
        "criterion": judge.criterion,
        "evaluator": judge.spec,
        "identity": identity,
        "status": verdict.status,
        "value": verdict.value,
        "reason": verdict.reason,
        "detail": plain_output(verdict.detail),
    }
    address = run.writer.add_stored(stored_judgment(body, made.address, judge.stored_spec))
    if verdict.status != "missing":  # a failed call is tried again, by a repeat too
        run.memory.judgments[(made.address, identity)] = (verdict, address, MISS)
        if not made.fresh:
            run.memory.judged_stale.add(bits(made.address, identity))
    return verdict, address, MISS


def _verdict_from_body(body: Any) -> Verdict:
    return Verdict(body["status"], body["value"], body["reason"], dict(body["detail"]))


def _verdict_summary(verdict: Verdict) -> VerdictCopy:
    summary: VerdictCopy = {"s": verdict.status}
    if verdict.value is not None and verdict.status == "value":
        summary["v"] = verdict.value
    if verdict.reason is not None and verdict.status in ("excluded", "missing"):
        summary["r"] = verdict.reason
    return summary
