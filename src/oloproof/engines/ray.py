"""The Ray engine: a pool of actors executes the cases; this process (the driver) does the rest.

Requirements it meets:

1. Ray is imported only here, only when ``engine: ray`` is chosen; without it the run is
   refused in one sentence naming the ``ray`` extra.
2. With no address it starts a Ray instance on this machine for the run, bound to the loopback
   interface and protected by a token of its own, and refuses replicas the machine cannot hold;
   with an address it connects to that cluster and leaves it running afterwards.
3. Each replica (``oloproof.engines.replica``) builds the system once. A replica whose system
   identity differs from the one the driver planned is refused, so every result comes from the
   code the run records. The run starts once every replica is ready, or after
   ``start_timeout_s`` with those that are (the others join as they start); with none, it
   gives up, naming what each replica asks for and what the cluster has free.
4. At most ``replicas × concurrency`` cases are in flight (the scheduler's slots), each on the
   least busy replica with room; nothing else is held per case, so memory stays flat.
5. A replica that dies loses only its cases in flight: each is sent again (a replacement is
   started for the dead one), at most ``max_retries`` times, then recorded as errored
   (``WorkerDied``). A case is sent again alone, on a replica no other case runs on until it
   ends: the case that killed the replica then dies on its own, and the cases that were beside
   it when it did are not blamed for it. When replicas keep dying without finishing any case,
   the run stops (``RayEngineError``) with what finished kept.
   A replica stops a case at its deadline itself; one that has not answered for a case by
   ``_held_limit`` (a blocking call or C code holding its loop, where nothing raised in it
   can reach) is stopped by the driver: as if it had died when it held other cases, and the
   case recorded as timed out when it held that case alone.
6. The driver stays the only writer: stage lookups a replica asks are answered from the
   driver's stage cache, stage outputs it recorded are written here (their addresses checked
   against the replica's), and the execution it returns goes back to the scheduler, which
   caches, judges and writes it as it would a local one.
7. Cancellation (Ctrl-C) cancels the cases on the replicas; closing kills every replica and
   stops a Ray instance the engine started.
8. A cluster that stops answering stops the run (``RayEngineError``) within seconds, the
   finished cases kept: its calls would otherwise wait until Ray ends this process itself.
"""

from __future__ import annotations

import asyncio
import importlib
import itertools
import logging
import os
import secrets
import socket
import sys
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from oloproof import errors, redaction
from oloproof.dataset import Case
from oloproof.display import plural
from oloproof.engines.local import Outcome, timed_out
from oloproof.engines.replica import CaseOrder, Replica, ReplicaSetup
from oloproof.errors import ConfigError, OloproofError
from oloproof.systems.base import ExecContext, Execution, System

if TYPE_CHECKING:
    from oloproof.config import ProjectConfig
    from oloproof.engines import RerankerRef

_REPLICAS = 2
_NUM_CPUS = 1.0
_NUM_GPUS = 0.0
_MAX_RETRIES = 2
_START_TIMEOUT_S = 300.0
_EXTRA = "pip install 'oloproof[ray]'"
_CLIENT_SCHEME = "ray://"
_CLIENT_PORT = 10001  # Ray Client's, when a ray:// address names none
_REACH_TIMEOUT_S = 5.0
# How often a run asks whether its cluster still answers: well within the minute Ray waits
# for a cluster that went away before it ends the process.
_WATCH_S = 5.0
# Checks in a row it must miss to count as gone: a busy control service, or one restarting
# (Ray's fault tolerance), may miss one.
_GONE_AFTER = 3
# Folders never sent with the project: the ledger, version control, virtual environments.
_NOT_SHIPPED = [".oloproof", ".git", ".venv", "venv", "__pycache__"]


class RayEngineError(OloproofError):
    """The Ray engine cannot go on: its replicas keep dying, one of them failed in Oloproof's
    own code, or what a replica recorded does not match what the driver records."""


