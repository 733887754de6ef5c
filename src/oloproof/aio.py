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
``KeyboardInterrupt`` at once (``Terminated`` when a SIGTERM stopped the work), for a user who
will not wait.

Code that blocks the loop (an ``async def`` system calling ``time.sleep`` or a blocking client,
or spinning, or a judgment's regular expression backtracking over a hostile output) would keep
the loop from ever seeing a signal or a timeout. So the loop notes when it last woke from its
wait, and while it is held:

- a SIGINT or SIGTERM that arrives outside Oloproof's own code (and asyncio's) is acted on at
  once where that code is, as the loop would have: the run stops and keeps what it finished;
- once a case (or a judgment) registered by ``Deadline`` is past it, the SIGALRM of the
  process's interval timer, kept armed for the earliest deadline (and armed again when the
  loop finds its alarm lost to a case's code), raises ``Overran`` in that case's code, which
  records the case as timed out; the run goes on. A case whose code swallowed ``Overran``
  still times out;
- the time the loop was held is not counted against the other cases: while it is held, none of
  them can run, be answered or record an answer, and each would otherwise time out where its
  deadline fell in the hold, charged with what another case's code did. So when the timer finds
  the loop held by code computing on the loop's own thread (since the loop woke, that thread
  used the CPU for at least a fiftieth of the time, and no less than the process's other threads
  together), the task running it is noted as holding it, and
  once the hold ends every other case's deadline is moved on by how long the loop was held.
  The holder's own deadline stays where it was: its hold is its own time. A loop whose thread
  used little CPU is not credited: it may have been kept from the GIL by another thread (a
  plain function's C code, computing or blocked in a call that keeps the GIL), whose case
  cannot be told from the others and must not be credited for its own hold. So the cases
  beside code that blocks the loop in a sleep or a socket read are charged as before.

The kernel sends that signal whoever holds the GIL (a thread could not look while a regular
expression holds it), and Python runs the handler between bytecodes, or inside ``re``, which
checks for signals as it matches. C code that holds the GIL and never checks cannot be reached.
The built-in evaluators compute a verdict and write nothing, so their frames may be stopped too.

A loop off the main thread (a Ray replica's) has no signals to keep a timer with, so there
``Deadline.timed`` watches the case's coroutine step by step, a step being its code between
two awaits:

- a step that ends past the case's deadline, having lasted longer than the loop may be held,
  held the loop past it: the case times out as above, whether it then raised, returned or
  awaited. A case that was merely woken late (another case held the loop) takes no long step,
  so it is never counted as holding the loop;
- a step still running that long past the deadline is stopped by a thread of Oloproof's, which
  raises ``Overran`` in the loop's thread (``PyThreadState_SetAsyncExc``), again every quarter
  of a second until the step ends. That reaches Python code only: a blocking call (a
  ``time.sleep``, a socket read) or C code holding the GIL is stopped as it returns, and
  recorded as timed out then. The step takes itself off under a lock the thread sends under,
  and takes back an ``Overran`` sent but not yet raised, so it is only ever raised in the
  case's own code, or in the step's own ending, which ends the step regardless.
"""

from __future__ import annotations

import asyncio
import ctypes
import math
import os
import select
import selectors
import signal
import threading
import time
from collections.abc import Awaitable, Callable, Coroutine, Generator
from contextlib import AbstractAsyncContextManager, nullcontext
from dataclasses import dataclass, field
from types import FrameType
from typing import Any, Final, TypeVar, cast

from oloproof.errors import ConfigError, OloproofError, Terminated
from oloproof.usercode import describe, note_signal

T = TypeVar("T")

_FD_SETSIZE = 1024  # select() cannot watch descriptors numbered this high
_SIGNALS = (signal.SIGINT, signal.SIGTERM)
_HELD_S = 0.25  # the loop counts as held after this long without a wait
# Frames of these files are Oloproof's or the loop's own: a signal is never acted on inside them,
# but for the evaluators', which only compute a verdict.
_OURS = (
    *(
        os.path.join(os.path.dirname(os.path.dirname(__file__)), name) + os.sep
        for name in ("oloproof", "ledger")
    ),
    os.path.dirname(asyncio.__file__) + os.sep,
    selectors.__file__,
)
_EVALUATORS = os.path.join(os.path.dirname(__file__), "evaluators") + os.sep
# The standard library, but not the packages installed under it: its frames act for their caller.
_STDLIB = os.path.dirname(threading.__file__) + os.sep
_INSTALLED = tuple(os.sep + name + os.sep for name in ("site-packages", "dist-packages"))


class Overran(BaseException):
    """Raised in a case's code that held the event loop past the case's deadline (a
    ``BaseException``, as ``CancelledError`` is, so that ``except Exception`` lets it through)."""


class Overdue(TimeoutError):
    """Raised for a synchronous call that Oloproof itself ran on the loop (``CallPool``) and that
    ended past its case's deadline: the case timed out, as it would have on a thread."""


@dataclass
class _Watch:
    """What the signal handlers read of the loop."""

    woke: float = math.inf  # when the loop last came back from its wait; inf while it waits
    deadlines: dict[asyncio.Task[Any], float] | None = None  # None: no timer is kept
    overran: set[asyncio.Task[Any]] = field(default_factory=set)  # stopped past their deadline
    alarm: float = math.inf  # when the interval timer fires; inf: it is not armed
    # The loop the timer is kept for: its cases are found while a call hides it (``CallPool``).
    loop: asyncio.AbstractEventLoop | None = None
    # The deadlines of cases that wait (``Deadline.waits``), and those cancelled at theirs.
    sweeps: dict[asyncio.Task[Any], float] = field(default_factory=dict)
    expired: set[asyncio.Task[Any]] = field(default_factory=set)
    sweep: asyncio.TimerHandle | None = None  # the loop's call of ``_sweep``, at ``sweep_at``
    sweep_at: float = math.inf
    # The CPU time of the loop's thread, and of the whole process, when the loop last woke.
    woke_cpu: tuple[float, float] = (0.0, 0.0)
    # The tasks the timer found holding the loop since it woke (None: a callback, not a task);
    # the others' deadlines are moved on by the hold once it ends (``_credit_holds``).
    holders: set[asyncio.Task[Any] | None] = field(default_factory=set)

    def held(self) -> bool:
        return time.monotonic() - self.woke > _HELD_S

    def rearm(self, now: float) -> None:
        """After an alarm: fire at the earliest deadline to come, or a quarter of a second on
        while one is past (its code may not yet hold the loop, or be out of our frames)."""
        soonest = min(self.deadlines.values(), default=math.inf) if self.deadlines else math.inf
        if soonest == math.inf:
            self.alarm = math.inf  # a one-shot timer that fired is disarmed already
        else:
            _arm(max(soonest, now + _HELD_S))


def _arm(at: float) -> None:
    _watch.alarm = at
    # The kernel never fires a timer early, so the alarm finds ``at`` passed.
    signal.setitimer(signal.ITIMER_REAL, max(at - time.monotonic(), 1e-6))


def _sweep_at(at: float) -> None:
    """Have the loop call ``_sweep`` at ``at`` (its clock is ``time.monotonic``), instead of
    when it was to."""
    if _watch.sweep is not None:
        _watch.sweep.cancel()
    _watch.sweep_at = at
    _watch.sweep = _watch.loop.call_at(at, _sweep) if _watch.loop is not None else None


def _sweep() -> None:
    """Cancel each case waiting past its deadline, as ``asyncio.timeout`` would have, and call
    again at the earliest deadline still to come.

    Where the timer is kept, one call of the loop's keeps every case's deadline: a case that
    ends in time (nearly all) costs an entry in a dict, where a timeout of its own cost a timer
    handle made, scheduled and cancelled (about 6 µs a case).
    """
    _watch.sweep, _watch.sweep_at = None, math.inf
    now = time.monotonic()
    if _watch.holders:  # called after a hold: the cases that waited through it are not due
        _credit_holds(now)
    soonest = math.inf
    for task, due in _watch.sweeps.items():
        if task in _watch.expired:
            continue
        if due <= now:
            _watch.expired.add(task)
            task.cancel()
        elif due < soonest:
            soonest = due
    if soonest != math.inf:
        _sweep_at(soonest)


_watch = _Watch()


def _credit_holds(now: float) -> None:
    """The loop, held by ``_watch.holders`` since it woke, is free again: move every other
    case's deadline on by how long it was held (see the module)."""
    holders, _watch.holders = _watch.holders, set()
    held = now - _watch.woke
    if held <= 0 or _watch.deadlines is None:
        return
    for deadlines in (_watch.deadlines, _watch.sweeps):
        for task in deadlines:
            if task not in holders:
                deadlines[task] += held


class Deadline:
    """``with Deadline(seconds)``: the current task runs a case due within ``seconds`` (see the
    module); ``overran``: its code held the loop past it (and was stopped there, when it could
    be); ``expired``: it waited past it and was cancelled there. The case's coroutine is awaited
    through ``timed``, inside ``waits``."""

    __slots__ = ("_cancelling", "_due", "_held", "_seconds", "_task", "_timeout")

    def __init__(self, seconds: float) -> None:
        self._seconds = seconds
        self._task: asyncio.Task[Any] | None = None
        self._due = math.inf
        self._held = False  # seen by the steps' watch, where no timer is kept
        self._timeout: asyncio.Timeout | None = None  # where no timer is kept (``waits``)
        self._cancelling = 0  # the task's cancellation requests as the deadline began

    def __enter__(self) -> Deadline:
        self._due = time.monotonic() + self._seconds
        deadlines = _watch.deadlines
        if deadlines is not None:  # ``run`` on the main thread keeps the timer
            self._task = asyncio.current_task()
            if self._task is not None:
                due = deadlines[self._task] = self._due
                if due < _watch.alarm:  # mostly not: deadlines come in the order they fall due
                    _arm(due)
        return self

    def __exit__(self, *exc: object) -> None:
        # The timer stays armed: when it fires for a deadline gone, it moves on to the next.
        task, deadlines = self._task, _watch.deadlines
        if task is not None and deadlines is not None:
            deadlines.pop(task, None)
            _watch.overran.discard(task)
            _watch.sweeps.pop(task, None)
            _watch.expired.discard(task)

    @property
    def overran(self) -> bool:
        return self._held or (self._task is not None and self._task in _watch.overran)

    def waits(self) -> AbstractAsyncContextManager[Any]:
        """What the case's awaits run inside: where the timer is kept, nothing (``_sweep``
        cancels a case waiting past its deadline); elsewhere ``asyncio.timeout``."""
        task = self._task
        if task is not None:
            _watch.sweeps[task] = self._due
            if self._due < _watch.sweep_at:  # mostly not, as for the timer
                _sweep_at(self._due)
            self._cancelling = task.cancelling()
            return _IN_SWEEP
        self._timeout = asyncio.timeout(self._seconds)
        return self._timeout

    def expired(self, exc: BaseException | None = None) -> bool:
        """Whether the case, waiting, was cancelled at this deadline, however it then ended
        (raising ``exc``, or returning late having caught the cancellation). The cancellation
        is taken back, as ``asyncio.timeout`` takes back its own; ``False`` when another came
        as well (Ctrl-C): that one is the run's."""
        if self._timeout is not None:
            # It turns its own cancellation into TimeoutError, and leaves one it shares.
            cancelled = isinstance(exc, asyncio.CancelledError)
            return self._timeout.expired() and not cancelled
        task = self._task
        if task is None or task not in _watch.expired:
            return False
        _watch.expired.discard(task)
        return task.uncancel() <= self._cancelling

    def timed(self, work: Coroutine[Any, Any, T]) -> Awaitable[T]:
        """``work``, to be awaited within this deadline: as it is where the timer is kept, and
        otherwise with each of its steps watched (see the module)."""
        if self._task is not None:
            return work
        return _Watched(work, self)


_IN_SWEEP: Final = nullcontext()


class _Watched(Awaitable[T]):
    """A case's coroutine, each of its steps (the code between two of its awaits) timed and
    watched while it holds the loop."""

    __slots__ = ("_deadline", "_work")

    def __init__(self, work: Coroutine[Any, Any, T], deadline: Deadline) -> None:
        self._work = work
        self._deadline = deadline

    def __await__(self) -> Generator[Any, Any, T]:
        work = self._work
        sent: Any = None
        thrown: BaseException | None = None
        while True:
            try:
                if thrown is None:
                    waited = self._step(work.send, sent)
                else:
                    waited = self._step(work.throw, thrown)
            except StopIteration as stop:
                return cast(T, stop.value)
            except Overran:
                work.close()  # it may have been stopped after its step had ended
                raise
            try:
                sent, thrown = (yield waited), None
            except GeneratorExit:
                work.close()
                raise
            except BaseException as exc:  # a cancellation, or what it awaited raised: pass it on
                sent, thrown = None, exc

    def _step(self, action: Callable[[Any], Any], argument: Any) -> Any:
        deadline = self._deadline
        thread = threading.get_ident()
        if _steps.watcher is None:
            _steps.start()
        start = _steps.running[thread] = (deadline, time.monotonic())
        try:
            return action(argument)
        finally:
            # Overran can come anywhere until the step is taken off, here included: the step
            # ends whatever it was doing.
            while True:
                try:
                    _steps.end(thread, start)
                    break
                except Overran:
                    pass
            end = time.monotonic()
            if end > deadline._due and end - start[1] > _HELD_S:
                deadline._held = True


@dataclass
class _Steps:
    """The case steps running on loops that keep no timer, and the thread that stops one that
    holds its loop past its case's deadline."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    running: dict[int, tuple[Deadline, float]] = field(default_factory=dict)  # by thread
    stopped: dict[int, float] = field(default_factory=dict)  # thread: when Overran was sent
    watcher: threading.Thread | None = None

    def end(self, thread: int, step: tuple[Deadline, float]) -> None:
        with self.lock:
            if self.running.get(thread) is step:
                del self.running[thread]
            if self.stopped.pop(thread, None) is not None:
                _send_async(thread, None)  # not yet raised: the step ended first

    def start(self) -> None:
        with self.lock:
            if self.watcher is None:
                self.watcher = threading.Thread(
                    target=self._watch, name="oloproof-steps", daemon=True
                )
                self.watcher.start()

    def _watch(self) -> None:
        while True:
            time.sleep(_HELD_S / 2)
            now = time.monotonic()
            with self.lock:
                for thread, (deadline, start) in list(self.running.items()):
                    if now < deadline._due or now - start <= _HELD_S:
                        continue
                    if now - self.stopped.get(thread, -math.inf) <= _HELD_S:
                        continue  # sent already, and not yet raised
                    deadline._held = True
                    self.stopped[thread] = now
                    _send_async(thread, Overran)


def _send_async(thread: int, exc: type[BaseException] | None) -> None:
    """Raise ``exc`` in ``thread`` as it next runs Python code (``None``: no longer)."""
    ctypes.pythonapi.PyThreadState_SetAsyncExc(
        ctypes.c_ulong(thread), None if exc is None else ctypes.py_object(exc)
    )


_steps = _Steps()


def _ours(frame: FrameType | None) -> bool:
    # A frame of the standard library counts as its caller's: Oloproof's own code waiting in
    # ``threading`` (for a thread it starts, which another thread keeps from the GIL) is not a
    # case's code, and was taken for one that held up the loop; a case's code waiting there is.
    while frame is not None:
        name = frame.f_code.co_filename
        if name.startswith(_OURS):
            return not name.startswith(_EVALUATORS)
        if not name.startswith(_STDLIB) or any(part in name for part in _INSTALLED):
            return False
        frame = frame.f_back
    return True


def _current_task() -> asyncio.Task[Any] | None:
    if _watch.loop is not None:
        return asyncio.current_task(_watch.loop)
    try:
        return asyncio.current_task()
    except RuntimeError:  # no loop running in this thread
        return None


def kept_deadline() -> float | None:
    """The deadline of the case running here, when the timer keeps it (on the run's own loop,
    in the main thread); ``None`` where no timer is kept (a Ray replica's loop)."""
    deadlines = _watch.deadlines
    if deadlines is None or threading.current_thread() is not threading.main_thread():
        return None
    task = _current_task()
    if task is None:
        return None
    if _watch.holders and task not in _watch.holders:  # a hold ended: this case waited in it
        _credit_holds(time.monotonic())
    return deadlines.get(task)


def overdue(due: float) -> bool:
    """Whether code of the running case, run on the loop by Oloproof's own choice, ended past the
    case's deadline ``due`` (or was stopped there by ``Overran``). The case then times out as
    it would have on a thread: it no longer counts as having held the loop
    (``Deadline.overran``), which would blame the case's own code."""
    task = _current_task()
    stopped = task is not None and task in _watch.overran
    if stopped:
        _watch.overran.discard(task)
    return stopped or time.monotonic() >= due


def _cpu_since_woke() -> tuple[float, float]:
    """The CPU time the loop's thread (the caller) used since the loop woke, and that the
    process's other threads used."""
    mine = time.thread_time() - _watch.woke_cpu[0]
    return mine, time.process_time() - _watch.woke_cpu[1] - mine


def _on_alarm(signum: int, frame: FrameType | None) -> None:
    """The interval timer's SIGALRM: stop the current case's code if it holds the loop past its
    deadline, and arm the timer for the next."""
    deadlines = _watch.deadlines
    if deadlines is None:
        return
    now = time.monotonic()
    _watch.rearm(now)
    if not _watch.held():
        return
    task = _current_task()
    mine, others = _cpu_since_woke()
    held = now - _watch.woke
    # Measured: a loop computing on a machine kept busy by three other processes got 14% of
    # the hold, its other threads 0.1%; a thread keeping the GIL in C left the loop's thread
    # 0.1-0.2% (and used more itself). A fiftieth keeps each several times clear of the line.
    if mine >= held / 50 and others <= mine:
        # The loop's thread computed, and no other thread kept it from the GIL: the code
        # running here holds the loop (ours too, or a callback's: task None).
        _watch.holders.add(task)
    if task is None or _ours(frame):
        return
    due = deadlines.get(task)
    if due is None or now < due:
        return
    _watch.overran.add(task)
    raise Overran


class PreciseEpollSelector(selectors.EpollSelector):
    """An epoll selector whose waits end on time rather than up to a millisecond late, and
    that notes when the loop woke (``_Watch.woke``) and re-arms a timer that was lost."""

    def select(self, timeout: float | None = None) -> list[tuple[selectors.SelectorKey, int]]:
        if _watch.holders:
            _credit_holds(time.monotonic())
        _watch.woke = math.inf
        try:
            return self._wait(timeout)
        finally:
            now = _watch.woke = time.monotonic()
            if _watch.deadlines is not None:
                _watch.woke_cpu = (time.thread_time(), time.process_time())
            if now - _watch.alarm > _HELD_S:
                # Its alarm never came: code of a case disarmed the timer or took SIGALRM over
                # for a while (a library's own signal-based timeout).
                _watch.rearm(now)

    def _wait(self, timeout: float | None) -> list[tuple[selectors.SelectorKey, int]]:
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


class _Loop(asyncio.SelectorEventLoop):
    """The run's loop, which a case cannot stop.

    asyncio stops a loop from a callback when the work it was running is done
    (``run_until_complete``); a stop asked for from inside a task is a case's code (an async
    system that ran its own loop once, ``get_running_loop().stop()``), and would end the run
    part way with ``Event loop stopped before Future completed``.
    """

    def stop(self) -> None:
        if asyncio.current_task(self) is None:
            super().stop()


def _new_loop() -> asyncio.AbstractEventLoop:
    if hasattr(selectors, "EpollSelector"):
        return _Loop(PreciseEpollSelector())
    return _Loop()  # kqueue and the others already wait to the microsecond


def refuse_running_loop(call: str, instead: str) -> None:
    """Raise a ``ConfigError`` saying ``instead`` when this thread runs an event loop already (a
    notebook's cell, an async program): the loop ``run`` starts cannot run inside it, and
    asyncio would say only that, once the caller's coroutine was made and never awaited."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return
    raise ConfigError(
        f"{call} runs an event loop of its own, and this thread is running one already (a "
        f"notebook, an async program): {instead}"
    )


def run(main: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run(main)`` on a loop with precise timers, stopped by SIGTERM as by Ctrl-C.

    Raises ``KeyboardInterrupt`` after a SIGINT and ``Terminated`` after a SIGTERM, once ``main``
    has finished handling the cancellation (or has returned, the signal having come once it had
    no wait left); an ``OloproofError`` for a ``SystemExit`` the code it runs raised outside any
    case.
    """
    caught: list[int] = []
    with asyncio.Runner(loop_factory=_new_loop) as runner:
        try:
            done = runner.run(_until_signalled(main, caught))
        except asyncio.CancelledError:
            if caught:
                raise _interruption(caught[0]) from None
            # No signal came: the code the run runs cancelled tasks it did not start, the
            # run's own among them. What finished was recorded as on an interruption.
            raise OloproofError(
                "the work was cancelled by the code it runs, which cancelled asyncio tasks it "
                "had not started; what had finished is recorded (a run is left interrupted: "
                "oloproof run --resume RUN_ID finishes it)"
            ) from None
        except SystemExit as exc:
            # Oloproof's own work raises none, and a case's code that exits errors only its
            # case: this is the code the work runs ending it from outside any case (a signal
            # handler it set, a callback it scheduled). Taken as the end it asks for, the
            # command would exit with the status that code chose: 0 for a run whose gate failed.
            raise OloproofError(
                f"the code the work runs ended it outside any case: {describe(exc)} (in a "
                "signal handler it set, or a callback it scheduled); what had finished is "
                "recorded (a run is left interrupted: oloproof run --resume RUN_ID finishes it)"
            ) from None
        if caught:
            # A signal ``main`` had no wait left to be cancelled at (it came while a run wrote
            # its decision): what ``main`` did is kept, and the command still ends interrupted,
            # not with what ``main`` returned (a passing gate's exit 0).
            raise _interruption(caught[0])
        return done


def _interruption(signum: int) -> KeyboardInterrupt:
    """What a signal that stopped the work raises: ``Terminated`` for SIGTERM."""
    return Terminated() if signum == signal.SIGTERM else KeyboardInterrupt()


async def _until_signalled(main: Coroutine[Any, Any, T], caught: list[int]) -> T:
    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    direct: list[int] = []  # signals acted on where the held loop was, not yet seen by it
    arrived: list[int] = []  # every signal that reached ``on_held``, acted on or not

    def act(signum: int) -> None:
        note_signal(signum)
        if caught:  # a second signal: stop waiting for the shutdown
            raise _interruption(caught[0])  # exit 143 still when SIGTERM stopped the work
        caught.append(signum)
        if task is not None:
            task.cancel()

    def on_signal(signum: int) -> None:
        if signum in direct:  # the loop's own delivery of a signal already acted on
            direct.remove(signum)
            return
        act(signum)

    def on_held(signum: int, frame: FrameType | None) -> None:
        # Python calls this between bytecodes; the loop gets the signal through its wake-up
        # descriptor as well, and acts on it itself unless something holds it.
        arrived.append(signum)
        if not _watch.held() or _ours(frame):
            return
        direct.append(signum)
        act(signum)
        current = _current_task()
        if current is None:
            raise _interruption(signum)
        current.cancel()  # what is unwound here is an interruption, not the case's own error
        raise asyncio.CancelledError

    # Each given back when the work ends: removing the loop's handler sets the default.
    previous = {signum: signal.getsignal(signum) for signum in _SIGNALS}
    try:
        for signum in _SIGNALS:
            loop.add_signal_handler(signum, on_signal, signum)
    except (NotImplementedError, RuntimeError, ValueError):  # not the main thread, or Windows
        return await main
    for signum in _SIGNALS:
        signal.signal(signum, on_held)
    previous_alarm = signal.signal(signal.SIGALRM, _on_alarm)
    _watch.deadlines, _watch.loop = {}, loop
    try:
        return await main
    finally:
        _watch.deadlines = None  # first: an alarm handled from here on arms nothing
        _watch.loop = None
        if _watch.sweep is not None:
            _watch.sweep.cancel()
        _watch.sweep, _watch.sweep_at = None, math.inf
        _watch.sweeps.clear()
        _watch.expired.clear()
        if _watch.alarm != math.inf:
            signal.setitimer(signal.ITIMER_REAL, 0)
            _watch.alarm = math.inf
        _watch.overran.clear()
        _watch.holders.clear()
        signal.signal(signal.SIGALRM, previous_alarm or signal.SIG_DFL)
        for signum in _SIGNALS:
            loop.remove_signal_handler(signum)
            signal.signal(signum, previous[signum] or signal.SIG_DFL)
        if arrived and not caught:
            # Left to the loop, which never ran again: ``main`` ended without a wait after it
            # came (a run writing its end and decision). Taken now, so ``run`` raises it.
            note_signal(arrived[0])
            caught.append(arrived[0])
