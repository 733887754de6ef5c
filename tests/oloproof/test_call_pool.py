"""The threads that run synchronous systems: results, errors, timeouts, closing."""

from __future__ import annotations

import asyncio
import threading

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
