"""A run being resumed is shown as running, not as the earlier go left it, through the CLI.

The probe: a run interrupted (Ctrl-C) after 2 of its 6 cases, so decided on those, then
resumed, the resume held on its fifth case. While it was held, the viewer's run page showed the
RUNNING badge above ``Stopped: interrupted before every case finished``, the earlier go's gate
table (``floor echo INSUFFICIENT_EVIDENCE``) and its cache counts, as if the run were decided;
``inspect`` said the live resume's 2 cases were written by "a go that was killed" (``Cache:
execution 0 hit/2 miss; judgment 0 hit/2 miss (not counting the 2 cases a go that was killed
wrote)``). The running resume counts its cases when it ends, and decides then.
"""

from __future__ import annotations

import re
import time
from pathlib import Path

from tests.support import (
    HELD_TOY_APP,
    HELD_TOY_CONFIG,
    interrupted_while_held,
    oloproof,
    start_run,
    write_project,
)
from tests.view.support import fetch, serving

POLICY = "version: 1\nrules:\n  - {id: floor, metric: echo, min: 0.5}\n"


def _text(page: str) -> str:
    """A page's text, tags dropped and white space made single."""
    return " ".join(re.sub(r"<[^>]+>", " ", page).split())


def _inspected(root: Path, run_id: str) -> list[str]:
    done = oloproof("inspect", run_id, cwd=root)
    assert done.code == 0, done.out + done.err
    return done.lines


def test_a_run_being_resumed_is_shown_running_not_decided(tmp_path: Path) -> None:
    cases = (
        {"id": f"c{i}", "input": {"q": f"q{i}"}, "expected": {"answer": f"q{i}"}} for i in range(6)
    )
    root = write_project(
        tmp_path / "p", app=HELD_TOY_APP, config=HELD_TOY_CONFIG, policy=POLICY, cases=cases
    )
    run_id = interrupted_while_held(root, "holding\n", {"HOLD": "q2"})
    assert _inspected(root, run_id)[2] == "Gate: BLOCK (exit 3)"  # the first go decided

    resumed = start_run(root, "holding\n", {"HOLD": "q4"}, ("--resume", run_id))
    try:
        with serving(root) as url:
            status, page = fetch(f"{url}/runs/{run_id}")
        assert status == 200
        shown = _text(page)
        assert "RUNNING" in shown
        # Was: "Stopped: interrupted before every case finished", the first go's rule table
        # and its cache counts.
        assert "Stopped:" not in shown and "INSUFFICIENT_EVIDENCE" not in shown
        assert "Execution 0 hit" not in shown
        assert "Another process is writing this run now: it is decided when it ends." in shown
        assert "No gate yet: the run is decided when it ends." in shown
        assert "Cache counts are recorded when the run ends." in shown

        # The cases before the one it holds are written while it waits (a stalled run writes
        # what finished within seconds).
        held = "4 of 6 cases finished so far; another process is writing the run now"
        for _ in range(600):  # the batch is written within seconds; this only bounds a hang
            lines = _inspected(root, run_id)
            if lines[1] == held:
                break
            time.sleep(0.2)
        # Was: "... (not counting the 2 cases a go that was killed wrote)": no go was killed.
        assert "Cache: execution 0 hit/2 miss; judgment 0 hit/2 miss" in lines
        (root / "release").touch()
        out, err = resumed.communicate(timeout=120)
    finally:
        resumed.kill()
    assert resumed.returncode == 0, out + err
    lines = _inspected(root, run_id)
    assert lines[:2] == [f"Run {run_id} [DECIDED/COMPLETE]", "Gate: PASS (exit 0)"]
    assert "Cache: execution 0 hit/6 miss; judgment 0 hit/6 miss" in lines
