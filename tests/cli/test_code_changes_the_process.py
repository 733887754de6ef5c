"""What the system's code does to the process it runs in does not change the run's outcome.

A callable system runs in Oloproof's own process, and each of these got past it:

- a system that changed the working directory had the `--junit` and `--summary` files written
  there, relative to wherever it had moved: CI then read the report a run before had left
  where it looked (a stale PASS), or found none;
- a thread the system's module started and never ended (not a daemon) held the process after
  it had printed the gate, as Python waits for such threads: CI waited until its own timeout
  killed the job, and the gate's exit code was never seen;
- an async system that stopped the event loop it runs on (`get_running_loop().stop()`, a
  leftover of a script that ran its own loop) ended the run with a traceback and exit code 1,
  which reads as a FAILed rule. A sync system never sees that loop, on a thread or on the loop;
- an async system that cancelled every other task (as shutdown code does), the run's own among
  them, did the same.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from tests.support import ANSWERED_CONFIG, oloproof

APP = """
import asyncio
import concurrent.futures
import os
import threading
import time

from oloproof import system

{start}


@system(name="s", version="1")
{kind}def answer(case):
    {body}
    return {{"answer": case["q"]}}
"""

POLICY = "version: 1\nrules:\n  - {id: answers, metric: answered, min: 0.5}\n"

FOREVER = """
def forever():
    time.sleep(3600)


threading.Thread(target=forever, name="forever").start()
"""

# Ended by Python's own shutdown (an executor's idle workers) or soon (a last flush).
ENDING = """
pool = concurrent.futures.ThreadPoolExecutor(2)
pool.submit(time.sleep, 0.1)
threading.Thread(target=time.sleep, args=(0.5,), name="flush").start()
"""

LEFT_RUNNING = (
    "warning: threads the system's code started were still running 5 s after the command "
    "finished (forever); Oloproof exited without waiting for them\n"
)


def _project(
    root: Path, *, start: str = "", body: str = "pass", kind: str = "", answer: str = "{q}"
) -> Path:
    """A project of 30 cases whose expected answer is ``answer`` (``{q}``: the question)."""
    root.mkdir()
    (root / "app.py").write_text(APP.format(start=start, body=body, kind=kind))
    (root / "oloproof.yaml").write_text(ANSWERED_CONFIG)
    (root / "policy.yaml").write_text(POLICY)
    questions = [f"q{i}" for i in range(30)]
    (root / "cases.jsonl").write_text(
        "".join(
            json.dumps({"id": q, "input": {"q": q}, "expected": {"answer": answer.format(q=q)}})
            + "\n"
            for q in questions
        )
    )
    return root


# --- the working directory ----------------------------------------------------------------


def test_the_reports_are_written_where_they_were_asked_for(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    root = _project(tmp_path / "p", body=f"os.chdir({str(elsewhere)!r})", answer="yes")
    (root / "reports").mkdir()
    (root / "reports" / "gate.xml").write_text(
        '<?xml version="1.0" encoding="UTF-8"?>\n<testsuites name="oloproof"><!-- a run before '
        "--></testsuites>"
    )
    result = oloproof("run", "--junit", "reports/gate.xml", "--summary", "summary.md", cwd=root)
    assert result.code == 1, result.out + result.err  # every answer fails
    assert sorted(p.name for p in elsewhere.iterdir()) == []
    junit = (root / "reports" / "gate.xml").read_text()
    assert "a run before" not in junit
    assert 'name="answers (answered)"' in junit, junit
    assert "BLOCK" in (root / "summary.md").read_text()


# --- threads left running -----------------------------------------------------------------


def test_a_thread_that_never_ends_does_not_hold_the_exit(tmp_path: Path) -> None:
    root = _project(tmp_path / "p", start=FOREVER)
    try:
        result = oloproof("run", cwd=root, timeout=60)
    except subprocess.TimeoutExpired:
        pytest.fail("oloproof run did not exit while the system's thread ran")
    assert (result.code, result.err) == (0, LEFT_RUNNING), result.out + result.err
    assert "Gate: PASS (exit 0)" in result.out
    shown = oloproof("inspect", "latest", cwd=root)
    assert "[DECIDED/COMPLETE]" in shown.out, shown.out


def test_the_exit_code_is_the_gate_s_when_a_thread_is_left(tmp_path: Path) -> None:
    root = _project(tmp_path / "p", start=FOREVER, answer="yes")
    result = oloproof("run", cwd=root, timeout=60)
    assert (result.code, result.err) == (1, LEFT_RUNNING), result.out + result.err
    assert "Gate: BLOCK (exit 1)" in result.out


def test_threads_that_end_are_waited_for_without_a_word(tmp_path: Path) -> None:
    root = _project(tmp_path / "p", start=ENDING)
    result = oloproof("run", cwd=root, timeout=60)
    assert (result.code, result.err) == (0, ""), result.out + result.err


def test_a_program_that_calls_main_and_goes_on_is_not_ended(tmp_path: Path) -> None:
    # Python stops the main thread as it begins to exit; a program that catches main()'s
    # SystemExit and carries on is not exiting, and the end's timer leaves it alone.
    root = _project(tmp_path / "p", start=ENDING)
    script = (
        "import sys, time\n"
        "from oloproof.cli.main import main\n"
        "sys.argv = ['oloproof', 'run']\n"
        "try:\n"
        "    main()\n"
        "except SystemExit as exc:\n"
        "    print('exited', exc.code)\n"
        "time.sleep(7)\n"
        "print('still here')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=root, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines()[-2:] == ["exited 0", "still here"], done.stdout


# --- the event loop -----------------------------------------------------------------------


def test_a_case_that_stops_the_loop_is_recorded_and_the_run_goes_on(tmp_path: Path) -> None:
    body = 'if case["q"] == "q12":\n        asyncio.get_running_loop().stop()'
    root = _project(tmp_path / "p", body=body, kind="async ")
    result = oloproof("run", cwd=root)
    assert (result.code, result.err) == (0, ""), result.out + result.err
    assert "[DECIDED/COMPLETE]" in result.out
    assert "30 / 30 observed" in result.out, result.out


CANCELS = """if case["q"] == "q12":
        for task in asyncio.all_tasks():
            if task is not asyncio.current_task():
                task.cancel()
    await asyncio.sleep(0.01)"""


def test_a_system_that_cancels_the_run_s_own_tasks_stops_it_in_one_sentence(
    tmp_path: Path,
) -> None:
    # "Cancel every other task", as shutdown code does, cancelled the run's own: a traceback,
    # and exit code 1, which reads as a FAILed rule.
    root = _project(tmp_path / "p", body=CANCELS, kind="async ")
    result = oloproof("run", "--concurrency", "4", cwd=root)
    assert (result.code, result.err) == (
        2,
        "error: the work was cancelled by the code it runs, which cancelled asyncio tasks it "
        "had not started; what had finished is recorded (a run is left interrupted: oloproof "
        "run --resume RUN_ID finishes it)\n",
    ), result.out + result.err
    (listed,) = oloproof("runs", cwd=root).lines
    assert "INTERRUPTED" in listed, listed
    resumed = oloproof("run", "--resume", listed.split()[0], cwd=root)
    assert resumed.code == 2, resumed.out + resumed.err  # q12 cancels the run's work again
