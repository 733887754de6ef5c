"""The scheduler: run a system over cases, judge each output, and record it all as events.

Cases run ``concurrency`` at a time (worker coroutines pulling from one queue; sync systems on a
thread pool). Each finished case becomes an execution event (reused from the cache when the
system identity and input were seen before), one judgment event per evaluator (reused when the
evaluator, the execution and the expected values were judged before) and a case_result event
that ties them to the run. Events are written in batched transactions; Ctrl-C, SIGTERM or an
exception loses only the cases still in flight (the rest is written on the way out), a hard kill
at most the last unwritten batch too, and the run can be resumed.
"""

from __future__ import annotations

import asyncio
import gc
import time
import traceback
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ledger import CodecError, Event, Ledger, Prepared
from oloproof import events as ev
from oloproof.dataset import Case
from oloproof.errors import ArtifactError, OloproofError
from oloproof.evaluators.base import AsyncEvaluator, CaseView, Evaluator
from oloproof.results import Verdict
from oloproof.sdk import malformed_artifact
from oloproof.systems.base import (
    ExecContext,
    Execution,
    StageRecord,
    System,
    UnrecordableOutput,
    plain_output,
)
from oloproof.usercode import received

Progress = Callable[[int, int], None]
AnyEvaluator = Evaluator | AsyncEvaluator
Labeller = Callable[[Case, Execution | None], dict[str, str]]

# Larger commits amortise the ledger's hash-keyed tables, whose pages every commit rewrites (a
# 100,000-case full run spent ~0.15 ms a case writing in 1,000-event commits, ~0.085 ms in
# 10,000-event ones; 20,000 saved under 10% more); a hard kill loses at most this tail.
_FLUSH_EVENTS = 10_000
_FLUSH_SECONDS = 2.0


@dataclass
class CacheCounts:
    """Cache hits and misses of one run, as the report's Cache and Stages lines print them."""

    execution_hit: int = 0
    execution_miss: int = 0
    judgment_hit: int = 0
    judgment_miss: int = 0
    stages: dict[str, list[int]] = field(default_factory=dict)

    def add_stage(self, stage: str, hit: bool) -> None:
        counts = self.stages.setdefault(stage, [0, 0])
        counts[0 if hit else 1] += 1


class LedgerStageCache:
    """Stage outputs as ``oloproof.stage`` events, found by identity through the index."""

    def __init__(self, ledger: Ledger, writer: EventWriter) -> None:
        self._ledger = ledger
        self._writer = writer

    def lookup(self, identity: str) -> dict[str, Any] | None:
        """The stage body with ``identity`` plus its ``address``, or None."""
        pending = self._writer.pending_stage(identity)
        if pending is not None:
            return pending
        found = self._ledger.latest_event("stage", identity)
        if found is None:
            return None
        address, event = found
        return {**event.body, "address": address}

    def record(self, stage: str, identity: str, result: dict[str, Any]) -> str:
        return self._writer.add(ev.make(ev.STAGE, {"stage": stage, "identity": identity, **result}))


class EventWriter:
    """Buffers events and writes them in batched transactions.

    Each event is made ready to store (encoded, hashed, its index entries worked out) as it is
    added, so a flush only writes: the last one, at the end of a run, is all the run waits for.
    """

    def __init__(self, ledger: Ledger) -> None:
        self._ledger = ledger
        self._pending: list[Prepared] = []
        self._stages: dict[str, dict[str, Any]] = {}
        self._last_flush = time.monotonic()

    def add(self, event: Event) -> str:
        """Buffer ``event``; return its address."""
        item = self._ledger.prepare(event)
        self._pending.append(item)
        if event.type == ev.STAGE:
            self._stages[event.body["identity"]] = {**event.body, "address": item.address}
        return item.address

    def pending_stage(self, identity: str) -> dict[str, Any] | None:
        return self._stages.get(identity)

    def maybe_flush(self) -> None:
        if (
            len(self._pending) >= _FLUSH_EVENTS
            or time.monotonic() - self._last_flush > _FLUSH_SECONDS
        ):
            self.flush()

    def flush(self) -> None:
        if self._pending:
            with self._ledger.batch():
                for item in self._pending:
                    self._ledger.put_prepared(item)
            self._pending.clear()
            self._stages.clear()
        self._last_flush = time.monotonic()


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
    intervention: dict[str, Any] | None = None
    replay: dict[str, Any] = field(default_factory=dict)
    labeller: Labeller | None = None


