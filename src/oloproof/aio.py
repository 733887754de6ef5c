"""The event loop Oloproof runs its coroutines on: asyncio's, with timers kept to the microsecond,
and SIGTERM handled as Ctrl-C is.

epoll waits in whole milliseconds, rounded up, so on Linux every asyncio timer (a system's
``asyncio.sleep``, a retry backoff, a case's timeout) fires up to a millisecond late, and how
late depends on how the loop's own work happens to fall against millisecond boundaries: a run of
cases that each wait 20 ms came out 2 to 10% slower than the waits alone, varying with the
harness's per-case work. ``PreciseEpollSelector`` waits the whole milliseconds in epoll and the
last fraction in ``select``, which takes microseconds, so timers fire when they are due.

SIGTERM (a CI job cancelled, a container stopped) would otherwise end the process on the spot,
losing the finished cases not yet written; here it cancels the work as Ctrl-C does, so a run
writes what it finished and is marked interrupted, and ``run`` raises ``Terminated``.

Both signals are handled by the loop (never as a ``KeyboardInterrupt`` raised wherever the main
thread happens to be), and noted in ``oloproof.usercode``: while a run executes, a
``KeyboardInterrupt`` that reaches the engine was raised by user code, and the cancellation of
a signal shows as the task being cancelled. A second signal during the shutdown raises
``KeyboardInterrupt`` at once, for a user who will not wait.
"""

from __future__ import annotations

import asyncio
import math
import select
import selectors
import signal
from collections.abc import Coroutine
from typing import Any, TypeVar

from oloproof.errors import Terminated
from oloproof.usercode import note_signal

T = TypeVar("T")

_FD_SETSIZE = 1024  # select() cannot watch descriptors numbered this high
_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class PreciseEpollSelector(selectors.EpollSelector):
    """An epoll selector whose waits end on time rather than up to a millisecond late."""

    def select(self, timeout: float | None = None) -> list[tuple[selectors.SelectorKey, int]]:
        if timeout is None or timeout <= 0:
            return super().select(timeout)
        whole = math.floor(timeout * 1e3) / 1e3
        if whole > 0:
            # Wakes before the timer is due; the loop then asks again for what is left.
            return super().select(whole)
        keys = self.get_map().values()
        if any(key.fd >= _FD_SETSIZE for key in keys):
            return super().select(timeout)
        readers = [key.fd for key in keys if key.events & selectors.EVENT_READ]
        writers = [key.fd for key in keys if key.events & selectors.EVENT_WRITE]
        try:
            select.select(readers, writers, [], timeout)
        except OSError:  # a descriptor closed while registered: let epoll sort it out
            return super().select(timeout)
        return super().select(0)


def _new_loop() -> asyncio.AbstractEventLoop:
    if hasattr(selectors, "EpollSelector"):
        return asyncio.SelectorEventLoop(PreciseEpollSelector())
    return asyncio.new_event_loop()  # kqueue and the others already wait to the microsecond


def run(main: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run(main)`` on a loop with precise timers, stopped by SIGTERM as by Ctrl-C.

    Raises ``KeyboardInterrupt`` after a SIGINT and ``Terminated`` after a SIGTERM, once ``main``
    has finished handling the cancellation.
    """
    caught: list[int] = []
    with asyncio.Runner(loop_factory=_new_loop) as runner:
        try:
            return runner.run(_until_signalled(main, caught))
        except asyncio.CancelledError:
            if not caught:
                raise
            raise (Terminated() if caught[0] == signal.SIGTERM else KeyboardInterrupt()) from None


async def _until_signalled(main: Coroutine[Any, Any, T], caught: list[int]) -> T:
    loop = asyncio.get_running_loop()
    task = asyncio.current_task()

    def on_signal(signum: int) -> None:
        note_signal(signum)
        if caught:  # a second signal: stop waiting for the shutdown
            raise KeyboardInterrupt
        caught.append(signum)
        if task is not None:
            task.cancel()

    previous = signal.getsignal(signal.SIGINT)
    try:
        for signum in _SIGNALS:
            loop.add_signal_handler(signum, on_signal, signum)
    except (NotImplementedError, RuntimeError, ValueError):  # not the main thread, or Windows
        return await main
    try:
        return await main
    finally:
        for signum in _SIGNALS:
            loop.remove_signal_handler(signum)
        signal.signal(signal.SIGINT, previous)
