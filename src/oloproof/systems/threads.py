"""Threads that run a system's synchronous calls for the event loop.

``run_in_executor`` wraps every call in a ``concurrent.futures.Future`` (a lock and a condition
of its own) and then chains it to an asyncio future; for a system that answers in microseconds
that bookkeeping costs more than the call. Here a call is one queue item and one asyncio future.
Finished calls wait in one list, and only the call that finds the list empty wakes the loop
(``call_soon_threadsafe``, a write to its self-pipe); the loop then settles every call in the
list. While the loop is busy, calls finishing on several threads share one wake-up instead of
each thread writing the pipe and then contending for the GIL to return from the write
(benchmarks/overhead.py measures a whole run: five evaluators at 10,000 cases went from 1.04 to
0.82 ms a case, a trivial one-evaluator run from 0.366 to 0.355).

A thread is started whenever more calls are unfinished than there are threads, so a call left
running after its case timed out keeps its thread and another takes its place: one hung call
never makes the cases after it wait. The threads are daemons, so such a call does not keep the
process alive once the run is over.

Even so, a hop to a thread and back costs about 40 µs (two GIL hand-overs and a wake-up of the
loop), more than a call that computes an answer in Python takes, and under the GIL such calls
gain nothing from threads. So once ``_PROBATION`` calls in a row each used at most ``_FAST_S``
of CPU time without waiting on anything (its thread made no voluntary context switch: no
sleep, socket, disk or lock wait; being preempted by a busy machine is not a wait), the pool
makes its calls on the loop itself, where the timer of ``oloproof.aio`` keeps the case's
deadline. Every later call goes back to the threads, for good, after one made there held the
loop longer than ``_HOLD_S`` or ran past its case's deadline, or once those made there have
waited, together, longer than ``_GRACE_S`` and ``_WAIT_SHARE`` of the time since they began
(the loop waits with them, where threads would have waited side by side). The share tolerates
what is not the call's own: the loop's thread also waits when another thread of the process
takes the GIL from it. Where the system cannot tell a thread's waits (no ``RUSAGE_THREAD``),
every call goes to a thread. A call made on the loop:

- sees no running loop, as on a thread (so it may start one of its own with ``asyncio.run``);
- is stopped by ``Overran`` if it is still running a quarter of a second past its case's
  deadline (a hung socket read is, a C call holding the GIL is not), and when it ends past the
  deadline, however it ended, its case times out (``aio.Overdue``) exactly as on a thread;
- raises what it raised, as ``call`` raises a thread's exception;
- may recurse as deep as on a thread: it starts some 40 frames down the loop's stack, where a
  thread's call starts near the bottom of its own, so the recursion limit is raised by those
  frames while it runs (and left as the call set it, if it set one).

Where no timer is kept (a Ray replica's loop) every call goes to a thread.
"""

from __future__ import annotations

import asyncio
import queue
import resource
import sys
import threading
import time
from collections.abc import Callable
from types import FrameType
from typing import Any, Final

from oloproof import aio
from oloproof.usercode import received

_Item = tuple[asyncio.Future[Any], Callable[..., Any], tuple[Any, ...]]
_Done = tuple[asyncio.Future[Any], Any, BaseException | None, bool]  # bool: it was fast
_Usage = tuple[float, float, int]  # the clock, the thread's CPU seconds and voluntary switches

_PROBATION: Final = 16  # fast calls in a row on the threads before calls are made on the loop
_FAST_S: Final = 0.001  # the CPU time a fast call takes at most, waiting on nothing
_HOLD_S: Final = 0.05  # the longest a call made on the loop may hold it
_GRACE_S: Final = 0.005  # what calls made on the loop may wait in all, beyond _WAIT_SHARE
_WAIT_SHARE: Final = 0.02  # of the time since calls began to be made on the loop
_NEVER: Final = -1
# Beyond the frames under the first call made on the loop, for calls made from deeper (a RAG
# system's stages): the recursion limit is raised by both for a call there (see the module).
_SPARE_FRAMES: Final = 16
_THREAD: Final = getattr(resource, "RUSAGE_THREAD", None)


def _usage() -> _Usage:
    if _THREAD is None:
        return time.perf_counter(), 0.0, 0
    used = resource.getrusage(_THREAD)
    return time.perf_counter(), used.ru_utime + used.ru_stime, used.ru_nvcsw


def _spent(before: _Usage) -> tuple[float, float, float]:
    """Of the call made on this thread since ``before``: its time on the clock, on the CPU,
    and waiting (its clock time beyond its CPU time, if it waited at all)."""
    now, cpu, waits = _usage()
    wall, used = now - before[0], cpu - before[1]
    return wall, used, (wall - used if waits != before[2] else 0.0)


def _fast(before: _Usage) -> bool:
    """Whether the call made on this thread since ``before`` was fast (see the module)."""
    _, cpu, waited = _spent(before)
    return _THREAD is not None and cpu <= _FAST_S and not waited


def _depth() -> int:
    """The frames of this thread's stack below the caller's."""
    frame: FrameType | None = sys._getframe(1)
    count = 0
    while frame is not None:
        frame, count = frame.f_back, count + 1
    return count