CaseSink = Callable[[dict[str, Any]], None]


# The cache identities. Each part is itself a key, so a case's input or expected values are
# hashed once however many evaluators read them.
def system_identity(system: dict[str, Any], intervention: dict[str, Any] | None) -> str:
    """What makes two executions of one input comparable: the system and any intervention."""
    return ev.identity_key({"system": system, "intervention": intervention})


def execution_identity(system_key: str, input_key: str) -> str:
    """The execution cache key: the system identity and the case input's key."""
    return ev.identity_key([system_key, input_key])


def judgment_identity(spec_key: str, exec_address: str, expected_key: str) -> str:
    """The judgment cache key: the evaluator's spec, the execution judged, the expected values."""
    return ev.identity_key([spec_key, exec_address, expected_key])


def cached_judgments(ledger: Ledger, exec_address: str) -> dict[str, tuple[str, Mapping[str, Any]]]:
    """The reusable judgments of an execution, by judgment identity (the latest of each).

    A missing judgment (a judge call that failed) is never reused: it is tried again.
    """
    found: dict[str, tuple[str, Mapping[str, Any]]] = {}
    for address, event in ledger.lookup_events("judgment", exec_address):
        if event.body["status"] != "missing":
            found[event.body["identity"]] = (address, event.body)
        else:
            found.pop(event.body["identity"], None)
    return found


async def execute_cases(
    ledger: Ledger,
    spec: RunSpec,
    cases: Sequence[Case],
    *,
    on_case: CaseSink,
    progress: Progress | None = None,
) -> CacheCounts:
    """Execute and judge ``cases``; every finished case's result body is passed to ``on_case``.

    A malformed artifact (an ``OloproofError``) stops the run: cases in flight are dropped,
    finished ones are written, and the error propagates. Cancellation (Ctrl-C) does the same.
    """
    writer = EventWriter(ledger)
    counts = CacheCounts()
    ctx = ExecContext(
        stage_cache=LedgerStageCache(ledger, writer),
        use_stage_cache=spec.use_stage_cache,
        intervention=spec.intervention,
        replay=spec.replay,
    )
    system_key = system_identity(spec.system.identity(), spec.intervention)
    queue = iter(cases)
    done = 0
    total = len(cases)
    judges = [_Judge.of(e) for e in spec.evaluators]

    async def worker() -> None:
        nonlocal done
        for case in queue:
            body = await _one_case(ledger, spec, ctx, writer, counts, system_key, judges, case)
            on_case(body)
            done += 1
            if progress is not None:
                progress(done, total)
            writer.maybe_flush()

    workers = [asyncio.create_task(worker()) for _ in range(max(1, min(spec.concurrency, total)))]
    # Everything alive now (the dataset above all) outlives the run: frozen, the collector's
    # full passes skip it (at 100,000 cases each pass walked it for ~0.1 s).
    gc.freeze()
    try:
        await asyncio.gather(*workers)
    except BaseException:
        for task in workers:
            task.cancel()
        await asyncio.gather(*workers, return_exceptions=True)
        raise
    finally:
        gc.unfreeze()
        writer.flush()
    return counts