@dataclass(frozen=True)
class _Settings:
    """The ray engine's settings with their defaults filled in."""

    address: str | None
    replicas: int
    per_replica: int
    options: dict[str, Any]
    max_retries: int
    start_timeout_s: float

    @staticmethod
    def of(config: ProjectConfig) -> _Settings:
        engine = config.engine
        options: dict[str, Any] = {
            "num_cpus": _NUM_CPUS if engine.num_cpus is None else engine.num_cpus,
            "num_gpus": _NUM_GPUS if engine.num_gpus is None else engine.num_gpus,
        }
        if engine.memory_mib is not None:
            options["memory"] = engine.memory_mib * 2**20
        return _Settings(
            engine.address,
            engine.replicas or _REPLICAS,
            engine.concurrency or config.concurrency,
            options,
            _MAX_RETRIES if engine.max_retries is None else engine.max_retries,
            engine.start_timeout_s or _START_TIMEOUT_S,
        )


async def start_ray_engine(
    config: ProjectConfig, config_path: Path, system: System, reranker: RerankerRef | None
) -> RayEngine:
    """Connect to (or start) Ray and start the replicas; see the module."""
    settings = _Settings.of(config)
    where = config.location("engine", path=config_path)
    ray = import_ray(where, local=settings.address is None)
    base = config_path.parent
    shipped = None
    if config.engine.ship_project:
        excludes = [*_NOT_SHIPPED, _relative_to(base / config.dataset, base)]
        shipped = {"working_dir": str(base), "excludes": excludes}
    owns = _connect(ray, settings, where, shipped)
    kind = next(k for k in ("callable", "http", "rag", "model") if getattr(config.system, k))
    setup = ReplicaSetup(
        system=config.system,
        base_dir=str(base),
        shipped=bool(config.engine.ship_project),
        working_dir=_working_place(base),
        where=config.location("system", kind, path=config_path),
        concurrency=settings.per_replica,
        timeout_s=config.timeout_s,
        header_places={
            header: config.location("system", "http", "headers", header, path=config_path)
            for header in (config.system.http.headers if config.system.http else {})
        },
        secrets=tuple(config.secrets),
        reranker=reranker,
    )
    engine = RayEngine(ray, settings, setup, system.identity(), owns, where)
    try:
        await engine.start()
    except BaseException:
        await engine.aclose()
        raise
    return engine


def import_ray(where: str, *, local: bool) -> ModuleType:
    """Ray, or a ``ConfigError`` naming the extra that installs it (``where`` names the
    setting that chose the engine)."""
    if local and "ray" not in sys.modules:
        # Both are read as Ray is imported. A Ray instance of our own listens on the loopback
        # interface only (Ray otherwise binds the machine's outward address), and has a token
        # of its own (rather than one Ray would write to ~/.ray).
        os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
        if "RAY_AUTH_MODE" not in os.environ and "RAY_AUTH_TOKEN" not in os.environ:
            os.environ["RAY_AUTH_MODE"] = "token"
            os.environ["RAY_AUTH_TOKEN"] = secrets.token_hex(32)
    try:
        import ray
    except ModuleNotFoundError as exc:
        if exc.name == "ray" or (exc.name or "").startswith("ray."):
            raise ConfigError(
                f"{where}: the ray engine needs Ray, which is not installed: {_EXTRA}"
            ) from None
        raise
    _report_stream_kept(ray)
    return ray


def check_reachable(address: str, where: str) -> None:
    """Refuse a Ray address (``HOST:PORT``, ``ray://HOST[:PORT]``) where Ray does not answer
    within ``_REACH_TIMEOUT_S``: nothing listens, or what listens is not a gRPC server (Ray's
    control service and its client server both are). Ray's client retries such an address for
    minutes, printing a warning every few seconds, before it gives up. ``auto`` is left to Ray,
    which finds the cluster of this machine (or says there is none) at once.

    A cluster that speaks TLS (``RAY_USE_TLS``, as Ray reads it) is only checked for a
    listener: its handshake is not one this check makes."""
    if address == "auto":
        return
    host, port = _host_port(address, where)
    why = _unanswered(host, port)
    if why is not None:
        raise ConfigError(f"{where}: cannot connect to Ray at {address}: {why}")


