"""What ``latest`` says of a newest run that another process is still writing, through the CLI.

The probe: a run held on a case while ``inspect latest`` was asked. Its note said ``the newest
run, run_…, did not finish (0 of 3 cases; finish it with: oloproof run --resume run_…)``, and
with no finished run before it the error said the same: the run had not stopped, and the
``--resume`` it offered is refused while the run is written. It now says the run is still
running and which process writes it.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.support import HELD_TOY_APP, HELD_TOY_CONFIG, oloproof, run_in_progress, write_project

POLICY = "version: 1\nrules:\n  - {id: floor, metric: echo, min: 0.2}\n"
RUN_ID = re.compile(r"run_[0-9A-HJKMNP-TV-Z]{26}")


def _project(root: Path) -> Path:
    cases = (
        {"id": f"c{i}", "input": {"q": f"q{i}"}, "expected": {"answer": f"q{i}"}} for i in range(3)
    )
    return write_project(root, app=HELD_TOY_APP, config=HELD_TOY_CONFIG, policy=POLICY, cases=cases)


def _newest(root: Path) -> str:
    listed = oloproof("runs", "--json", cwd=root)
    assert listed.code == 0, listed.err
    run_id: str = json.loads(listed.out)[0]["run_id"]
    return run_id


def test_latest_says_the_newest_run_is_still_running(tmp_path: Path) -> None:
    root = _project(tmp_path / "p")
    finished = oloproof("run", cwd=root)
    assert finished.code == 0, finished.out + finished.err
    (before,) = RUN_ID.findall(finished.lines[0])
    with run_in_progress(root, "holding\n", {"HOLD": "q0"}, ("--no-cache",)) as proc:
        running = _newest(root)
        shown = oloproof("inspect", "latest", cwd=root)
        assert shown.code == 0, shown.out + shown.err
        assert shown.lines[0] == f"Run {before} [DECIDED/COMPLETE]"
        # Was: "…, did not finish (0 of 3 cases; finish it with: oloproof run --resume …)".
        assert shown.err == (
            f"note: the newest run, {running}, is still running (0 of 3 cases so far; another "
            f"process (pid {proc.pid}) is writing it); `latest` is {before}, the newest run "
            "that finished\n"
        )


def test_no_latest_yet_says_the_only_run_is_still_running(tmp_path: Path) -> None:
    root = _project(tmp_path / "p")
    with run_in_progress(root, "holding\n", {"HOLD": "q0"}) as proc:
        running = _newest(root)
        shown = oloproof("inspect", "latest", cwd=root)
        assert shown.code == 2, shown.out + shown.err
        assert shown.err == (
            "error: no run has finished yet, so `latest` names no run; the newest run, "
            f"{running}, is still running (0 of 3 cases so far; another process "
            f"(pid {proc.pid}) is writing it)\n"
        )
