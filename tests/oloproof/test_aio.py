"""The run's event loop: timers never fire early, I/O is seen, high descriptors still work."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import resource
import selectors
import signal
import socket
import time
from types import FrameType

import pytest

from oloproof import aio
from oloproof.errors import Terminated


def test_sleeps_last_at_least_what_was_asked() -> None:
    async def sleeps() -> list[tuple[float, float]]:
        measured = []
        for wanted in (0.0003, 0.0012, 0.0049, 0.0101):
            start = time.monotonic()
            await asyncio.sleep(wanted)
            measured.append((wanted, time.monotonic() - start))
        return measured

    for wanted, took in aio.run(sleeps()):
        assert took >= wanted


def test_a_wait_under_a_millisecond_still_sees_a_ready_socket() -> None:
    selector = aio.PreciseEpollSelector()
    left, right = socket.socketpair()
    try:
        selector.register(left, selectors.EVENT_READ, "left")
        assert selector.select(0.0004) == []
        right.send(b"x")
        ready = selector.select(0.0004)
        assert [(key.data, events) for key, events in ready] == [("left", selectors.EVENT_READ)]
    finally:
        selector.close()
        left.close()
        right.close()


def test_a_descriptor_past_select_s_limit_falls_back_to_epoll() -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    high = 1500
    if soft <= high:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 4096), hard))
    selector = aio.PreciseEpollSelector()
    left, right = socket.socketpair()
    fd = os.dup2(left.fileno(), high)
    try:
        selector.register(fd, selectors.EVENT_READ, "high")
        right.send(b"x")
        ready = selector.select(0.0004)
        assert [(key.data, events) for key, events in ready] == [("high", selectors.EVENT_READ)]
    finally:
        selector.close()
        os.close(fd)
        left.close()
        right.close()
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def test_run_returns_the_result_and_uses_the_precise_selector() -> None:
    async def which() -> type:
        loop = asyncio.get_running_loop()
        return type(loop._selector)  # type: ignore[attr-defined]  # the loop's own selector

    assert aio.run(which()) is aio.PreciseEpollSelector


def test_sigterm_cancels_the_work_like_ctrl_c_and_raises_terminated() -> None:
    cleaned_up: list[bool] = []

    async def work() -> None:
        asyncio.get_running_loop().call_later(0.05, os.kill, os.getpid(), signal.SIGTERM)
        try:
            await asyncio.sleep(30)
        finally:
            cleaned_up.append(True)  # the work's own finally blocks run, as on Ctrl-C

    before = signal.getsignal(signal.SIGTERM)
    with pytest.raises(Terminated):
        aio.run(work())
    assert cleaned_up == [True]
    assert issubclass(Terminated, KeyboardInterrupt)
    assert signal.getsignal(signal.SIGTERM) == before  # the handler is gone with the loop


def _held(
    monkeypatch: pytest.MonkeyPatch,
    code: str,
    filename: str,
    seconds: float = 0.05,
) -> tuple[bool, bool, float, int]:
    """Run ``code`` (it blocks the loop) in a case registered as due within ``seconds``, its
    frame named ``filename``: (whether Overran reached it, Deadline.overran, seconds taken, how
    many alarms came)."""
    compiled = compile(code, filename, "exec")
    alarms = []
    handler = aio._on_alarm

    def counted(signum: int, frame: FrameType | None) -> None:
        alarms.append(signum)
        handler(signum, frame)

    monkeypatch.setattr(aio, "_on_alarm", counted)

    async def case() -> tuple[bool, bool, float]:
        start = time.monotonic()
        stopped = False
        with aio.Deadline(seconds) as due:
            try:
                exec(compiled, {"time": time, "re": re})
            except aio.Overran:
                stopped = True
            return stopped, due.overran, time.monotonic() - start

    return (*aio.run(case()), len(alarms))


def test_code_that_holds_the_loop_past_its_deadline_is_stopped_where_it_is(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    stopped, overran, took, alarms = _held(monkeypatch, "time.sleep(5)", __file__)
    assert stopped and overran and alarms >= 1
    assert took < 2  # the timer looks again every quarter of a second while one is overdue


def test_oloproof_s_own_code_is_never_stopped(monkeypatch: pytest.MonkeyPatch) -> None:
    # A frame of Oloproof's own package past a case's deadline: the alarms come (the loop is
    # held and the case overdue), and the handler lets the code finish.
    ours = os.path.join(os.path.dirname(aio.__file__), "not_a_module.py")
    stopped, overran, took, alarms = _held(monkeypatch, "time.sleep(1.5)", ours)
    assert not stopped and not overran
    assert took >= 1.5 and alarms >= 1


EVALUATOR = os.path.join(os.path.dirname(aio.__file__), "evaluators", "not_a_module.py")


def test_a_match_that_holds_the_gil_is_stopped_too(monkeypatch: pytest.MonkeyPatch) -> None:
    # ``re`` holds the GIL as it backtracks (some 2**40 ways here), so no thread could look;
    # the interval timer's signal needs no GIL, and ``re`` checks for signals as it matches.
    backtrack = "re.search(r'^(a+)+$', 'a' * 40 + '!')"
    stopped, overran, took, alarms = _held(monkeypatch, backtrack, EVALUATOR, 0.5)
    assert stopped and overran and alarms >= 1
    assert took < 2


def test_an_evaluator_s_frame_is_stopped_though_it_is_oloproof_s(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    stopped, overran, took, _ = _held(monkeypatch, "time.sleep(5)", EVALUATOR)
    assert stopped and overran and took < 2


def test_the_timer_and_its_signal_go_with_the_loop() -> None:
    def mine(signum: int, frame: object) -> None:
        raise AssertionError("not expected")

    async def cases() -> None:
        with aio.Deadline(3600):  # arms the timer for an hour from now
            assert signal.getitimer(signal.ITIMER_REAL)[0] > 3000

    before = signal.signal(signal.SIGALRM, mine)
    try:
        aio.run(cases())
        assert signal.getsignal(signal.SIGALRM) is mine
        assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
        with aio.Deadline(1) as due:  # outside a run nothing is registered or armed
            assert not due.overran
            assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    finally:
        signal.signal(signal.SIGALRM, before)


def test_a_timer_that_code_disarmed_is_armed_again(monkeypatch: pytest.MonkeyPatch) -> None:
    # A case's code cancels the process's timer (as a library's own alarm-based timeout would);
    # the loop finds the alarm overdue as it turns, and a later case's blocking code is stopped.
    async def cases() -> tuple[bool, float]:
        with aio.Deadline(0.05):
            signal.setitimer(signal.ITIMER_REAL, 0)
        await asyncio.sleep(0.5)
        start = time.monotonic()
        with aio.Deadline(0.05) as due:
            with contextlib.suppress(aio.Overran):
                time.sleep(5)
            return due.overran, time.monotonic() - start

    overran, took = aio.run(cases())
    assert overran and took < 2


def test_the_timer_moves_on_to_the_next_deadline(monkeypatch: pytest.MonkeyPatch) -> None:
    # Armed for the first case's deadline; when it fires, that case is gone, and the alarm
    # re-arms the timer for the case still running. Nothing is stopped: no loop is held.
    alarms: list[float] = []
    entered: list[float] = []
    handler = aio._on_alarm

    def counted(signum: int, frame: FrameType | None) -> None:
        alarms.append(time.monotonic())
        handler(signum, frame)

    monkeypatch.setattr(aio, "_on_alarm", counted)

    async def case(seconds: float, lasts: float) -> bool:
        entered.append(time.monotonic())
        with aio.Deadline(seconds) as due:
            await asyncio.sleep(lasts)
            return due.overran

    async def cases() -> list[bool]:
        return await asyncio.gather(case(0.1, 0.05), case(0.4, 1.0))

    assert aio.run(cases()) == [False, False]
    assert len(alarms) >= 2
    assert alarms[0] - entered[0] >= 0.1  # never before a deadline
    assert alarms[1] - entered[1] >= 0.4
