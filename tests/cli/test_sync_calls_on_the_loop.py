"""Synchronous calls that compute an answer quickly are made on the run's loop, and nothing a
case records depends on where its call was made.

Real runs in a subprocess, one case at a time (``concurrency: 1``) so that which calls were made
on a thread and which on the loop is known. Every output names the thread it was computed on.
"""

from __future__ import annotations

import signal
from pathlib import Path
from typing import Any

from tests.support import bundle_cases, echo_project, interrupt_run, interrupted_fields, oloproof

APP = """
import asyncio, os, sys, threading, time
from oloproof import system

def fail(q):
    raise ValueError("the same failure")

def depth(n):
    return 0 if n == 0 else 1 + depth(n - 1)

# As deep as a call on a thread of its own may go, a few frames spare.
DEEP = sys.getrecursionlimit() - 20

async def answered(q):
    await asyncio.sleep(0)
    return q

@system(name="sync", version="1")
def run(case):
    q = case["q"]
    if q == "wait":
        time.sleep(0.02)
    elif q == "raise":
        fail(q)
    elif q == "stop-iteration":
        raise StopIteration("over")
    elif q == "generator-exit":
        raise GeneratorExit("closed")
    elif q == "exit":
        sys.exit(4)
    elif q == "hang":
        sys.stderr.write("hanging\\n")
        sys.stderr.flush()
        time.sleep(3600)
    elif q == "spin":
        while True:
            pass
    elif q == "deep":
        depth(DEEP)
    elif q == "own-limit":
        sys.setrecursionlimit(3000)
        depth(2900)
    elif q == "own-loop":
        q = asyncio.run(answered(q))
    return {"answer": q, "thread": threading.current_thread().name}
"""

CONFIG = """\
system: {{name: sync, version: "1", callable: app:run}}
dataset: cases.jsonl
concurrency: 1
timeout_s: {timeout}
evaluators:
  - {{type: contains, criterion: echoed, field: answer, expected_field: answer}}
policy: policy.yaml
"""

# Far more fast calls than the pool's probation asks for in a row: the calls after them are made
# on the loop, however busy the machine (a thread it pauses has not waited on anything).
FAST = 100
ERRORS = ("raise", "stop-iteration", "generator-exit", "exit")


def project(root: Path, questions: list[str], timeout: float = 10) -> Path:
    return echo_project(root, APP, CONFIG.format(timeout=timeout), questions)


def run(root: Path) -> list[dict[str, Any]]:
    done = oloproof("run", cwd=root, timeout=60)
    assert done.code == 0, done.out + done.err
    return bundle_cases(root, done.lines[0].split()[1])


def threads(cases: list[dict[str, Any]]) -> list[str]:
    return [c["output"]["thread"] if c["output"] else "-" for c in cases]


def test_fast_calls_move_to_the_loop_and_calls_that_wait_stay_on_threads(tmp_path: Path) -> None:
    fast = threads(run(project(tmp_path / "fast", ["q"] * (FAST + 20))))
    assert all(t.startswith("oloproof-system-") for t in fast[:16]), fast
    assert fast[FAST:] == ["MainThread"] * 20, fast

    # A call that sleeps 20 ms waits on something: every call stays on the threads, where the
    # cases of a higher concurrency wait side by side.
    waiting = threads(run(project(tmp_path / "wait", ["wait"] * 40)))
    assert all(t.startswith("oloproof-system-") for t in waiting), waiting

    # A call made on the loop that waits longer than the calls there may wait in all (5 ms at
    # first) sends every later one back, for good.
    mixed = threads(run(project(tmp_path / "mixed", ["q"] * FAST + ["wait"] + ["q"] * 20)))
    assert mixed[FAST] == "MainThread"
    assert all(t.startswith("oloproof-system-") for t in mixed[FAST + 1 :]), mixed


def test_what_a_call_raised_reads_the_same_on_a_thread_and_on_the_loop(tmp_path: Path) -> None:
    questions = [*ERRORS, *["q"] * FAST, *ERRORS, "q"]
    cases = run(project(tmp_path / "p", questions))
    assert threads(cases)[-1] == "MainThread"  # the second errors were raised on the loop
    on_thread, on_loop = cases[: len(ERRORS)], cases[len(ERRORS) + FAST : -1]
    for first, second in zip(on_thread, on_loop, strict=True):
        assert first["status"] == second["status"] == "errored"
        assert first["error"] == second["error"], first["input"]
        assert "threads.py" not in first["error"]["traceback"]
    assert [c["error"]["type"] for c in on_loop] == [
        "ValueError",
        "RuntimeError",
        "GeneratorExit",
        "SystemExit",
    ]


def test_a_call_on_the_loop_that_hangs_times_out_as_on_a_thread(tmp_path: Path) -> None:
    questions = ["hang", *["q"] * FAST, "hang", "q", "spin", "q"]
    cases = run(project(tmp_path / "p", questions, timeout=1))
    errors = {c["id"]: c["error"] for c in cases if c["status"] == "errored"}
    timed_out = {
        "type": "TimeoutError",
        "message": "the case took longer than 1 s",
        "traceback": "",
    }
    # The first hang was on a thread, the second on the loop, the spin back on a thread.
    assert errors == {"c0": timed_out, f"c{FAST + 1}": timed_out, f"c{FAST + 3}": timed_out}
    assert threads(cases)[FAST] == "MainThread"
    assert threads(cases)[FAST + 2].startswith("oloproof-system-")
    assert cases[-1]["verdicts"]["echoed"] == {"s": "pass"}


def test_a_spin_on_the_loop_is_stopped_at_its_deadline(tmp_path: Path) -> None:
    cases = run(project(tmp_path / "p", [*["q"] * FAST, "spin", "q"], timeout=1))
    assert cases[FAST]["error"]["message"] == "the case took longer than 1 s"
    assert cases[-1]["status"] == "ok"


def test_a_call_on_the_loop_may_run_an_event_loop_of_its_own(tmp_path: Path) -> None:
    cases = run(project(tmp_path / "p", [*["q"] * FAST, "own-loop"]))
    assert cases[FAST]["output"] == {"answer": "own-loop", "thread": "MainThread"}


def test_ctrl_c_stops_a_call_that_hangs_on_the_loop(tmp_path: Path) -> None:
    root = project(tmp_path / "p", [*["q"] * FAST, "hang", "q"], timeout=3600)
    code, out, err = interrupt_run(root, "hanging\n", signal.SIGINT, timeout=30, settle=0.5)
    assert code == 130, out + err
    fields = interrupted_fields(root, err)
    assert fields[5].startswith(f"{FAST} of {FAST + 2} answered"), fields


def test_a_call_on_the_loop_may_recurse_as_deep_as_on_a_thread(tmp_path: Path) -> None:
    # A call made on the loop starts some 40 frames deeper than one on a thread: code that
    # recursed within Python's limit there raised RecursionError on the loop, so the same case
    # passed or errored by where the pool happened to make its call.
    questions = ["deep", *["q"] * FAST, "deep", "own-limit", "q", "deep"]
    cases = run(project(tmp_path / "p", questions))
    assert [c["status"] for c in cases] == ["ok"] * len(questions), [
        (c["input"]["q"], c["error"]["message"]) for c in cases if c.get("error")
    ]
    assert threads(cases)[0].startswith("oloproof-system-")
    assert threads(cases)[FAST + 1 :] == ["MainThread"] * 4