async def _one_case(
    ledger: Ledger,
    spec: RunSpec,
    ctx: ExecContext,
    writer: EventWriter,
    counts: CacheCounts,
    system_key: str,
    judges: list[_Judge],
    case: Case,
) -> dict[str, Any]:
    input_key = ev.identity_key(case.input)
    identity = execution_identity(system_key, input_key)
    seen, cached = _cached_execution(ledger, identity) if spec.use_cache else (True, None)
    execution: Execution | None
    # Judgments of an execution the ledger has never seen cannot be cached: skip the lookups.
    # An identity never seen means no stored execution has it, so none has this address.
    fresh = False
    if cached is not None:
        exec_address, exec_body = cached
        counts.execution_hit += 1
        execution = Execution(exec_body["output"], exec_body["artifacts"]) if exec_body else None
    else:
        counts.execution_miss += 1
        execution, error = await _run_system(spec, ctx, case)
        for stage in execution.stages if execution else ():
            counts.add_stage(stage.stage, stage.hit)
        try:
            exec_address = writer.add(_execution_event(identity, case, execution, error))
        except (CodecError, UnrecordableOutput) as exc:  # a NaN, a cycle: it cannot be recorded
            raise ArtifactError(f"case {case.id!r}: the output cannot be recorded: {exc}") from None
        fresh = not seen or not ledger.has(exec_address)
    verdicts: dict[str, dict[str, Any]] = {}
    judgments: dict[str, str] = {}
    if execution is None:
        for judge in judges:
            verdicts[judge.criterion] = {"s": "missing", "r": "execution_errored"}
    else:
        view = CaseView(
            case.id,
            case.input,
            case.expected,
            case.metadata,
            execution.output,
            execution.artifacts,
        )
        judged = await _judge_all(ledger, writer, judges, view, exec_address, case, fresh)
        for judge, (verdict, address, hit) in zip(judges, judged, strict=True):
            verdicts[judge.criterion] = _verdict_summary(verdict)
            if address is not None:
                judgments[judge.criterion] = address
                if hit:
                    counts.judgment_hit += 1
                else:
                    counts.judgment_miss += 1
    body: dict[str, Any] = {
        "run_id": spec.run_id,
        "case_id": case.id,
        "line": case.line,
        "input_key": input_key,
        "expected": case.expected,
        "metadata": case.metadata,
        "execution": exec_address,
        "status": "errored" if execution is None else "ok",
        "verdicts": verdicts,
        "judgments": judgments,
        "cache": {"execution": cached is not None},
    }
    if spec.labeller is not None:
        body["labels"] = spec.labeller(case, execution)
    if execution is not None and execution.stages:
        body["stages"] = {s.stage: s.hit for s in execution.stages}
    refs = [spec.run_address, exec_address, *judgments.values()]
    writer.add(ev.make(ev.CASE_RESULT, body, refs))
    return body


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


async def _run_system(
    spec: RunSpec, ctx: ExecContext, case: Case
) -> tuple[Execution | None, dict[str, Any] | None]:
    timeout = asyncio.timeout(spec.timeout_s)
    try:
        async with timeout:
            return await spec.system.execute(case, ctx), None
    except OloproofError:
        raise
    except BaseException as exc:  # whatever user code raised, sys.exit included: case errored
        if interrupts_the_run(exc):
            raise
        malformed = malformed_artifact(exc)
        if malformed is not None:  # the SDK's own types, built wrongly: the adapter's contract
            raise ArtifactError(f"case {case.id!r}: {malformed}") from None
        if isinstance(exc, TimeoutError) and timeout.expired():
            return None, {
                "type": "TimeoutError",
                "message": f"the case took longer than {spec.timeout_s:g} s",
                "traceback": "",
            }
        return None, _error_record(exc)


def interrupts_the_run(exc: BaseException) -> bool:
    """Whether ``exc`` is the run being interrupted (Ctrl-C, SIGTERM, a cancelled task, a
    coroutine closed from outside) rather than something user code raised.

    A cancellation is real when the task running the case was cancelled; a
    ``CancelledError`` raised by user code leaves the task uncancelled. A ``GeneratorExit``
    with no task running is the coroutine being closed. A ``KeyboardInterrupt`` is real only
    once a signal reached the process (``oloproof.usercode``).
    """
    if isinstance(exc, KeyboardInterrupt):
        return received()
    if not isinstance(exc, asyncio.CancelledError | GeneratorExit):
        return False
    try:
        task = asyncio.current_task()
    except RuntimeError:  # no loop is running: the coroutine is being closed
        return True
    if task is None:
        return True
    return isinstance(exc, asyncio.CancelledError) and task.cancelling() > 0


def _error_record(exc: BaseException) -> dict[str, Any]:
    return {
        "type": type(exc).__name__,
        "message": str(exc),
        "traceback": "".join(traceback.format_exception(exc)),
    }


