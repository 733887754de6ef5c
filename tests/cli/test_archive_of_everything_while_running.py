"""`oloproof ledger export --all` while a run is being written warns of it: the real CLI.

The defect: `ledger export RUN` of a run another process was still writing warned that the
archive held only the cases written so far, but `ledger export --all` of the same ledger at
the same moment printed only "exported 48 events to ..." with exit 0. Imported elsewhere, the
run reads INTERRUPTED there, nothing having said it was cut at export. Now `--all` gives the
same warning for each run being written.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from tests.support import HELD_TOY_APP, HELD_TOY_CONFIG, oloproof, run_in_progress, write_project

POLICY = "version: 1\nrules:\n  - {id: floor, metric: echo, min: 0.5}\n"
CASES = [
    {"id": f"c{i}", "input": {"q": f"q{i}"}, "expected": {"answer": f"q{i}"}} for i in range(4)
]


def test_an_archive_of_everything_says_which_run_is_still_being_written(tmp_path: Path) -> None:
    root = write_project(
        tmp_path / "p", app=HELD_TOY_APP, config=HELD_TOY_CONFIG, policy=POLICY, cases=CASES
    )
    assert oloproof("run", cwd=root).code == 3  # finished (4 cases clear no floor): no warning
    with run_in_progress(root, "holding\n", {"HOLD": "q2"}, ("--no-cache",)) as running:
        for _ in range(600):  # the 2 cases before the held one are written within seconds
            (row, _) = json.loads(oloproof("runs", "--json", cwd=root).out)
            if row["cases"] == 2:
                break
            time.sleep(0.05)
        exported = oloproof("ledger", "export", "--all", "--to", "all.oloarchive", cwd=root)
        assert exported.code == 0, exported.out + exported.err
        assert exported.err == (
            f"warning: {row['run_id']} is still running (2 of 4 cases so far; another process "
            f"(pid {running.pid}) is writing it); the archive holds the cases written so far\n"
        )
        (root / "release").touch()
    done = oloproof("ledger", "export", "--all", "--to", "all.oloarchive", cwd=root)
    assert (done.code, done.err) == (0, ""), done
