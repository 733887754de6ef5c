"""Records a system makes after its case returned, through the real CLI.

The probe: an async system that hands ``current_case()`` to a task it starts and does not
await, the task recording the case's retrieval a moment later. The system returned first; the
recorder's artifacts were read and stored; what the task recorded went nowhere. Of 4 cases 3
read ``no_retrieval_recorded``: ``mrr_at_5`` '1 / 1 observed · 0 missing · 3 excluded', gate
PASS, exit 0, ``verify`` ok, with no word. (The recorder's own refusal of a record through
another case's recorder did not apply: the task sees its own case's.)

Now a case's recorder is closed when its system returns. A record through it raises in the
task (or thread) and is noted: the run stops at its next case, or before it ends, with one line
naming the case, exit 2, the run stopped with no gate. Before it ends a run waits (up to the
case timeout) for the tasks its cases started; one still running then stops it too, since what
it would record cannot count.

Then: a call handed to the loop's executor (``run_in_executor``, not awaited) recorded once the
run had decided (as the loop closed, waiting for its executor): gate PASS, exit 0, the late
record's error printed only as a future's exception nobody retrieved. The run now waits for
those calls too.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from tests.support import oloproof, write_project

CONFIG = """\
system: {{name: ranker, version: "1", callable: app:run}}
dataset: cases.jsonl
policy: policy.yaml
concurrency: {concurrency}
timeout_s: 2
evaluators:
  - {{type: mrr, k: 5}}
"""

POLICY = "version: 1\nrules:\n  - {id: mrr-floor, metric: mrr_at_5, min: 0.01}\n"

# c0 records in its call; every other case from a task it leaves running (after ``DELAY``),
# each case itself taking ``TAKES`` seconds, except case ``QUICK``, which returns at once.
TASK_APP = """
import asyncio

from oloproof import Passage, Retrieval, current_case, system

DELAY = {delay}
TAKES = {takes}
QUICK = {quick!r}


def retrieval(case):
    return Retrieval(query=case["q"], depth=2, candidates=(Passage(doc_id="d1"),))


async def later(recorder, case):
    await asyncio.sleep(DELAY)
    recorder.retrieval(retrieval(case))


@system(name="ranker", version="1", records=("retrieval/v1",))
async def run(case):
    if case["q"] == "q0":
        current_case().retrieval(retrieval(case))
    else:
        asyncio.create_task(later(current_case(), case))
    await asyncio.sleep(0 if case["q"] == QUICK else TAKES)
    return {{"answer": "yes"}}
"""

# A sync system whose thread records for it; c0 returns without waiting for it, every other
# case long after it recorded.
THREAD_APP = """
import threading
import time

from oloproof import Passage, Retrieval, current_case, system


def later(recorder, case):
    time.sleep(0.05)
    recorder.retrieval(Retrieval(query=case["q"], depth=2, candidates=(Passage(doc_id="d1"),)))


@system(name="ranker", version="1", records=("retrieval/v1",))
def run(case):
    threading.Thread(target=later, args=(current_case(), case)).start()
    time.sleep(0 if case["q"] == "q0" else 0.2)
    return {"answer": "yes"}