def _host_port(address: str, where: str) -> tuple[str, int]:
    """The host and port of ``HOST:PORT`` or ``ray://HOST[:PORT]``."""
    if address.startswith(_CLIENT_SCHEME):
        parts = urllib.parse.urlsplit(address)
        try:
            return parts.hostname or "", parts.port or _CLIENT_PORT
        except ValueError:  # a port that is not a number
            raise ConfigError(f"{where}: {address!r} is not a Ray address") from None
    host, _, digits = address.rpartition(":")
    return host, int(digits)


def _unanswered(host: str, port: int) -> str | None:
    """Why Ray does not answer at ``host:port`` (``None``: it does)."""
    try:
        sock = socket.create_connection((host, port), timeout=_REACH_TIMEOUT_S)
    except OSError as exc:
        return _unreachable(exc, host)
    with sock:
        return None if _uses_tls() else _not_ray(sock)


# HTTP/2's client preface and an empty SETTINGS frame (RFC 9113, 3.4): a server's first frame
# in return is its own SETTINGS frame (type 4, on stream 0), whatever else it goes on to say.
_H2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + bytes([0, 0, 0, 4, 0, 0, 0, 0, 0])
_FRAME_HEAD = 9


def _uses_tls() -> bool:
    return os.environ.get("RAY_USE_TLS", "0").lower() in ("1", "true")


def _not_ray(sock: socket.socket) -> str | None:
    """Why the server at ``sock`` is not Ray (``None``: it answers HTTP/2's preface as gRPC
    servers do)."""
    head = b""
    try:
        sock.sendall(_H2_PREFACE)
        while len(head) < _FRAME_HEAD:
            chunk = sock.recv(_FRAME_HEAD - len(head))
            if not chunk:
                break
            head += chunk
    except TimeoutError:
        return f"what listens there gave no answer within {_REACH_TIMEOUT_S:g} s"
    except OSError:  # reset: a server that refuses what it was sent
        pass
    if len(head) == _FRAME_HEAD and head[3] == 4 and head[5:] == bytes(4):
        return None
    return "what listens there does not answer as Ray does (it is not a gRPC server)"


def _unreachable(exc: OSError, host: str) -> str:
    if isinstance(exc, ConnectionRefusedError):
        return "nothing listens there (connection refused)"
    if isinstance(exc, TimeoutError):
        return f"no answer within {_REACH_TIMEOUT_S:g} s"
    if isinstance(exc, socket.gaierror):
        return f"the host {host!r} is not known"
    return exc.strerror or type(exc).__name__


def _report_stream_kept(ray: ModuleType) -> None:
    """Ray's driver prints what the cluster reports (a worker died...) on standard output,
    where the run's report goes: print it on standard error instead."""
    worker: Any = importlib.import_module("ray._private.worker")
    printer = worker.print_to_stdstream
    if getattr(printer, "oloproof_stderr", False):
        return

    def to_stderr(data: dict[str, Any], ignore_prefix: bool) -> None:
        printer({**data, "is_err": True}, ignore_prefix)

    to_stderr.oloproof_stderr = True  # type: ignore[attr-defined]  # a mark, read above
    worker.print_to_stdstream = to_stderr


def _connect(
    ray: ModuleType, settings: _Settings, where: str, shipped: dict[str, Any] | None
) -> bool:
    """Connect this process to Ray, sending the project folder when ``shipped`` says how
    (Ray sends a local folder only as it connects); whether it did (and so must disconnect at
    the end)."""
    if ray.is_initialized():  # the caller connected this process already: use that
        if shipped is not None:
            raise ConfigError(
                f"{where}: ship_project: this process is connected to Ray already, and Ray "
                "sends a project folder only as it connects; pass runtime_env={'working_dir': "
                "...} to your ray.init instead"
            )
        return False
    # Workers' output never reaches this process's stdout, where the report goes.
    given: dict[str, Any] = {"log_to_driver": False, "logging_level": logging.WARNING}
    if shipped is not None:
        given["runtime_env"] = shipped
    try:
        if settings.address is None:
            ray.init(address="local", include_dashboard=False, **given)
            _check_fits(ray, settings, where)
        else:
            ray.init(address=settings.address, **given)
    except OloproofError:
        ray.shutdown()
        raise
    except Exception as exc:  # Ray raises ConnectionError, RuntimeError, ValueError...
        ray.shutdown()
        target = "start Ray on this machine" if settings.address is None else "connect to Ray"
        at = f" at {settings.address}" if settings.address else ""
        raise ConfigError(f"{where}: cannot {target}{at}: {_first_line(exc)}") from None
    return True


