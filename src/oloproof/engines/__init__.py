"""Execution engines: where a case's system part runs, while everything else stays put.

The scheduler (``oloproof.execute``) asks an engine for one thing, "execute this case's
system", and does the rest itself in the process that runs ``oloproof``: the execution and
judgment caches (a cached case never reaches an engine), judging, and every write to the
ledger. So a run gives the same events whichever engine executed its cases.

- ``local`` (``LocalEngine``): the system runs in this process, as it always did.
- ``ray`` (``oloproof.engines.ray``): a pool of Ray actors, each holding one built system,
  executes the cases; Ray is imported only when this engine is chosen.

``--engine`` on ``run`` and ``diagnose`` replaces the project's engine setting with
``engine_from_option``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from oloproof.config import RAY_ADDRESS, EngineConfig
from oloproof.errors import ConfigError

if TYPE_CHECKING:
    from oloproof.config import ProjectConfig
    from oloproof.dataset import Case
    from oloproof.engines.local import Outcome
    from oloproof.systems.base import ExecContext, System

ENGINE_CHOICES = "local, ray, auto, ray://HOST:PORT or HOST:PORT"


class Engine(Protocol):
    """Executes the system part of cases (see the module)."""

    kind: str
    # How many cases the scheduler keeps in flight.
    slots: int

    async def execute(self, case: Case, ctx: ExecContext) -> Outcome:
        """The case's execution, or the error record of a case that errored, the stages it
        ran (an errored case's too) and the model calls an errored case made. Raises what a
        local run would raise (a malformed artifact's ``ArtifactError``, a cancellation)."""

    async def settle(self) -> None:
        """Once every case has returned: wait for the work they started where they ran, and
        raise what a local run's ``LateRecords.settle`` raises (a record made after its case
        returned, work still running after the case timeout)."""

    def summary(self) -> dict[str, Any] | None:
        """What the run's end record says of the engine (none for the local engine)."""

    async def aclose(self) -> None:
        """Stop whatever the engine started."""


@dataclass(frozen=True)
class RerankerRef:
    """A diagnosis's reranker, as an engine imports it where the cases run, and how its
    errors name it."""

    reference: str  # module:function
    key: str  # --reranker, or the argument reranker
    where: str  # oloproof diagnose, or the call


def engine_from_option(config: EngineConfig, text: str) -> EngineConfig:
    """The engine setting ``--engine TEXT`` makes of the project's ``config``.

    ``local`` runs locally; ``ray`` runs on Ray with the project's Ray settings (or their
    defaults: a Ray instance started on this machine); ``auto``, ``ray://HOST:PORT`` or
    ``HOST:PORT`` run on Ray at that address, keeping the project's other Ray settings.
    """
    if text == "local":
        return EngineConfig()
    ray_settings = config.model_dump(exclude_none=True) if config.kind == "ray" else {}
    ray_settings["kind"] = "ray"
    if text != "ray":
        if not RAY_ADDRESS.fullmatch(text):
            raise ConfigError(f"--engine: {text!r} is not an engine (use {ENGINE_CHOICES})")
        ray_settings["address"] = text
    return EngineConfig.model_validate(ray_settings)


def require_engine(config: ProjectConfig, config_path: Path) -> None:
    """Refuse, while planning (before anything is written), an engine this machine lacks:
    ``engine: ray`` without Ray installed, or at an address nothing answers at."""
    if config.engine.kind == "ray":
        from oloproof.engines.ray import check_reachable, import_ray

        where = config.location("engine", path=config_path)
        import_ray(where, local=config.engine.address is None)
        if config.engine.address is not None:
            check_reachable(config.engine.address, where)


def local_slots(config: ProjectConfig) -> int:
    """How many cases the local engine keeps in flight: ``concurrency``, but no more than a
    model system's own ``concurrency`` (its calls in flight; 1 for a llama.cpp server).

    Why: a case's ``timeout_s`` runs from its start, and a case started beyond the model's
    slots waits in its queue on that clock. At 8 cases and 1 slot, cases whose model answered
    in half a second each were recorded 'TimeoutError: the case took longer than 2 s', the
    model never asked, and counted missing against the release.
    """
    model = config.system.model
    if model is None or model.concurrency is None:
        return config.concurrency
    return min(config.concurrency, model.concurrency)


async def open_engine(
    config: ProjectConfig, config_path: Path, system: System, reranker: RerankerRef | None = None
) -> Engine:
    """Start the engine ``config.engine`` names for ``system`` (planned from ``config``).

    The Ray engine starts its replicas here and checks that each built the very system the
    driver planned, and imported the ``reranker`` a diagnosis replays (the local engine runs
    the one the driver imported); every problem is a ``ConfigError`` raised before the run
    writes anything.
    """
    from oloproof.engines.local import LocalEngine

    if config.engine.kind == "local":
        return LocalEngine(system, config.timeout_s, local_slots(config))
    from oloproof.engines.ray import start_ray_engine

    return await start_ray_engine(config, config_path, system, reranker)