def _execution_event(
    identity: str, case: Case, execution: Execution | None, error: dict[str, Any] | None
) -> Event:
    stages: list[StageRecord] = execution.stages if execution else []
    body: dict[str, Any] = {
        "identity": identity,
        "input": case.input,
        "status": "ok" if execution is not None else "errored",
        "output": plain_output(execution.output) if execution else None,
        "artifacts": execution.artifacts if execution else {},
    }
    if error is not None:
        body["error"] = error
    if stages:
        body["stages"] = [
            {"stage": s.stage, "identity": s.identity, "address": s.address} for s in stages
        ]
    return ev.make(ev.EXECUTION, body, [s.address for s in stages])


@dataclass(frozen=True)
class _Judge:
    """An evaluator with what every judgment of it shares, computed once per run."""

    evaluator: AnyEvaluator
    spec: dict[str, Any]
    spec_key: str
    is_async: bool

    @property
    def criterion(self) -> str:
        return self.evaluator.criterion

    @staticmethod
    def of(evaluator: AnyEvaluator) -> _Judge:
        spec = evaluator.spec()
        is_async = not isinstance(evaluator, Evaluator)
        return _Judge(evaluator, spec, ev.identity_key(spec), is_async)


async def _judge_all(
    ledger: Ledger,
    writer: EventWriter,
    judges: list[_Judge],
    view: CaseView,
    exec_address: str,
    case: Case,
    fresh: bool,
) -> list[tuple[Verdict, str | None, bool]]:
    results: list[tuple[Verdict, str | None, bool] | None] = [None] * len(judges)
    waiting: list[tuple[int, _Judge, str]] = []
    expected_key = ev.identity_key(case.expected)
    known = {} if fresh else cached_judgments(ledger, exec_address)
    for index, judge in enumerate(judges):
        identity = judgment_identity(judge.spec_key, exec_address, expected_key)
        found = known.get(identity)
        if found is not None:
            address, body = found
            results[index] = (_verdict_from_body(body), address, True)
            continue
        if judge.is_async:
            waiting.append((index, judge, identity))
            continue
        verdict = _judge_sync(judge, view)
        results[index] = _record_judgment(writer, judge, identity, verdict, exec_address)
    if waiting:
        verdicts = await asyncio.gather(*(_judge_async(j, view) for _, j, _ in waiting))
        for (index, judge, identity), verdict in zip(waiting, verdicts, strict=True):
            results[index] = _record_judgment(writer, judge, identity, verdict, exec_address)
    return [r for r in results if r is not None]


def _judge_sync(judge: _Judge, view: CaseView) -> Verdict:
    try:
        return judge.evaluator.judge(view)  # type: ignore[union-attr]  # is_async is False
    except OloproofError:
        raise
    except BaseException as exc:  # an evaluator that breaks costs its judgment, not the run
        if interrupts_the_run(exc):
            raise
        return _evaluator_raised(exc)


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
    return Verdict.missing("evaluator_raised", **_error_record(exc))


def _record_judgment(
    writer: EventWriter,
    judge: _Judge,
    identity: str,
    verdict: Verdict,
    exec_address: str,
) -> tuple[Verdict, str | None, bool]:
    if verdict.status == "excluded":
        # An exclusion is decided by the case's labels alone: nothing was judged or cached.
        return verdict, None, False
    body = {
        "criterion": judge.criterion,
        "evaluator": judge.spec,
        "identity": identity,
        "status": verdict.status,
        "value": verdict.value,
        "reason": verdict.reason,
        "detail": plain_output(verdict.detail),
    }
    return verdict, writer.add(ev.make(ev.JUDGMENT, body, [exec_address])), False


def _verdict_from_body(body: Any) -> Verdict:
    return Verdict(body["status"], body["value"], body["reason"], dict(body["detail"]))


def _verdict_summary(verdict: Verdict) -> dict[str, Any]:
    summary: dict[str, Any] = {"s": verdict.status}
    if verdict.value is not None and verdict.status == "value":
        summary["v"] = verdict.value
    if verdict.reason is not None and verdict.status in ("excluded", "missing"):
        summary["r"] = verdict.reason
    return summary
