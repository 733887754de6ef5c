"""A system that is a Python function decorated with ``@system``.

Its identity is its name, version, reference and declared artifact kinds, and the fingerprint of
the function's code closure (``oloproof.fingerprint``): the function, every function, class and
module of the project it reaches, the constants they read and the versions of the packages they
import. Editing any of them, in any module, makes every case execute again. When that code
reaches ``oloproof.models`` (it may call a model through ``ModelClient``), the identity also
says how replies are read (``oloproof.models.reading``): what an earlier reading made is made
again.
"""

from __future__ import annotations

import contextvars
import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Any

from oloproof.dataset import Case, own_copy
from oloproof.errors import ArtifactError, ConfigError
from oloproof.fingerprint import of_callable
from oloproof.models import reading, recording_model_calls
from oloproof.sdk import Recorder, SystemInfo, _activate, _deactivate
from oloproof.systems.base import ExecContext, Execution, declared_apart, load_object
from oloproof.systems.threads import CallPool


class CallableSystem:
    """Calls ``fn(case_input)``: async functions on the loop, sync ones on a thread pool."""

    kind = "callable"

    def __init__(
        self, *, name: str, version: str, reference: str, base_dir: Path, where: str
    ) -> None:
        fn = load_object(reference, base_dir=base_dir, key="system.callable", where=where)
        if not callable(fn):
            raise ConfigError(f"{where}: system.callable: {reference!r} is not callable")
        if not _is_python_code(fn):
            raise ConfigError(
                f"{where}: system.callable: {reference!r} is not a function defined in Python "
                f"source (found a {type(fn).__name__}); Oloproof fingerprints a system by its "
                "source file, so wrap it in a function of your own"
            )
        info: SystemInfo | None = getattr(fn, "__oloproof_system__", None)
        self._fn: Callable[..., Any] = fn
        self._records = info.records if info else ()
        is_async = inspect.iscoroutinefunction(fn)
        self._pool = None if is_async else CallPool("oloproof-system")
        # Computed once, here: a run fingerprints its system once, never per case.
        self._fingerprint = of_callable(fn, base_dir=base_dir)
        self._identity = {
            "kind": self.kind,
            "name": name,
            "version": version,
            "callable": reference,
            "records": list(self._records),
            "code": self._fingerprint.key,
            **reading([self._fingerprint]),
            **declared_apart((info.name, info.version) if info else None, name, version),
        }

    reuses_executions = True

    def identity(self) -> dict[str, Any]:
        return self._identity

    def fingerprints(self) -> dict[str, dict[str, Any]]:
        """The parts of the code fingerprint, recorded with a run so a later one can say what
        changed."""
        return {"callable": self._fingerprint.record()}

    async def execute(self, case: Case, ctx: ExecContext) -> Execution:
        recorder = Recorder(self._records, case.id)
        # Calls the function makes through oloproof.models.ModelClient are recorded with it.
        with recording_model_calls() as calls:
            try:
                if self._pool is None:  # an async function: it runs on the loop
                    token = _activate(recorder)
                    try:
                        output = await self._fn(own_copy(case.input))
                    finally:
                        _deactivate(token)
                else:
                    context = contextvars.copy_context()
                    context.run(_activate, recorder)
                    output = await self._pool.call(context.run, self._fn, own_copy(case.input))
            except ArtifactError as exc:
                raise ArtifactError(f"case {case.id!r}: {exc.message}") from None
        # What it records from now on is late: it would be lost (sdk.LateRecords).
        recorder.close()
        artifacts = recorder.artifacts
        if calls:
            artifacts.setdefault("model_call/v1", []).extend(calls)
        return Execution(output=output, artifacts=artifacts)

    async def aclose(self) -> None:
        if self._pool is not None:
            self._pool.close()


def _is_python_code(fn: Callable[..., Any]) -> bool:
    """Whether ``fn`` is a function or method written in Python (not a built-in, a C function
    or a callable object), so that its source file can be found."""
    try:
        inspect.getsourcefile(fn)
    except TypeError:
        return False
    return True
