"""Resuming a run an earlier release started, whose system's code may call a model, when that
release read model replies otherwise: refused with a sentence saying so, not blaming a change
of the user's code. Real CLI runs; the earlier release is a stand-in (today's code counting
`REPLIES` as 2, as the release before this one did).

(Before: `error: the system changed since RUN started (its code or settings differ); start a
new run instead`, though nothing in the project had changed.)
"""

from __future__ import annotations

import signal
from pathlib import Path

from tests.support import HELD_TOY_APP, HELD_TOY_CONFIG, oloproof, start_run, write_project

# Code that may call a model (it reaches oloproof.models), held on the case HOLD names.
APP = HELD_TOY_APP.replace(
    "from oloproof import system\n",
    "from oloproof import system\nfrom oloproof.models import ModelClient\n",
).replace(
    '        sys.stderr.write("holding',
    '        assert ModelClient\n        sys.stderr.write("holding',
)

EARLIER_RELEASE = """
from oloproof import models

models.REPLIES = 2
from oloproof.cli.main import main

main()
"""


def test_a_run_an_earlier_reading_started_is_not_resumed_as_changed_code(
    tmp_path: Path,
) -> None:
    cases = (
        {"id": f"c{i}", "input": {"q": f"q{i}"}, "expected": {"answer": f"q{i}"}} for i in range(4)
    )
    root = write_project(
        tmp_path / "p",
        app=APP,
        config=HELD_TOY_CONFIG,
        policy="version: 1\nrules:\n  - {id: floor, metric: echo, min: 0.5}\n",
        cases=cases,
    )
    proc = start_run(root, "holding\n", {"HOLD": "q2"}, command=("-c", EARLIER_RELEASE))
    proc.send_signal(signal.SIGINT)
    (root / "release").touch()
    try:
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    run_id = err.split("--resume ")[1].split()[0]

    resumed = oloproof("run", "--resume", run_id, cwd=root)
    assert (resumed.code, resumed.out) == (2, "")
    assert resumed.err == (
        f"error: {run_id} was started by an earlier release of oloproof, which read the model's "
        "replies otherwise than this one (see `replies` in docs/models.md), so its cases left "
        "cannot be answered alike with those it finished; start a new run instead: oloproof run\n"
    )
    # A change of the code itself is still said as one.
    (root / "app.py").write_text(APP.replace('"answer": case["q"]', '"answer": case["q"] + "!"'))
    changed = oloproof("run", "--resume", run_id, cwd=root)
    assert changed.code == 2 and "the system changed since" in changed.err, changed.err
