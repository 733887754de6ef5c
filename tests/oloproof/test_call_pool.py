"""The threads that run synchronous systems: results, errors, timeouts, closing."""

from __future__ import annotations

import asyncio
import random
import threading
import time
from typing import Any

import pytest

from oloproof.systems.threads import CallPool


def test_results_and_errors_come_back_to_the_awaiting_coroutine() -> None:
    def stop() -> None:
        raise StopIteration("done early")

    def boom() -> None:
        raise ValueError("bad input")

    async def main() -> None:
        pool = CallPool("test")
        try:
            callers = {await pool.call(threading.current_thread) for _ in range(3)}
            assert threading.main_thread() not in callers
            assert all(t.daemon and t.name.startswith("test-") for t in callers)
            results = await asyncio.gather(*(pool.call(pow, i, 2) for i in range(20)))
            assert results == [i * i for i in range(20)]
            with pytest.raises(ValueError, match="bad input"):
                await pool.call(boom)
            with pytest.raises(RuntimeError, match="StopIteration raised: done early"):
                await pool.call(stop)
        finally:
            pool.close()

    asyncio.run(main())


def test_a_call_left_running_by_a_timeout_does_not_hold_up_the_next() -> None:
    release = threading.Event()

    async def main() -> None:
        pool = CallPool("test")
        try:
            with pytest.raises(TimeoutError):
                async with asyncio.timeout(0.05):
                    await pool.call(release.wait)
            # The first thread is still blocked in release.wait(): the next call gets another.
            assert await asyncio.wait_for(pool.call(lambda: "next"), timeout=5) == "next"
        finally:
            release.set()
            pool.close()

    asyncio.run(main())


def test_a_closed_pool_takes_no_more_calls_and_its_threads_end() -> None:
    async def main() -> list[threading.Thread]:
        pool = CallPool("closing")
        await asyncio.gather(*(pool.call(threading.Event().wait, 0.01) for _ in range(4)))
        threads = [t for t in threading.enumerate() if t.name.startswith("closing-")]
        assert threads
        pool.close()
        with pytest.raises(RuntimeError, match="closed"):
            await pool.call(print)
        return threads

    for thread in asyncio.run(main()):
        thread.join(timeout=5)
        assert not thread.is_alive()


def test_calls_that_finish_while_the_loop_is_busy_share_one_wake_up() -> None:
    calls = 16
    returned = threading.Semaphore(0)

    def work(i: int) -> int:
        returned.release()
        return i * 3

    async def main() -> tuple[list[int], int]:
        loop = asyncio.get_running_loop()
        wakes = 0
        threadsafe = loop.call_soon_threadsafe

        def counted(*args: Any) -> Any:
            nonlocal wakes
            wakes += 1
            return threadsafe(*args)

        loop.call_soon_threadsafe = counted  # type: ignore[method-assign]
        pool = CallPool("busy")
        try:
            tasks = [asyncio.ensure_future(pool.call(work, i)) for i in range(calls)]
            await asyncio.sleep(0)  # every task submits its call
            # Hold the loop thread until every call has returned on its thread, and a little
            # longer so that each has handed back its result.
            for _ in range(calls):
                assert returned.acquire(timeout=30)
            time.sleep(0.2)
            results = await asyncio.wait_for(asyncio.gather(*tasks), timeout=30)
        finally:
            pool.close()
        return results, wakes

    results, wakes = asyncio.run(main())
    assert results == [i * 3 for i in range(calls)]
    assert wakes < calls / 2  # one thread's wake-up settles the others' calls (one, usually)


def test_no_call_is_left_unsettled_when_threads_finish_in_any_order() -> None:
    rng = random.Random(7)
    pauses = [rng.random() / 5000 for _ in range(3000)]

    def work(i: int) -> int:
        time.sleep(pauses[i])
        return i

    async def main() -> list[int]:
        pool = CallPool("order")
        try:
            calls = [pool.call(work, i) for i in range(len(pauses))]
            # A lost wake-up would leave a call waiting for ever: fail instead of hanging.
            return await asyncio.wait_for(asyncio.gather(*calls), timeout=120)
        finally:
            pool.close()

    assert asyncio.run(main()) == list(range(len(pauses)))