class _Carried(Exception):
    """A ``GeneratorExit`` a call raised, on its way to the awaiting coroutine.

    Set on the future as it is, it would be thrown into the awaiting task, and a
    ``GeneratorExit`` thrown into a coroutine closes the coroutines it awaits instead of
    reaching their ``except`` clauses; raised by ``call`` itself, it propagates as any other.
    """

    def __init__(self, exc: GeneratorExit) -> None:
        super().__init__()
        self.exc = exc


class CallPool:
    """Runs calls on threads of its own, in submission order (see the module)."""

    def __init__(self, name: str) -> None:
        self._name = name
        self._queue: queue.SimpleQueue[_Item | None] = queue.SimpleQueue()
        self._threads = 0
        self._unfinished = 0  # submitted and not yet finished by a thread; loop thread only
        self._closed = False
        self._done: list[_Done] = []  # finished on a thread, not yet settled on the loop
        self._done_lock = threading.Lock()
        # Fast calls in a row on the threads; from _PROBATION on, calls are made on the loop;
        # _NEVER once those sent them back (see the module).
        self._fast = 0
        self._since = 0.0  # when calls began to be made on the loop
        self._waited = 0.0  # how long those waited in all
        self._room = 0  # frames added to the recursion limit for a call on the loop

    async def call(self, fn: Callable[..., Any], *args: Any) -> Any:
        """``fn(*args)`` on one of the threads, or on the loop (see the module); its result, or
        its exception raised here."""
        if self._closed:
            raise RuntimeError("the call pool is closed")
        if self._fast >= _PROBATION:
            due = aio.kept_deadline()
            if due is not None:
                return self._on_loop(due, fn, args)
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        self._unfinished += 1
        if self._unfinished > self._threads:
            self._start_thread(loop)
        self._queue.put((future, fn, args))
        try:
            return await future
        except _Carried as carried:
            raise carried.exc from None

    def _on_loop(self, due: float, fn: Callable[..., Any], args: tuple[Any, ...]) -> Any:
        """``fn(*args)`` made here, on the loop, within its case's deadline ``due``."""
        loop = asyncio.events._get_running_loop()
        asyncio.events._set_running_loop(None)
        if not self._room:
            self._room = _depth() + _SPARE_FRAMES
        limit = sys.getrecursionlimit()
        sys.setrecursionlimit(limit + self._room)
        before = _usage()
        result: Any = None
        error: BaseException | None = None
        try:
            result = fn(*args)
        except StopIteration as exc:  # as ``_work`` sends it
            error = RuntimeError(f"StopIteration raised: {exc}")
        except BaseException as exc:  # raised below, after the clocks are read
            error = exc
        finally:
            asyncio.events._set_running_loop(loop)
            if sys.getrecursionlimit() == limit + self._room:  # else the call set one: kept
                sys.setrecursionlimit(limit)
        wall, _, waited = _spent(before)
        if not self._since:
            self._since = before[0]
        self._waited += waited
        overdue = aio.overdue(due)
        budget = _GRACE_S + _WAIT_SHARE * (before[0] + wall - self._since)
        if overdue or wall > _HOLD_S or self._waited > budget:
            self._fast = _NEVER
        # Past its deadline, the case times out whatever the call did, as on a thread (where
        # the case stops waiting at the deadline); a real Ctrl-C or SIGTERM is passed on.
        if overdue and not received():
            raise aio.Overdue() from None
        if isinstance(error, GeneratorExit):
            raise error from None  # as ``call`` raises one carried from a thread
        if error is not None:
            raise error
        return result

    def close(self) -> None:
        """Stop the threads once their current call returns; calls still queued are dropped."""
        self._closed = True
        for _ in range(self._threads):
            self._queue.put(None)
        self._threads = 0

    def _start_thread(self, loop: asyncio.AbstractEventLoop) -> None:
        thread = threading.Thread(
            target=self._work, args=(loop,), name=f"{self._name}-{self._threads}", daemon=True
        )
        thread.start()
        self._threads += 1

    def _work(self, loop: asyncio.AbstractEventLoop) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                return
            future, fn, args = item
            result: Any = None
            error: BaseException | None = None
            fast = False
            if not (self._closed or future.done()):  # not stopped, not timed out while queued
                before = _usage()
                try:
                    result = fn(*args)
                    fast = _fast(before)
                except StopIteration as exc:  # cannot be set on a future (it ends generators)
                    error = RuntimeError(f"StopIteration raised: {exc}")
                except GeneratorExit as exc:
                    error = _Carried(exc)
                except BaseException as exc:  # the awaiting coroutine re-raises it
                    error = exc
            with self._done_lock:
                self._done.append((future, result, error, fast))
                # The list was empty: no wake-up is on its way to the loop yet.
                wake = len(self._done) == 1
            if wake:
                try:
                    loop.call_soon_threadsafe(self._settle)
                except RuntimeError:  # the loop is closed: nobody is waiting any more
                    return

    def _settle(self) -> None:
        """Settle, on the loop, every call the threads have finished since the last wake-up."""
        with self._done_lock:
            done, self._done = self._done, []
        self._unfinished -= len(done)
        for future, result, error, fast in done:
            if self._fast != _NEVER and self._fast < _PROBATION:
                self._fast = self._fast + 1 if fast else 0
            if future.done():  # cancelled meanwhile (a timeout or Ctrl-C)
                continue
            if error is not None:
                future.set_exception(error)
            else:
                future.set_result(result)
