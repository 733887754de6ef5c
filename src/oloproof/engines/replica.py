"""One replica of the Ray engine: a built system that executes the cases the driver sends.

This is the actor's whole behaviour, kept free of Ray (``oloproof.engines.ray`` wraps it in
``ray.remote``), and it meets these requirements:

1. The system is built once per replica (``ready``), from the settings the driver planned with,
   and the replica reports its identity, so the driver can refuse a replica whose code or
   settings differ from its own. A failed build is reported as the sentence a local run's
   planning would give. A diagnosis's reranker is imported there too, so one the workers cannot
   import is refused before any case runs, as the driver refuses one it cannot import.
   The replica works in the driver's working folder, as a local run's system does (see
   ``ready``), so a path the system opens relative to it names the same file.
2. Each case runs through ``oloproof.engines.local.run_system``, exactly as a local run does:
   the same timeout, the same sorting of what user code raised, the same error records.
3. The driver's ledger is the only stage cache. A stage lookup is a question put to the driver
   (``start`` or ``resume`` returns ``("lookup", identity)``, and ``resume`` carries the
   answer back); a stage output is kept with the case and returned to the driver, which writes
   it, with the address it will have, worked out here from the same event the driver will
   store. Stage outputs a case recorded before it errored or stopped are returned too, as a
   local run would have written them.
4. A case ends in one reply: ``("done", execution, error, stages, calls, redacted,
   recorded)`` (``stages``: those the case ran, an errored case's included; ``calls``: the
   model calls an errored case made); when the run
   must stop (a malformed artifact), ``("stop", error_type, message, where, hint, redacted,
   recorded)``; after a fault of the replica's own code, ``("fault", description)``.
   A record made after its case returned, from a task or thread the case started, stops the
   run as it does locally (``oloproof.sdk.LateRecords``): the replica watches its cases' work
   for its whole life, a case ending after such a record replies ``stop``, and before the run
   decides the driver asks each replica to ``settle``: to wait for that work, up to the case
   timeout, and to say (a ``stop`` reply) when it recorded late or is still running.
5. An output that cannot travel back to the driver errors its case, saying so.
6. Secrets the system read here (an HTTP header's ``${NAME}``, a model's API key, and the
   variables named like credentials or listed under ``secrets:`` that the user's code reads)
   are known to this process only: everything a case sends back is redacted here first, and
   ``redacted`` counts the occurrences replaced, which the driver adds to the run's count.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ledger import address_of
from oloproof import __version__, redaction
from oloproof import events as ev
from oloproof.config import SystemConfig
from oloproof.dataset import Case
from oloproof.engines import RerankerRef
from oloproof.engines.local import run_system
from oloproof.errors import OloproofError
from oloproof.sdk import LateRecords, join_late_records, watching_late_records
from oloproof.stored_form import make_stored
from oloproof.systems import build_system
from oloproof.systems.base import (
    ExecContext,
    Execution,
    System,
    case_output,
    load_reranker,
)
from oloproof.usercode import describe

Recorded = tuple[str, str, dict[str, Any], str]  # stage, identity, result, its address
Reply = tuple[Any, ...]


@dataclass(frozen=True)
class ReplicaSetup:
    """What every replica of one engine is built from."""

    system: SystemConfig
    base_dir: str  # the project folder on the driver's machine
    shipped: bool  # the project folder was sent with the run: it is the working directory
    # The driver's working folder: relative to the project folder when inside it, else absolute.
    working_dir: str
    where: str  # how errors name the system's place in oloproof.yaml
    concurrency: int
    timeout_s: float
    # Where oloproof.yaml sets each HTTP header, for the error of one a worker cannot resolve.
    header_places: dict[str, str] = field(default_factory=dict)
    # The variables the project lists under ``secrets:``, whose values the workers hold.
    secrets: tuple[str, ...] = ()
    # A diagnosis's reranker: imported as the replica starts (a reranker the workers cannot
    # import refuses them before a child run is written, as the driver refuses one it cannot).
    reranker: RerankerRef | None = None
    version: str = __version__


@dataclass(frozen=True)
class CaseOrder:
    """One case sent to a replica, with what its run changes."""

    call: int
    case: Case
    intervention: dict[str, Any] | None
    # The case's share of the run's replay: its recorded retrieval, a reranker's reference.
    replay: dict[str, Any]
    use_stage_cache: bool


@dataclass
class _Call:
    replies: asyncio.Queue[Reply] = field(default_factory=asyncio.Queue)
    answer: asyncio.Future[dict[str, Any] | None] | None = None
    recorded: list[Recorded] = field(default_factory=list)
    redacted: int = 0  # occurrences of secrets replaced in what the case sends back
    task: asyncio.Task[None] | None = None


class _DriverStages:
    """The stage cache a case sees on a replica: lookups go to the driver, records stay with
    the case until it ends."""

    def __init__(self, call: _Call) -> None:
        self._call = call

    async def lookup(self, identity: str) -> dict[str, Any] | None:
        future: asyncio.Future[dict[str, Any] | None] = asyncio.get_running_loop().create_future()
        self._call.answer = future
        self._call.replies.put_nowait(("lookup", identity))
        return await future

    def record(self, stage: str, identity: str, result: dict[str, Any]) -> str:
        before = redaction.stored_count()
        stored = make_stored(ev.STAGE, {"stage": stage, "identity": identity, **result})
        replaced = redaction.stored_count() - before
        if replaced:  # send what the driver stores: the body without the secrets
            self._call.redacted += replaced
            result = {k: v for k, v in stored.body.items() if k not in ("stage", "identity")}
        address = address_of(stored.event)
        self._call.recorded.append((stage, identity, result, address))
        return address


class Replica:
    """The actor (see the module). Its methods run on the actor's event loop."""

    def __init__(self, setup: ReplicaSetup) -> None:
        self._setup = setup
        self._system: System | None = None
        self._base = Path(os.getcwd() if setup.shipped else setup.base_dir)
        self._calls: dict[int, _Call] = {}
        self._rerankers: dict[str, Any] = {}
        # Never closed: the actor's loop watches its cases' work for the replica's whole life
        # (the driver kills it at the end), as a local run's loop does for the run.
        self._watching = contextlib.ExitStack()
        self._late: LateRecords | None = None

    async def ready(self) -> dict[str, Any]:
        """Build the system; its identity and this process's id, or ``{"error": sentence}``."""
        setup = self._setup
        if setup.version != __version__:
            return {
                "error": f"the Ray workers have oloproof {__version__} and this machine "
                f"{setup.version}; install the same version on both"
            }
        if not self._base.is_dir():
            return {
                "error": f"the project folder {setup.base_dir} is not on the Ray workers; set "
                "engine.ship_project: true to send it with the run"
            }
        # Where a local run's system works: the driver's working folder (its place in the
        # project folder, a copy of it when shipped), so that a path the system opens
        # relative to it names the same file as locally; the project folder when the workers
        # lack it. Ray starts an actor in a folder of its own.
        folder = self._base / setup.working_dir  # an absolute working_dir is itself
        os.chdir(folder if folder.is_dir() else self._base)
        # As a local run does before the user's code runs, and from this process's
        # environment: the values the code reads here may be known nowhere else.
        for name in setup.secrets:
            problem = redaction.too_short(name, os.environ.get(name, ""))
            if problem is not None:
                return {"error": f"{setup.where}: secrets: on the Ray workers, {problem}"}
        redaction.register_environment(setup.secrets)
        self._late = self._watching.enter_context(watching_late_records())
        fault = _header_fault(setup.system)
        if fault is not None:
            header, problem = fault
            where = setup.header_places.get(header, setup.where)
            return {"error": f"{where}: {problem}"}
        try:
            self._system = build_system(
                setup.system,
                base_dir=self._base,
                where=setup.where,
                concurrency=setup.concurrency,
            )
            if setup.reranker is not None:
                named = setup.reranker
                self._rerankers[named.reference] = load_reranker(
                    named.reference,
                    base_dir=self._base,
                    key=f"{named.key}, on the Ray workers",
                    where=named.where,
                )
        except OloproofError as exc:  # the driver prints it: without the secrets read here
            return {"error": redaction.redact_text(str(exc))}
        except BaseException as exc:  # building user code may raise anything
            why = redaction.redact_text(describe(exc))
            return {"error": f"{setup.where}: building the system failed: {why}"}
        return {"identity": self._system.identity(), "pid": os.getpid()}

    async def start(self, order: CaseOrder) -> Reply:
        """Begin a case; its first reply (a stage lookup, or how it ended)."""
        call = _Call()
        self._calls[order.call] = call
        call.task = asyncio.create_task(self._run(call, order))
        return await self._next(order.call, call)

    async def resume(self, number: int, answer: dict[str, Any] | None) -> Reply:
        """Answer a case's stage lookup; its next reply."""
        call = self._calls[number]
        assert call.answer is not None, "a case answered without a question"
        call.answer.set_result(answer)
        call.answer = None
        return await self._next(number, call)

    async def _next(self, number: int, call: _Call) -> Reply:
        try:
            reply = await call.replies.get()
        except asyncio.CancelledError:  # the driver gave the case up (Ctrl-C)
            if call.task is not None:
                call.task.cancel()
            self._calls.pop(number, None)
            raise
        if reply[0] != "lookup":
            self._calls.pop(number, None)
        return reply

    async def settle(self) -> Reply:
        """Once every case of the run has returned: wait, up to the case timeout, for the work
        the cases started here (``LateRecords.settle``); ``("stop", error_type, message, where,
        hint)`` when it recorded late or still runs, else ``()``."""
        assert self._late is not None, "ready() watches the cases first"
        try:
            await self._late.settle(self._timeout)
        except OloproofError as exc:
            return _stop(exc, redaction.redact_text(exc.message))
        return ()

    async def _run(self, call: _Call, order: CaseOrder) -> None:
        assert self._system is not None and self._late is not None, "ready() builds it first"
        join_late_records(self._late)  # this task's own context: what it starts is noted
        try:
            ctx = ExecContext(
                stage_cache=_DriverStages(call),
                use_stage_cache=order.use_stage_cache,
                intervention=order.intervention,
                replay=self._replay(order),
            )
            execution, error, stages, calls = await run_system(
                self._system, ctx, order.case, self._timeout
            )
            self._late.check()  # this case's, or an earlier case's, late record stops the run
            if execution is not None:
                execution = Execution(
                    # Plain data (as a local run records and judges it) can always be sent back.
                    _redact(call, case_output(order.case, execution.output)),
                    _redact(call, execution.artifacts),
                    execution.stages,
                )
            error = _redact(call, error)
            calls = _redact(call, calls)
        except OloproofError as exc:
            reply = _stop(exc, _redact(call, exc.message))
            call.replies.put_nowait((*reply, call.redacted, call.recorded))
            return
        except Exception as exc:  # a fault of the replica itself: the driver reports it
            call.replies.put_nowait(("fault", redaction.redact_text(describe(exc))))
            return
        done = ("done", execution, error, stages, calls, call.redacted, call.recorded)
        call.replies.put_nowait(done)

    @property
    def _timeout(self) -> float:
        return self._setup.timeout_s

    def _replay(self, order: CaseOrder) -> dict[str, Any]:
        replay = dict(order.replay)
        if "reranker" in replay:
            # An order carries the reranker's reference; the driver set this replica up
            # (``ready`` imported the function) with the one reranker its diagnosis replays,
            # under that same reference, so the lookup cannot miss.
            replay["reranker"] = self._rerankers[replay["reranker"]]
        return replay


def _header_fault(system: SystemConfig) -> tuple[str, str] | None:
    """The first HTTP header this worker cannot send, and why: the driver checks its own
    environment only for a local run."""
    if system.http is None:
        return None
    from oloproof.systems.http import first_header_fault

    found = first_header_fault(system.http.headers, os.environ)
    if found is None:
        return None
    header, fault = found
    if fault.unset:
        return header, f"{fault.text} on the Ray workers, which read it there"
    if fault.variable is not None:
        return header, f"{fault.text} (as the Ray workers read it)"
    return header, fault.text


def _stop(exc: OloproofError, message: str) -> Reply:
    """The reply that stops the run with ``exc``, told as ``message`` (without secrets)."""
    return ("stop", type(exc).__name__, message, exc.where, exc.hint)


def _redact(call: _Call, value: Any) -> Any:
    """``value`` without the secrets this process knows, counted against ``call``."""
    before = redaction.stored_count()
    cleaned = redaction.redact(value)
    call.redacted += redaction.stored_count() - before
    return cleaned
