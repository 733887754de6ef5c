"""A thread the system's code leaves running does not keep `oloproof run` from exiting.

The system's code runs in Oloproof's own process, and Python waits, as it exits, for every
thread that is not a daemon. A system module that started one that never ends (a client
library's reporter, a loader that waits for work) left `oloproof run` hanging after it had
printed the gate: CI waited until its own timeout killed the job, and the gate's exit code was
never seen. Threads that do end (an executor's idle workers, a flush at exit) are waited for as
before.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from tests.support import oloproof

APP = """
import concurrent.futures
import threading
import time

from oloproof import system

{start}


@system(name="t", version="1")
def answer(case):
    return {{"answer": case["q"]}}
"""

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

CONFIG = """
system: {name: t, version: "1", callable: app:answer}
dataset: cases.jsonl
policy: policy.yaml
evaluators:
  - {type: contains, criterion: answered, field: answer, expected_field: answer}
"""

POLICY = "version: 1\nrules:\n  - {id: answers, metric: answered, min: 0.5}\n"


def _project(root: Path, start: str) -> Path:
    root.mkdir()
    (root / "app.py").write_text(APP.format(start=start))
    (root / "oloproof.yaml").write_text(CONFIG)
    (root / "policy.yaml").write_text(POLICY)
    (root / "cases.jsonl").write_text(
        "".join(
            json.dumps({"id": f"c{i}", "input": {"q": "x"}, "expected": {"answer": "x"}}) + "\n"
            for i in range(30)
        )
    )
    return root


def test_a_thread_that_never_ends_does_not_hold_the_exit(tmp_path: Path) -> None:
    root = _project(tmp_path / "p", FOREVER)
    try:
        result = oloproof("run", cwd=root, timeout=60)
    except subprocess.TimeoutExpired:
        pytest.fail("oloproof run did not exit while the system's thread ran")
    assert result.code == 0, result.out + result.err
    assert "Gate: PASS (exit 0)" in result.out
    assert result.err == (
        "warning: threads the system's code started were still running 5 s after the command "
        "finished (forever); Oloproof exited without waiting for them\n"
    )
    shown = oloproof("inspect", "latest", cwd=root)
    assert "[DECIDED/COMPLETE]" in shown.out, shown.out


def test_threads_that_end_are_waited_for_without_a_word(tmp_path: Path) -> None:
    root = _project(tmp_path / "p", ENDING)
    result = oloproof("run", cwd=root, timeout=60)
    assert (result.code, result.err) == (0, ""), result.out + result.err


def test_the_exit_code_is_the_gate_s(tmp_path: Path) -> None:
    root = _project(tmp_path / "p", FOREVER)
    lines = (root / "cases.jsonl").read_text().replace('"answer": "x"', '"answer": "y"')
    (root / "cases.jsonl").write_text(lines)
    result = oloproof("run", cwd=root, timeout=60)
    assert result.code == 1, result.out + result.err
    assert "Gate: BLOCK (exit 1)" in result.out


def test_a_program_that_calls_main_and_goes_on_is_not_ended(tmp_path: Path) -> None:
    # Python stops the main thread as it begins to exit; a program that catches main()'s
    # SystemExit and carries on is not exiting, and the end's timer leaves it alone.
    root = _project(tmp_path / "p", ENDING)
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