def _check_fits(ray: ModuleType, settings: _Settings, where: str) -> None:
    """Refuse replicas a Ray instance on this machine could never start all of."""
    total: Mapping[str, float] = ray.cluster_resources()
    wanted = {"CPU": "num_cpus", "GPU": "num_gpus", "memory": "memory"}
    for resource, option in wanted.items():
        need = settings.replicas * float(settings.options.get(option, 0))
        have = float(total.get(resource, 0))
        if need > have:
            raise ConfigError(
                f"{where}: {settings.replicas} replicas need {_amount(resource, need)} in all, "
                f"and this machine offers Ray {_amount(resource, have)}; lower engine.replicas "
                f"or what each asks for, or give engine.address of a larger cluster"
            )


@dataclass(eq=False)
class _Member:
    handle: Any
    busy: int = 0
    alive: bool = True
    held: bool = False  # for a case sent again alone: no other case starts on it


class RayEngine:
    """The pool of replicas and the dispatch of cases to it (see the module)."""

    kind = "ray"

    def __init__(
        self,
        ray: ModuleType,
        settings: _Settings,
        setup: ReplicaSetup,
        expected: dict[str, Any],
        owns: bool,
        where: str,
    ) -> None:
        self._ray = ray
        self._settings = settings
        self._setup = setup
        self._expected = expected
        self._owns = owns
        self._where = where
        self.slots = settings.replicas * settings.per_replica
        # Room for every case a replica runs plus their stage answers, which queue beside them.
        concurrency = 2 * settings.per_replica + 4
        actor = ray.remote(Replica)
        options = {"max_concurrency": concurrency, "max_restarts": 0, **settings.options}
        self._actor = actor.options(**options)
        self._pool: list[_Member] = []
        self._handles: list[Any] = []
        self._changed = asyncio.Condition()
        self._starting = 0
        self._refused: list[str] = []
        self._joining: set[asyncio.Task[None]] = set()
        self._calls = itertools.count()
        self._counts = {"replicas": 0, "worker_deaths": 0, "replicas_stopped": 0, "resent": 0}
        self._reported = dict(self._counts)
        self._deaths_in_a_row = 0
        self._running: set[asyncio.Task[Any]] = set()  # the cases' tasks, for the watch
        self._gone: str | None = None  # why the watch found the cluster gone
        self._watching: asyncio.Task[None] | None = None

    async def start(self) -> None:
        """Start the replicas; return once every one is ready (or refused), or once the start
        timeout has passed with at least one ready (the others join when they are)."""
        self._watching = asyncio.create_task(self._watch(*self._control_service()))
        for _ in range(self._settings.replicas):
            self._spawn()
        try:
            async with asyncio.timeout(self._settings.start_timeout_s):
                async with self._changed:
                    await self._changed.wait_for(lambda: not self._starting)
        except TimeoutError:
            if self._pool:
                return
            raise ConfigError(
                f"{self._where}: no Ray replica started within "
                f"{self._settings.start_timeout_s:g} s; each asks for "
                f"{_asks(self._settings.options)}, and the cluster has "
                f"{_resources(self._ray.available_resources())} free"
            ) from None
        if not self._pool:
            raise ConfigError(self._refused[0])

    def _spawn(self) -> None:
        handle = self._actor.remote(self._setup)
        self._handles.append(handle)
        self._starting += 1
        task = asyncio.create_task(self._join(handle))
        self._joining.add(task)
        task.add_done_callback(self._joining.discard)

    async def _join(self, handle: Any) -> None:
        try:
            answer = await handle.ready.remote()
        except self._ray.exceptions.RayError as exc:  # it could not start at all
            answer = {"error": f"{self._where}: a Ray replica failed to start: {_first_line(exc)}"}
        problem = answer.get("error") or self._differs(answer["identity"])
        async with self._changed:
            self._starting -= 1
            if problem is None:
                self._pool.append(_Member(handle))
                self._counts["replicas"] += 1
            else:
                self._refused.append(problem)
                self._ray.kill(handle)
            self._changed.notify_all()

    def _differs(self, identity: Mapping[str, Any]) -> str | None:
        if identity == self._expected:
            return None
        keys = sorted(
            k for k in {*identity, *self._expected} if identity.get(k) != self._expected.get(k)
        )
        return (
            f"{self._setup.where}: the system the Ray workers built is not the one planned here "
            f"(its {', '.join(keys)} differ): give the workers the same project files and "
            "packages, or set engine.ship_project: true"
        )

    async def execute(self, case: Case, ctx: ExecContext) -> Outcome:
        if self._gone is not None:
            raise RayEngineError(self._gone)
        task = asyncio.current_task()
        assert task is not None, "the scheduler runs each case in a task"
        self._running.add(task)
        try:
            return await self._execute(case, ctx)
        except asyncio.CancelledError:
            if self._gone is None:
                raise  # the run is stopping (Ctrl-C)
            task.uncancel()  # cancelled by the watch, which says why
            raise RayEngineError(self._gone) from None
        finally:
            self._running.discard(task)

    async def _execute(self, case: Case, ctx: ExecContext) -> Outcome:
        deaths = 0
        while True:
            alone = deaths > 0  # its worker died: whichever case killed it, it dies alone now
            member = await (self._acquire_alone() if alone else self._acquire())
            limit = asyncio.timeout(_held_limit(self._setup.timeout_s))
            try:
                async with limit:
                    outcome = await self._run_on(member, case, ctx)
            except TimeoutError:
                if not limit.expired():
                    raise
                # Alone on a replica still up, the case is what held it; stopped already for
                # another of its cases, or beside others, it may not be.
                held_alone = member.alive and member.busy == 1
                await self._lost(member, stopped=True)  # a replica started in its place
                if held_alone:  # recorded as a local run records it: the run goes on
                    self._deaths_in_a_row = 0
                    # The stages it ran and the model calls it made on the stopped replica
                    # never reached this machine.
                    return None, timed_out(self._setup.timeout_s, held=True), [], []
                # Which of its cases held it is not known: each goes again, as after a death.
            except self._ray.exceptions.RayActorError:
                await self._lost(member)
            else:
                self._deaths_in_a_row = 0
                return outcome
            finally:
                await self._release(member, alone)
            deaths += 1
            if deaths > self._settings.max_retries:
                return None, _died(deaths, self._settings.max_retries), [], []
            self._counts["resent"] += 1

    async def _acquire(self) -> _Member:
        limit = self._settings.per_replica
        async with self._changed:
            while True:
                free = [m for m in self._pool if m.busy < limit and not m.held]
                if free:
                    member = min(free, key=lambda m: m.busy)
                    member.busy += 1
                    return member
                self._check_left()
                await self._changed.wait()

    async def _acquire_alone(self) -> _Member:
        """A replica held for one case: the least busy one not held already, once the cases
        it was running have ended (none start on it meanwhile)."""
        async with self._changed:
            while True:
                free = [m for m in self._pool if not m.held]
                if not free:
                    self._check_left()
                    await self._changed.wait()
                    continue
                member = min(free, key=lambda m: m.busy)
                member.held = True
                try:
                    while member.alive and member.busy:
                        await self._changed.wait()
                except BaseException:  # cancelled while waiting: the replica is not kept
                    member.held = False
                    self._changed.notify_all()
                    raise
                if member.alive:
                    member.busy += 1
                    return member

    def _check_left(self) -> None:
        if not self._pool and not self._starting:
            raise RayEngineError(
                "no Ray replica is left to run the cases"
                + (f" ({self._refused[-1]})" if self._refused else "")
            )

    async def _release(self, member: _Member, alone: bool) -> None:
        async with self._changed:
            member.busy -= 1
            if alone:
                member.held = False
            self._changed.notify_all()

    async def _lost(self, member: _Member, stopped: bool = False) -> None:
        """Take a dead replica (or one ``stopped`` for holding a case) out of the pool and
        start another in its place."""
        async with self._changed:
            if not member.alive:
                return  # another of its cases found it dead first
            member.alive = False
            self._pool.remove(member)
            self._counts["replicas_stopped" if stopped else "worker_deaths"] += 1
            # A stuck replica finished no case either: it counts toward a crash loop.
            self._deaths_in_a_row += 1
            self._ray.kill(member.handle)  # an unreachable one must not go on working
            limit = self._settings.replicas * (self._settings.max_retries + 1)
            if self._deaths_in_a_row > limit:
                raise RayEngineError(
                    f"{self._deaths_in_a_row} Ray workers died one after another without "
                    "finishing a case; the cases that finished are kept"
                )
            self._spawn()

    async def _watch(self, host: str, port: int) -> None:
        """Stop the cases in flight once the cluster no longer answers at ``host:port``: the
        calls to a cluster that is gone never end, and Ray waits a minute for it to come back
        and then ends this process itself (exit 1, as if a rule had failed, without the run's
        report or its end record)."""
        missed = 0
        while True:
            await asyncio.sleep(_WATCH_S)
            why = await asyncio.to_thread(_unanswered, host, port)
            missed = 0 if why is None else missed + 1
            if missed == _GONE_AFTER:
                self._gone = (
                    f"the Ray cluster at {host}:{port} stopped answering during the run: "
                    f"{why}; the cases that finished are kept"
                )
                for task in self._running:
                    task.cancel()
                return

    async def _run_on(self, member: _Member, case: Case, ctx: ExecContext) -> Outcome:
        number = next(self._calls)
        order = CaseOrder(
            number, case, ctx.intervention, _replay_for(case, ctx), ctx.use_stage_cache
        )
        reply = await self._reply(member.handle.start.remote(order))
        while reply[0] == "lookup":  # the replica asks the driver's stage cache
            answer = await ctx.stage_cache.lookup(reply[1])
            reply = await self._reply(member.handle.resume.remote(number, answer))
        if reply[0] == "fault":
            raise RayEngineError(f"a Ray replica failed: {reply[1]}")
        redaction.add_stored(reply[-2])  # the secrets the replica replaced in what it sent
        for stage, identity, result, address in reply[-1]:
            if ctx.stage_cache.record(stage, identity, result) != address:
                raise RayEngineError(
                    f"case {case.id!r}: a Ray replica recorded its {stage} stage as another "
                    "event than this machine does; install the same oloproof on both"
                )
        if reply[0] == "stop":
            raise _stopped(reply)
        _, execution, error, stages, calls, _, _ = reply
        assert execution is None or isinstance(execution, Execution)
        return execution, error, stages, calls

    async def _reply(self, ref: Any) -> tuple[Any, ...]:
        try:
            reply: tuple[Any, ...] = await ref
        except asyncio.CancelledError:
            self._ray.cancel(ref)  # the run is stopping: stop the case on its replica too
            raise
        except self._ray.exceptions.RayActorError:
            raise
        except self._ray.exceptions.RayError as exc:
            raise RayEngineError(f"a Ray replica failed: {_first_line(exc)}") from None
        return reply

    async def settle(self) -> None:
        """Each replica waits, up to the case timeout, for the work its cases started, and
        says when it recorded late or still runs (``Replica.settle``): the run stops as a
        local one's ``LateRecords.settle`` stops it. A replica whose loop is held past
        ``_held_limit``, or that died since its last case, stops it too: what that work
        records (or recorded) cannot count either, and whether it did is not known."""
        limit = _held_limit(self._setup.timeout_s)
        asked = [self._reply(member.handle.settle.remote()) for member in self._pool]
        try:
            async with asyncio.timeout(limit):
                replies = await asyncio.gather(*asked)
        except TimeoutError:
            raise RayEngineError(
                f"a Ray replica held up its event loop for {limit:g} s after its cases "
                "returned (blocking code in a task a case started); what it records once "
                "the run has ended cannot count for its case; wait for it before returning"
            ) from None
        except self._ray.exceptions.RayActorError:
            raise RayEngineError(
                "a Ray replica died after its cases returned: what the work they started "
                "recorded, if anything, was lost with it"
            ) from None
        for reply in replies:
            if reply:
                raise _stopped(reply)

    def summary(self) -> dict[str, Any] | None:
        """The replicas started, workers died, replicas stopped and cases sent again since
        the last call."""
        taken = {k: v - self._reported[k] for k, v in self._counts.items()}
        self._reported = dict(self._counts)
        return {"kind": self.kind, **taken}

    def _control_service(self) -> tuple[str, int]:
        """Where the cluster answers this process: the Ray Client server of a ``ray://``
        address, else the cluster's control service (GCS)."""
        address = self._settings.address
        if address is not None and address.startswith(_CLIENT_SCHEME):
            return _host_port(address, self._where)
        return _host_port(self._ray.get_runtime_context().gcs_address, self._where)

    async def aclose(self) -> None:
        if self._watching is not None:
            self._watching.cancel()
        for task in list(self._joining):
            task.cancel()
        for handle in self._handles:
            self._ray.kill(handle)
        self._handles.clear()
        self._pool.clear()
        if self._owns:
            self._ray.shutdown()


