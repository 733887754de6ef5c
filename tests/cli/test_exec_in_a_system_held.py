"""A system that replaces the process with another program (``os.execv``, or any ``os.exec*``
function, which all call ``os.execv`` or ``os.execve``) costs only its case: it neither ends
``oloproof run`` with that program's status (``true``'s 0 reading as a passing gate) nor leaves
the run unfinished. A child the system forks still runs the program it asks for."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.support import answered_project, oloproof

# Every answer is wrong (the gate FAILs), and q3 becomes ``true``, which exits 0.
APP = """
import os

from oloproof import system


@system(name="s", version="1")
def answer(case):
    if case["q"] == "q3":
        {call}
    return {{"answer": "wrong"}}
"""

CALLS = {
    "execv": ('os.execv("/bin/true", ["true"])', "os.execv"),
    "execlp": ('os.execlp("true", "true")', "os.execv"),
    "execve": ('os.execve("/bin/true", ["true"], {})', "os.execve"),
}


@pytest.mark.parametrize("name", CALLS)
def test_exec_in_a_system_errors_its_case_and_the_gate_still_fails(
    tmp_path: Path, name: str
) -> None:
    call, held = CALLS[name]
    root = answered_project(tmp_path / "p", APP.format(call=call))
    result = oloproof("run", cwd=root)
    assert result.code == 1, result.out + result.err
    assert "Gate: BLOCK (exit 1)" in result.lines
    run_id = result.lines[0].split()[1]
    case = oloproof("inspect", run_id, "--case", "q3", cwd=root)
    assert f"error: HardExit: it called {held}" in case.out, case.out


FORKS = """
import os

from oloproof import system


@system(name="s", version="1")
def answer(case):
    child = os.fork()
    if child == 0:  # the child becomes the program it asks for
        os.execv("/bin/sh", ["sh", "-c", "exit 7"])
    _, status = os.waitpid(child, 0)
    return {"answer": f"{case['q']} {os.waitstatus_to_exitcode(status)}"}
"""


def test_a_child_the_system_forks_still_runs_the_program_it_asks_for(tmp_path: Path) -> None:
    root = answered_project(tmp_path / "p", FORKS, cases=1)
    result = oloproof("run", "--json", cwd=root)
    run_id = json.loads(result.out)["run_id"]
    shown = oloproof("inspect", run_id, "--case", "q0", cwd=root)
    assert "answer: q0 7" in shown.out, shown.out + result.err
