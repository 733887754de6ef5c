"""Running one case's system part, and what counts as the run being interrupted.

``run_system`` is the one place that calls ``System.execute`` and sorts out what came of it,
for the local engine (in this process) and for every Ray replica alike, so a case errors, times
out or stops the run the same way wherever it ran:

1. an ``OloproofError`` (a malformed artifact, say) propagates: the run stops;
2. a real interruption (Ctrl-C, SIGTERM, the task cancelled) propagates;
3. an SDK type built wrongly by user code is a malformed artifact: ``ArtifactError``;
4. anything else user code raised, ``BaseException`` included, errors that case: its type,
   message and traceback are recorded (a timeout as ``TimeoutError``, and so is code that
   held the event loop past the case's timeout, stopped there by ``oloproof.aio`` where it
   can be, and in any case recorded so, on a Ray replica's loop as on the run's own);
5. the stages a case took from the stage cache or stored in it are returned with it, those of
   a case that then errored included: they ran and are in the ledger, so the run counts them
   and the errored execution links them;
6. so are the ``model_call/v1`` records of the calls an errored case made through
   ``oloproof.models.ModelClient`` before it errored (the one it errored on included, when a
   reply came): their tokens were spent, and the errored execution keeps them;
7. an answer that holds a secret the run keeps out errors its case (``secret_held``).

Tracebacks name each file relative to the import path entry it was loaded from (the project
folder, site-packages, the standard library), so the record of an errored case reads the same
on every machine that ran it.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import sys
import traceback
from typing import Any

from oloproof import aio
from oloproof.aio import Deadline
from oloproof.dataset import Case
from oloproof.errors import ArtifactError, OloproofError
from oloproof.models import recording_model_calls
from oloproof.redaction import cut, keeps_out_any, kept_out_found, one_line, redact_pieces
from oloproof.sdk import malformed_artifact
from oloproof.systems import threads
from oloproof.systems.base import (
    ExecContext,
    Execution,
    StageCache,
    StageRecord,
    System,
    UnrecordableOutput,
    last_failure,
    plain_output,
)
from oloproof.usercode import message_of, own_exit, received, recordable

# The execution, or the error record of a case that errored, the stages the case ran, and the
# model calls an errored case made (a case that did not error has them in its artifacts).
Outcome = tuple[Execution | None, dict[str, Any] | None, list[StageRecord], list[dict[str, Any]]]


class LocalEngine:
    """Executes each case in this process, on the run's event loop."""

    kind = "local"

    def __init__(self, system: System, timeout_s: float, slots: int) -> None:
        self._system = system
        self._timeout_s = timeout_s
        self.slots = slots

    async def execute(self, case: Case, ctx: ExecContext) -> Outcome:
        return await run_system(self._system, ctx, case, self._timeout_s)

    async def settle(self) -> None:
        return None  # the cases ran on the run's own loop, which it settles itself

    def summary(self) -> dict[str, Any] | None:
        return None  # a local run records nothing about its engine

    async def aclose(self) -> None:
        return None


async def run_system(system: System, ctx: ExecContext, case: Case, timeout_s: float) -> Outcome:
    """``system.execute(case)`` within ``timeout_s``: the execution, or the error record of a
    case that errored, the stages it ran and the model calls it made (see the module for what
    propagates instead)."""
    noted = _NotedStages(ctx.stage_cache)
    ctx = dataclasses.replace(ctx, stage_cache=noted)
    with Deadline(timeout_s) as due, recording_model_calls() as made:
        # A copy: a call still running on a thread past the case's timeout adds to ``made``.
        calls = made.copy
        try:
            async with due.waits():
                execution = await due.timed(system.execute(case, ctx))
        except OloproofError:
            raise
        except BaseException as exc:  # whatever user code raised, sys.exit included: errored
            # Cancelled at its deadline (first: that cancellation is taken back, and is no
            # interruption), or made on the loop and ended past it (CallPool).
            expired = due.expired(exc) or isinstance(exc, aio.Overdue)
            if not expired and interrupts_the_run(exc):
                raise
            malformed = malformed_artifact(exc)
            if malformed is not None:  # the SDK's own types, built wrongly: the adapter's fault
                raise ArtifactError(f"case {case.id!r}: {malformed}") from None
            if due.overran:  # what was raised in it (Overran), or what it raised after
                return None, timed_out(timeout_s, held=True), noted.stages, calls()
            try:
                error = (
                    timed_out(timeout_s, failure=last_failure(exc))
                    if expired
                    else error_record(exc)
                )
            except aio.Overran:
                # Its text is user code too (``__str__``), run here on the loop: one that held
                # the loop past the deadline was stopped there, and the case took too long.
                error = timed_out(timeout_s)
            return None, error, noted.stages, calls()
        # Code that swallowed Overran, or the cancellation at its deadline, and returned still
        # took longer than its case may.
        if due.overran:
            return None, timed_out(timeout_s, held=True), noted.stages, calls()
        if due.expired():
            return None, timed_out(timeout_s), noted.stages, calls()
        held = secret_held(execution.output)
        if held is not None:
            return None, held, noted.stages, calls()
        return execution, None, execution.stages, []