def _replay_for(case: Case, ctx: ExecContext) -> dict[str, Any]:
    """The case's share of what the run replays: its recorded retrieval, and a reranker by
    the reference the intervention records (the replica imported it as it started)."""
    replay: dict[str, Any] = {}
    for key, value in ctx.replay.items():
        if key == "retrievals":
            replay[key] = {case.id: value[case.id]}
        elif key == "reranker":
            replay[key] = (ctx.intervention or {})["reranker"]
        else:
            raise RayEngineError(f"the ray engine cannot send the replay's {key!r} to a replica")
    return replay


def _held_limit(timeout_s: float) -> float:
    """How long the driver waits for a replica's answer to one case before it stops the
    replica: well past the case's own deadline, which the replica keeps when it can."""
    return max(2 * timeout_s, timeout_s + 10)


def _died(deaths: int, limit: int) -> dict[str, Any]:
    return {
        "type": "WorkerDied",
        "message": f"the Ray worker running the case died {deaths} {plural(deaths, 'time')} "
        f"(engine.max_retries: {limit})",
        "traceback": "",
    }


def _stopped(reply: tuple[Any, ...]) -> OloproofError:
    """The error a replica's ``stop`` reply stops the run with."""
    _, name, message, where, hint = reply[:5]
    found = getattr(errors, name, None)
    kind = found if isinstance(found, type) and issubclass(found, OloproofError) else None
    return (kind or OloproofError)(message, where=where, hint=hint)


def _working_place(base: Path) -> str:
    """This process's working folder as a replica finds it: relative to the project folder
    ``base`` when inside it (a replica's project folder may be a copy sent with the run), else
    its absolute path."""
    here = Path.cwd()
    try:
        return here.relative_to(base.resolve()).as_posix()
    except ValueError:
        return str(here)


def _relative_to(path: Path, base: Path) -> str:
    try:
        return path.resolve().relative_to(base.resolve()).as_posix()
    except ValueError:
        return path.name


def _amount(resource: str, value: float) -> str:
    if resource == "memory":
        return f"{value / 2**20:,.0f} MiB of memory"
    return f"{value:g} {resource}{'s' if value != 1 else ''}"


def _asks(options: Mapping[str, Any]) -> str:
    names = {"num_cpus": "CPU", "num_gpus": "GPU", "memory": "memory"}
    return ", ".join(_amount(names[k], float(v)) for k, v in options.items() if k in names and v)


def _resources(available: Mapping[str, float]) -> str:
    shown = [_amount(k, float(available.get(k, 0))) for k in ("CPU", "GPU", "memory")]
    return ", ".join(shown)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__
