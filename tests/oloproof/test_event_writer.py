"""The run's writer: a flush asked for on the run's way is written on a thread of its own while
the run goes on when the run mostly waits (and at once when it is busy), what it holds stays
visible to the run until it is written, a write that fails stops the run without storing an
event apart from what it refers to, and what waits behind a slow write stays bounded. A real
ledger in a temp folder; runs through the library.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
import yaml

from ledger import Event, Ledger, LedgerError, Prepared
from oloproof import events as ev
from oloproof import execute
from oloproof.execute import EventWriter, writes_behind
from oloproof.identities import Made, RunMemory
from oloproof.runner import execute_run, plan_run
from oloproof.store import open_project_ledger
from oloproof.stored_form import make_stored

# Long enough that a test waiting this long has failed, not raced.
_WAIT_S = 30.0


@pytest.fixture
def ledger(tmp_path: Path) -> Iterator[Ledger]:
    with open_project_ledger(tmp_path) as opened:
        yield opened


@pytest.fixture
def behind(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every flush on the run's way goes on the writer's thread, however busy the test's own
    thread was (``writes_behind`` has tests of its own)."""
    monkeypatch.setattr(execute, "writes_behind", lambda cpu_s, wall_s: True)


class HeldWrites:
    """``Ledger.put_all`` that waits for ``release`` before writing, and records from which
    thread each call came."""

    def __init__(self, ledger: Ledger, monkeypatch: pytest.MonkeyPatch) -> None:
        self.release = threading.Event()
        self.threads: list[str] = []
        original = ledger.put_all

        def held(items: Sequence[Prepared]) -> int:
            self.threads.append(threading.current_thread().name)
            assert self.release.wait(_WAIT_S), "never released"
            return original(items)

        monkeypatch.setattr(ledger, "put_all", held)


@pytest.fixture
def loop() -> Iterator[asyncio.AbstractEventLoop]:
    made = asyncio.new_event_loop()
    yield made
    made.close()


def note(i: int) -> Event:
    return Event("note", 1, {"i": i})


def finished_execution(loop: asyncio.AbstractEventLoop, memory: RunMemory, identity: str) -> None:
    future: asyncio.Future[Made] = loop.create_future()
    future.set_result(Made("sha256:" + "0" * 64, None, "miss", True))
    memory.executions[identity] = future


@pytest.mark.usefixtures("behind")
def test_a_flush_on_the_way_is_written_while_the_run_goes_on_and_stays_visible_until_written(
    ledger: Ledger, monkeypatch: pytest.MonkeyPatch, loop: asyncio.AbstractEventLoop
) -> None:
    monkeypatch.setattr(execute, "_FLUSH_EVENTS", 2)
    writes = HeldWrites(ledger, monkeypatch)
    writer, memory = EventWriter(ledger), RunMemory()
    stage = writer.add_stored(
        make_stored(ev.STAGE, {"stage": "generate", "identity": "s1", "output": "x"})
    )
    first = writer.add(note(1))
    finished_execution(loop, memory, "e1")
    writer.maybe_flush(memory)  # returns while the write waits: it runs on its own thread
    assert writes.threads == ["oloproof-writer"]
    assert not ledger.has(first)
    # What is being written is still the run's: its stage and its finished execution.
    assert writer.pending_stage("s1") == {
        "stage": "generate",
        "identity": "s1",
        "output": "x",
        "address": stage,
    }
    assert "e1" in memory.executions
    second = writer.add(note(2))
    finished_execution(
        loop, memory, "e2"
    )  # finished after the write began: not among what it wrote
    writer.maybe_flush(memory)  # short of a flush, and the first write has not finished
    assert writes.threads == ["oloproof-writer"]
    writes.release.set()
    writer.flush(memory)  # waits for the first, then writes the rest itself
    assert writes.threads == ["oloproof-writer", "MainThread"]
    assert ledger.has(first) and ledger.has(second)
    assert "e1" not in memory.executions
    assert "e2" in memory.executions  # its events were written by the last flush, not the first
    assert writer.pending_stage("s1") is None