"""

LATE = (
    ": the system recorded a retrieval/v1 artifact after the case returned, too late to count "
    "for it: from a task or thread the case started and did not wait for (wait for it before "
    "returning), or through the case's recorder kept for a later case (call current_case() in "
    "each case)"
)


def _project(tmp_path: Path, app: str, concurrency: int = 1) -> Path:
    cases = [
        {"id": f"c{i}", "input": {"q": f"q{i}"}, "expected": {"relevant": [{"doc_id": "d1"}]}}
        for i in range(4)
    ]
    return write_project(
        tmp_path / "p",
        app=app,
        config=CONFIG.format(concurrency=concurrency),
        policy=POLICY,
        cases=cases,
    )


def _stopped(root: Path, ending: str, *, also: str | None = None) -> str:
    """The line the run stopped with (it ends with ``ending``), having checked that it stopped
    with no gate. ``also``: Python printed the error a thread or an executor's call raised too,
    under that line (a task's is not printed: the run says it); else the one line is all."""
    result = oloproof("run", cwd=root)
    assert result.code == 2, result.out + result.err
    assert "Gate:" not in result.out, result.out
    lines = result.err.strip().splitlines()
    said = [line for line in lines if line.startswith("error:")]
    assert len(said) == 1, result.err
    if also is None:
        assert lines == said, result.err
    else:
        assert also in lines, result.err
    assert said[0].startswith("error: case 'c"), said[0]
    assert said[0].endswith(ending), said[0]
    runs = oloproof("runs", cwd=root)
    assert " STOPPED " in runs.out, runs.out
    return said[0]


@pytest.mark.parametrize("concurrency", [1, 3])
def test_a_task_recording_after_every_case_returned_stops_the_run(
    tmp_path: Path, concurrency: int
) -> None:
    # Every case returns before any task records: the run notices before it ends.
    root = _project(tmp_path, TASK_APP.format(delay=0.05, takes=0, quick=""), concurrency)
    _stopped(root, LATE)


def test_a_task_recording_while_later_cases_run_stops_the_run_at_the_next(
    tmp_path: Path,
) -> None:
    # c1 returns at once, and its task records while c2 runs: the run stops before c3.
    root = _project(tmp_path, TASK_APP.format(delay=0.05, takes=0.2, quick="q1"))
    said = _stopped(root, LATE)
    assert said.startswith("error: case 'c1'"), said


def test_a_thread_recording_after_its_case_returned_stops_the_run(tmp_path: Path) -> None:
    said = _stopped(
        _project(tmp_path, THREAD_APP), LATE, also="Exception in thread Thread-1 (later):"
    )
    assert said.startswith("error: case 'c0'"), said


def test_an_executor_call_recording_after_every_case_returned_stops_the_run(
    tmp_path: Path,
) -> None:
    # Handed to the loop's executor and not awaited: it would record as the loop closed, once
    # the run had decided.
    app = TASK_APP.format(delay=0.05, takes=0, quick="").replace(
        "asyncio.create_task(later(current_case(), case))",
        "asyncio.get_running_loop().run_in_executor(None, recorded, current_case(), case)",
    )
    app += (
        "\n\ndef recorded(recorder, case):\n    import time\n\n    time.sleep(0.05)\n"
        "    recorder.retrieval(retrieval(case))\n"
    )
    _stopped(_project(tmp_path, app), LATE, also="Future exception was never retrieved")


def test_a_task_still_running_when_the_run_would_end_stops_it(tmp_path: Path) -> None:
    root = _project(tmp_path, TASK_APP.format(delay=60, takes=0, quick=""))
    _stopped(
        root,
        ": the system started an asyncio task (or executor call) that was still running 2 s "
        "after the last case returned; what it records once the run has ended cannot count "
        "for the case; wait for it before returning",
    )


def test_records_made_before_the_case_returned_count(tmp_path: Path) -> None:
    # The thread and the task record before their case returns: every case counts.
    for name, app in (
        ("thread", THREAD_APP.replace('"q0"', '""')),
        ("task", TASK_APP.format(delay=0.01, takes=0.2, quick="")),
    ):
        (tmp_path / name).mkdir()
        root = _project(tmp_path / name, app, concurrency=2)
        result = oloproof("run", cwd=root)
        assert result.code == 0, result.out + result.err
        assert "4 / 4 observed · 0 missing · 0 excluded" in result.out, result.out


ERRORED_APP = """
import asyncio

from oloproof import Passage, Retrieval, current_case, system


async def later(recorder, case):
    await asyncio.sleep(0.05)
    recorder.retrieval(Retrieval(query=case["q"], depth=2, candidates=(Passage(doc_id="d1"),)))


@system(name="ranker", version="1", records=("retrieval/v1",))
async def run(case):
    if case["q"] == "q1":
        asyncio.create_task(later(current_case(), case))
        raise RuntimeError("down")
    current_case().retrieval(Retrieval(query=case["q"], candidates=(Passage(doc_id="d1"),)))
    return {"answer": "yes"}
"""


def test_a_task_of_a_case_that_errored_stops_nothing(tmp_path: Path) -> None:
    # c1 errored: nothing it records counts, so its task's late record loses nothing.
    result = oloproof("run", cwd=_project(tmp_path, ERRORED_APP))
    assert result.code == 0, result.out + result.err
    assert "3 / 3 observed · 1 missing · 0 excluded" in result.out, result.out


WORKER_APP = """
import asyncio
import contextvars

from oloproof import Passage, Retrieval, current_case, system

STARTED = []


async def forever():
    while True:
        await asyncio.sleep(1)


@system(name="ranker", version="1", records=("retrieval/v1",))
async def run(case):
    if not STARTED:  # meant to outlive its case: started with no case of its own
        STARTED.append(asyncio.create_task(forever(), context=contextvars.Context()))
    current_case().retrieval(Retrieval(query=case["q"], candidates=(Passage(doc_id="d1"),)))
    return {"answer": "yes"}
"""


def test_a_task_started_outside_its_case_is_not_waited_for(tmp_path: Path) -> None:
    result = oloproof("run", cwd=_project(tmp_path, WORKER_APP))
    assert result.code == 0, result.out + result.err
    assert "4 / 4 observed · 0 missing · 0 excluded" in result.out, result.out


# The first case's recorder kept and handed to a thread of each later case, where no case is
# current: it recorded into the first case, long returned, and the later ones read as having
# recorded none (gate PASS on c0 alone, exit 0).
KEPT_APP = """
import threading

from oloproof import Passage, Retrieval, current_case, system

KEPT = []


@system(name="ranker", version="1", records=("retrieval/v1",))
def run(case):
    if not KEPT:
        KEPT.append(current_case())
    ranked = Retrieval(query=case["q"], depth=2, candidates=(Passage(doc_id="d1"),))
    worker = threading.Thread(target=KEPT[0].retrieval, args=(ranked,), name="later")
    worker.start()
    worker.join()
    return {"answer": "yes"}
"""


def test_a_recorder_kept_for_a_thread_of_a_later_case_stops_the_run(tmp_path: Path) -> None:
    said = _stopped(_project(tmp_path, KEPT_APP), LATE, also="Exception in thread later:")
    assert said.startswith("error: case 'c0'"), said


# Records its retrieval in time, each case taking long enough that the other run's late record
# comes while it still runs.
PUNCTUAL_APP = """
import time

from oloproof import Passage, Retrieval, current_case, system


@system(name="ranker", version="1", records=("retrieval/v1",))
def run(case):
    current_case().retrieval(Retrieval(query=case["q"], depth=2, candidates=(Passage(doc_id="d1"),)))
    time.sleep(0.3)
    return {"answer": "yes"}
"""

TWO_RUNS = """
import json, threading, oloproof

said = {}


def run(name):
    try:
        report = oloproof.evaluate(name + "/p/oloproof.yaml")
        said[name] = [report.gate_label, report.exit_code, report.metrics[0].successes]
    except Exception as exc:
        said[name] = str(exc)


threads = [threading.Thread(target=run, args=(n,)) for n in ("late", "punctual")]
for t in threads:
    t.start()
for t in threads:
    t.join()
print(json.dumps(said))
"""


def test_a_late_record_stops_its_own_run_not_another_in_the_same_process(tmp_path: Path) -> None:
    # Two runs in one process, each in a thread: the late record of one is told to that run.
    for name in ("late", "punctual"):
        (tmp_path / name).mkdir()
    _project(tmp_path / "late", TASK_APP.format(delay=0.1, takes=0.0, quick=None))
    _project(tmp_path / "punctual", PUNCTUAL_APP)
    done = subprocess.run(
        [sys.executable, "-c", TWO_RUNS],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    said = json.loads(done.stdout)
    assert said["punctual"] == ["PASS", 0, 4], said
    assert said["late"].startswith("case 'c") and said["late"].endswith(LATE), said


# Every case records in time but the last, whose task records after it returned; each case
# takes long enough that the other run, on the same loop, ends first.
LAST_LATE_APP = """
import asyncio

from oloproof import Passage, Retrieval, current_case, system


def retrieval(case):
    return Retrieval(query=case["q"], depth=2, candidates=(Passage(doc_id="d1"),))


async def later(recorder, case):
    await asyncio.sleep(0.3)
    recorder.retrieval(retrieval(case))


@system(name="ranker", version="1", records=("retrieval/v1",))
async def run(case):
    if case["q"] == "q3":
        asyncio.create_task(later(current_case(), case))
    else:
        current_case().retrieval(retrieval(case))
    await asyncio.sleep(0.2)
    return {"answer": "yes"}
"""

ONE_LOOP = """
import asyncio, json
from oloproof.runner import execute_run, plan_run
from oloproof.store import open_project_ledger


async def one(name):
    ledger = open_project_ledger(name + "/p")
    try:
        outcome = await execute_run(ledger, plan_run(name + "/p/oloproof.yaml"))
        return [outcome.report.gate_label, outcome.report.exit_code]
    except Exception as exc:
        return str(exc)
    finally:
        ledger.close()


async def main():
    said = await asyncio.gather(one("quick"), one("late"))
    print(json.dumps(dict(zip(("quick", "late"), said))))


asyncio.run(main())
"""


def test_a_run_sharing_its_loop_with_one_that_ended_first_still_waits_for_its_cases_tasks(
    tmp_path: Path,
) -> None:
    # Two runs on one loop (a program gathering two execute_run): the first to end must not
    # take the watch of the other's cases' tasks with it.
    for name in ("quick", "late"):
        (tmp_path / name).mkdir()
    _project(tmp_path / "quick", PUNCTUAL_APP.replace("time.sleep(0.3)", "pass"))
    _project(tmp_path / "late", LAST_LATE_APP)
    done = subprocess.run(
        [sys.executable, "-c", ONE_LOOP],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    said = json.loads(done.stdout)
    assert said["quick"] == ["PASS", 0], said
    assert said["late"] == "case 'c3'" + LATE, said