def secret_held(output: Any) -> dict[str, Any] | None:
    """The error record of an answer holding a secret the run keeps out, else None.

    Stored, such an answer reads ``[redacted]`` where the secret was, and every evaluator would
    judge that text rather than the answer given: a check that the system never leaks its key
    passed a system that did. So the case errors (its verdicts are missing, against the
    release), and as an errored execution it is never served from the cache either, where the
    secret could no longer be seen.
    """
    if not keeps_out_any():
        return None
    try:
        plain = plain_output(output)
    except UnrecordableOutput:
        return None  # refused where the output is recorded
    if not kept_out_found(plain)[1]:
        return None
    # The answer as given, its texts unescaped: each secret in it is then one the redactor
    # recognises as it is, and replaces (and counts) where the record is stored or sent back
    # by a replica; JSON would escape a long secret's line breaks into a form it does not know.
    stored = cut(one_line(_unescaped(plain)), _SHOWN_CHARS)
    return {
        "type": "SecretInAnswer",
        "message": (
            "the answer holds the value of a secret the run keeps out (one listed under "
            "secrets:, a variable named like a credential, or a key the configuration reads); "
            "stored and judged, it would read [redacted] there, and no evaluator could judge "
            f"the answer given. Its start, as stored: {stored}"
        ),
        "traceback": "",
    }


_SHOWN_CHARS = 300  # of an answer holding a secret, in its case's error


def _unescaped(value: Any) -> str:
    """A plain value written out with its texts (and bytes) as they are."""
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_unescaped(k)}: {_unescaped(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_unescaped(item) for item in value) + "]"
    if isinstance(value, str):
        return value
    if isinstance(value, bytes):
        return value.decode("utf-8", "surrogateescape")
    return json.dumps(value)


class _NotedStages:
    """The run's stage cache as one case uses it, noting each stage the case took from it (a
    hit) or stored in it (a miss): what a case that errors ran is known without its execution."""

    def __init__(self, cache: StageCache) -> None:
        self._cache = cache
        self.stages: list[StageRecord] = []

    async def lookup(self, identity: str) -> dict[str, Any] | None:
        found = await self._cache.lookup(identity)
        if found is not None:
            self.stages.append(StageRecord(found["stage"], identity, found["address"], True))
        return found

    def record(self, stage: str, identity: str, result: dict[str, Any]) -> str:
        address = self._cache.record(stage, identity, result)
        self.stages.append(StageRecord(stage, identity, address, False))
        return address


def timed_out(
    timeout_s: float, *, held: bool = False, failure: str | None = None
) -> dict[str, Any]:
    """The error record of a case that took longer than ``timeout_s`` (``held``: holding up
    the event loop as it did; ``failure``: what the system last failed on, trying again)."""
    message = f"the case took longer than {timeout_s:g} s"
    if held:
        message += " and held up the event loop (blocking code in an async system)"
    if failure is not None:
        message += f"; {failure}"
    return {"type": "TimeoutError", "message": message, "traceback": ""}


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


def error_record(exc: BaseException) -> dict[str, Any]:
    """What an error of user code is recorded as: its type, message and portable traceback
    (none when its text, the user's ``__str__``, calls ``sys.exit`` as Python's traceback
    module makes it: see ``own_exit``), with the pieces of secrets that a library cut short
    in its message kept out (``redaction.redact_pieces``)."""
    message = redact_pieces(message_of(exc))
    try:
        shown = portable_traceback(exc)
    except BaseException as failed:
        if not own_exit(failed):
            raise
        shown = ""
    return {
        "type": type(exc).__name__,  # no lone surrogate: Python refuses one in a class name
        "message": message,
        "traceback": redact_pieces(shown),
    }


def portable_traceback(exc: BaseException) -> str:
    """``traceback.format_exception(exc)`` with every file named relative to the longest
    ``sys.path`` entry that holds it (absolute only when none does), ``recordable``."""
    roots = _import_roots()
    shown = traceback.TracebackException.from_exception(exc, compact=True)
    pending = [shown]
    seen: set[int] = set()
    while pending:
        item = pending.pop()
        if id(item) in seen:
            continue
        seen.add(id(item))
        # The frames of the watch a case runs under where no timer is kept (a Ray replica's
        # loop), and of the pool that makes a synchronous call on a thread or on the loop, are
        # Oloproof's, not the case's: the record reads the same wherever the call was made.
        item.stack = traceback.StackSummary.from_list(
            [f for f in item.stack if (f.filename, f.name) not in _CARRIER_FRAMES]
        )
        for frame in item.stack:
            frame.filename = _relative(frame.filename, roots)
        if getattr(item, "filename", None) is not None:  # a SyntaxError's file
            item.filename = _relative(item.filename, roots)
        pending.extend(e for e in (item.__cause__, item.__context__) if e is not None)
        pending.extend(item.exceptions or ())
    return _kept(recordable("".join(shown.format())))


# Characters of a traceback an error record keeps: its start and, longer, its end (the frames
# nearest the error, and the error). A recursion that alternates two frames, which Python does
# not fold, runs to a hundred thousand and more, stored with every case it fails.
_TRACEBACK_HEAD = 4_000
_TRACEBACK_TAIL = 12_000


def _kept(text: str) -> str:
    if len(text) <= _TRACEBACK_HEAD + _TRACEBACK_TAIL:
        return text
    head = text[: text.rfind("\n", 0, _TRACEBACK_HEAD) + 1]
    tail = text[text.find("\n", len(text) - _TRACEBACK_TAIL) + 1 :]
    left = len(text) - len(head) - len(tail)
    return f"{head}  [... {left:,} characters of the traceback not kept ...]\n{tail}"


_CARRIER_FRAMES = {
    (aio.__file__, "__await__"),
    (aio.__file__, "_step"),
    *((threads.__file__, name) for name in ("call", "_work", "_on_loop")),
}


def _import_roots() -> list[str]:
    found = {os.path.realpath(entry) for entry in sys.path if entry}
    return sorted((root + os.sep for root in found if os.path.isdir(root)), key=len, reverse=True)


def _relative(filename: str, roots: list[str]) -> str:
    if not os.path.isabs(filename):
        return filename  # "<string>", "<frozen runpy>", a Cython module's own name
    real = os.path.realpath(filename)
    for root in roots:
        if real.startswith(root):
            return real[len(root) :]
    return filename