@pytest.mark.usefixtures("behind")
def test_what_waits_behind_a_write_that_does_not_finish_is_one_flush_at_most(
    ledger: Ledger, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A system that never lets the event loop wait keeps the writing thread from the GIL: once
    # the next flush is ready, the run waits for the write instead of gathering more.
    monkeypatch.setattr(execute, "_FLUSH_EVENTS", 2)
    writes = HeldWrites(ledger, monkeypatch)
    writer, memory = EventWriter(ledger), RunMemory()
    writer.add(note(1))
    writer.add(note(2))
    writer.maybe_flush(memory)
    writer.add(note(3))
    writer.maybe_flush(memory)  # one waiting, short of a flush: no wait
    assert not writes.release.is_set()
    writer.add(note(4))
    releaser = threading.Timer(0.2, writes.release.set)
    releaser.start()
    writer.maybe_flush(memory)  # a flush's worth: waits for the first write, then starts the next
    assert writes.release.is_set()
    releaser.join()
    writer.flush(memory)
    assert all(ledger.has(ledger.prepare(note(i)).address) for i in range(1, 5))
    assert writes.threads == ["oloproof-writer", "oloproof-writer"]


def test_a_flush_goes_on_a_thread_of_its_own_only_when_the_run_mostly_waited() -> None:
    assert writes_behind(cpu_s=0.1, wall_s=1.0)  # a run waiting on its model server
    assert writes_behind(cpu_s=0.7, wall_s=1.0)  # a fast one, sleeping 20 ms a case
    assert not writes_behind(cpu_s=0.9, wall_s=1.0)  # a trivial system
    assert not writes_behind(cpu_s=1.0, wall_s=1.0)  # a cached re-run, which never waits


def test_a_writer_that_waited_writes_on_its_way_and_a_busy_one_at_once(
    ledger: Ledger, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(execute, "_FLUSH_EVENTS", 1)
    writes = HeldWrites(ledger, monkeypatch)
    writes.release.set()
    writer, memory = EventWriter(ledger), RunMemory()
    writer.add(note(1))
    time.sleep(0.05)  # the run's thread waits, using next to no CPU
    writer.maybe_flush(memory)
    writer.add(note(2))
    monkeypatch.setattr(execute, "writes_behind", lambda cpu_s, wall_s: False)  # busy
    writer.maybe_flush(memory)  # waits for the first write, then writes the second itself
    assert writes.threads == ["oloproof-writer", "MainThread"]
    assert ledger.has(ledger.prepare(note(2)).address)


def test_a_run_that_waits_writes_a_few_hundred_events_on_its_way_and_a_busy_one_a_full_flush(
    ledger: Ledger, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(execute, "_EAGER_EVENTS", 3)
    monkeypatch.setattr(execute, "_EAGER_SECONDS", 0.05)
    writes = HeldWrites(ledger, monkeypatch)
    writes.release.set()
    writer, memory = EventWriter(ledger), RunMemory()
    writer.add(note(1))
    writer.add(note(2))
    time.sleep(0.1)  # the run's thread waits, using next to no CPU
    writer.maybe_flush(memory)  # long enough, but too few events to write early
    assert writes.threads == []
    writer.add(note(3))
    writer.maybe_flush(memory)  # enough of both: written on the way, far short of a flush
    writer.flush(memory)
    assert writes.threads == ["oloproof-writer"]
    assert all(ledger.has(ledger.prepare(note(i)).address) for i in range(1, 4))
    monkeypatch.setattr(execute, "writes_behind", lambda cpu_s, wall_s: False)  # busy
    for i in range(4, 8):
        writer.add(note(i))
    time.sleep(0.1)
    writer.maybe_flush(memory)  # a busy run waits for a full flush: only the end writes these
    assert writes.threads == ["oloproof-writer"]
    assert not ledger.has(ledger.prepare(note(4)).address)
    writer.flush(memory)
    assert writes.threads == ["oloproof-writer", "MainThread"]
    assert ledger.has(ledger.prepare(note(7)).address)


class Clock:
    """The process's CPU time as a test sets it (``time.process_time``)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.cpu = 0.0
        monkeypatch.setattr(time, "process_time", lambda: self.cpu)


def test_a_run_busy_on_other_threads_writes_in_place_and_the_writers_own_time_is_not_the_runs(
    ledger: Ledger, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A sync system's cases use the CPU on threads of their own while the event loop's thread
    # waits for them: the run is busy, and a writer thread beside it would slow it.
    monkeypatch.setattr(execute, "_EAGER_EVENTS", 1)
    monkeypatch.setattr(execute, "_EAGER_SECONDS", 0.05)
    clock = Clock(monkeypatch)
    shares: list[float] = []
    decide = execute.writes_behind

    def recorded(cpu_s: float, wall_s: float) -> bool:
        shares.append(cpu_s)
        return decide(cpu_s, wall_s)

    monkeypatch.setattr(execute, "writes_behind", recorded)
    writes = HeldWrites(ledger, monkeypatch)
    writes.release.set()
    writer, memory = EventWriter(ledger), RunMemory()
    writer.add(note(1))
    start = time.monotonic()
    time.sleep(0.1)
    clock.cpu = time.monotonic() - start  # as much CPU as time: busy
    writer.maybe_flush(memory)  # busy and short of a flush: nothing written yet
    assert writes.threads == []
    clock.cpu = 0.11  # then the run waits: written on the way
    time.sleep(0.1)
    writer.maybe_flush(memory)
    assert writes.threads == ["oloproof-writer"]
    behind = writer._behind
    assert behind is not None
    behind.thread.join(_WAIT_S)
    writer.add(note(2))
    time.sleep(0.1)
    clock.cpu += behind.cpu + 0.01  # the write's own CPU, and 10 ms of the run's
    writer.maybe_flush(memory)
    assert shares[-1] == pytest.approx(0.01)
    writer.flush(memory)
    assert ledger.has(ledger.prepare(note(2)).address)


APP = """
import asyncio

from oloproof import system


@system(name="slow", version="1")
async def slow(case):
    await asyncio.sleep(0.002)
    return {"answer": case["q"].upper()}
"""


def project(root: Path, n: int) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "slow_app.py").write_text(APP)
    lines = [
        {"id": f"c{i}", "input": {"q": f"q{i % 2}"}, "expected": {"answer": f"Q{i % 2}"}}
        for i in range(n)
    ]
    (root / "cases.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    config = {
        "system": {"name": "slow", "version": "1", "callable": "slow_app:slow"},
        "dataset": "cases.jsonl",
        "evaluators": [{"type": "contains", "criterion": "answer_correct"}],
        "concurrency": 4,
    }
    (root / "oloproof.yaml").write_text(yaml.safe_dump(config))
    return root


@pytest.mark.usefixtures("behind")
def test_a_write_that_fails_on_the_way_stops_the_run_with_every_stored_event_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The first write on the way fails (as a full disk makes it fail); the run stops with that
    # error, and what it stores on its way out stores the failed write's events again with the
    # events that refer to them.
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(execute, "_FLUSH_EVENTS", 8)
    root = project(tmp_path, 60)
    plan = plan_run(root / "oloproof.yaml")
    failed: list[str] = []
    with open_project_ledger(root) as ledger:
        original = ledger.put_all

        def failing_once(items: Sequence[Prepared]) -> int:
            if not failed:
                failed.append(threading.current_thread().name)
                raise LedgerError("cannot write the ledger: no space left on device")
            return original(items)

        monkeypatch.setattr(ledger, "put_all", failing_once)
        with pytest.raises(LedgerError, match="no space left on device"):
            asyncio.run(execute_run(ledger, plan))
        assert failed == ["oloproof-writer"]
        report = ledger.verify()
        assert report.ok, report.problems
        results = [e for _, e in ledger.events(ev.CASE_RESULT)]
        assert results  # the cases finished before the failure are stored, whole
        for event in results:
            assert all(ledger.has(ref) for ref in event.refs)
