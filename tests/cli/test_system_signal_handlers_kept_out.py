"""A SIGTERM handler the system's module sets as it is imported does not decide the exit code.

The probe: a system whose module, as servers often do, ends quietly on SIGTERM
(``signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))``), under a policy its answers fail
(exit 1). Sent SIGTERM once the run was decided, while its reports were being written, the
command exited 0, its summary reading ``No gate (exit 0): stopped (exit 0)``: the handler,
left in place after the import, ran in Oloproof's own code and turned the failed gate and the
interruption into a green exit. The handlers for SIGINT and SIGTERM are now given back as they
were once the module is imported: the SIGTERM ends the process (a shell reads 143), and the
summary keeps saying the command did not end.
"""

from __future__ import annotations

from pathlib import Path

from tests.support import oloproof, write_project

# SIGNAL set: the process sends itself SIGTERM as the reports are about to be written (the
# function the command calls for them, wrapped); what is tested is the real signal's handling.
APP = """
import os
import signal
import sys

import oloproof.cli.run_cmd as run_cmd
from oloproof import system

signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(0))

_ci_files = run_cmd._ci_files


def _signalled(*args, **kwargs):
    if os.environ.get("SIGNAL"):
        os.kill(os.getpid(), signal.SIGTERM)
    return _ci_files(*args, **kwargs)


run_cmd._ci_files = _signalled


@system(name="toy", version="1")
def run(case):
    return {"answer": case["q"]}
"""
CONFIG = """\
system: {name: toy, version: "1", callable: "app:run"}
evaluators:
  - {type: contains, criterion: echo, field: answer, expected_field: answer}
policy: policy.yaml
"""
POLICY = "version: 1\nrules:\n  - {id: floor, metric: echo, min: 0.99}\n"


def test_a_systems_sigterm_handler_does_not_make_the_exit_green(tmp_path: Path) -> None:
    cases = [{"id": f"c{i}", "input": {"q": "x"}, "expected": {"answer": "y"}} for i in range(3)]
    root = write_project(tmp_path / "p", app=APP, config=CONFIG, policy=POLICY, cases=cases)
    assert oloproof("run", cwd=root).code == 1  # the gate fails
    done = oloproof("run", "--summary", "summary.md", cwd=root, env={"SIGNAL": "1"})
    assert done.code == -15, done.out + done.err
    assert "No gate** (not ended)" in (root / "summary.md").read_text()
