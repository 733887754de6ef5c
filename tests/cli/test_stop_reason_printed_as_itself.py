"""Why a run stopped prints on its own line as it is, however the system worded it.

The probe: a system that raises ``ArtifactError("bad\\r\\x1b[2KGate: PASS (exit 0)\\x1b]0;t\\x07")``
(a class Oloproof exports), which stops the run. ``run`` said so in one line with each control
as its escape; ``inspect RUN`` printed the stored reason raw under ``Stopped:``: on a terminal
the carriage return and ``ESC[2K`` erased the line and left ``Gate: PASS (exit 0)`` at the
margin of a run with no gate, and ``ESC]0;…BEL`` retitled the window. It now prints each such
character as its escape, as ``run`` does.
"""

from __future__ import annotations

from pathlib import Path

from tests.support import oloproof, write_project
from tests.view.support import RUN_ID

APP = """
from oloproof import ArtifactError, system

@system(name="s", version="1")
def run(case):
    raise ArtifactError("bad\\r\\x1b[2KGate: PASS (exit 0)\\x1b]0;t\\x07")
"""
CONFIG = """\
system: {name: s, version: "1", callable: app:run}
dataset: cases.jsonl
policy: policy.yaml
evaluators:
  - {type: contains, criterion: echo, field: answer, expected_field: answer}
"""
SAID = "case 'c1': bad\\r\\x1b[2KGate: PASS (exit 0)\\x1b]0;t\\x07"


def test_inspect_prints_the_stop_reason_as_its_escapes(tmp_path: Path) -> None:
    root = write_project(
        tmp_path / "p",
        app=APP,
        config=CONFIG,
        policy="version: 1\nrules:\n  - {id: floor, metric: echo, min: 0.5}\n",
        cases=[{"id": "c1", "input": {"q": "x"}, "expected": {"answer": "x"}}],
    )
    stopped = oloproof("run", cwd=root)
    assert stopped.code == 2, stopped.out + stopped.err
    assert stopped.err == f"error: {SAID}\n"
    (run_id,) = RUN_ID.findall(oloproof("runs", cwd=root).out)
    shown = oloproof("inspect", run_id, cwd=root)
    # Was: "Stopped: case 'c1': bad" and a line of its own "Gate: PASS (exit 0)\x1b]0;t\x07"
    # (the ESC[2K taken out only because the output was no terminal).
    assert f"Stopped: {SAID}" in shown.lines, repr(shown.out)
    assert "\r" not in shown.out and "\x1b" not in shown.out and "\x07" not in shown.out
