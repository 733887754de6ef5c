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
"""

from __future__ import annotations

import asyncio
import queue
import threading
from collections.abc import Callable
from typing import Any

_Item = tuple[asyncio.Future[Any], Callable[..., Any], tuple[Any, ...]]
_Done = tuple[asyncio.Future[Any], Any, BaseException | None]


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

    async def call(self, fn: Callable[..., Any], *args: Any) -> Any:
        """``fn(*args)`` on one of the threads; its result, or its exception raised here."""
        if self._closed:
            raise RuntimeError("the call pool is closed")
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
            if not (self._closed or future.done()):  # not stopped, not timed out while queued
                try:
                    result = fn(*args)
                except StopIteration as exc:  # cannot be set on a future (it ends generators)
                    error = RuntimeError(f"StopIteration raised: {exc}")
                except GeneratorExit as exc:
                    error = _Carried(exc)
                except BaseException as exc:  # the awaiting coroutine re-raises it
                    error = exc
            with self._done_lock:
                self._done.append((future, result, error))
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
        for future, result, error in done:
            if future.done():  # cancelled meanwhile (a timeout or Ctrl-C)
                continue
            if error is not None:
                future.set_exception(error)
            else:
                future.set_result(result)
