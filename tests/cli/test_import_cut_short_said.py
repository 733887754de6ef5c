"""A run whose `oloproof ledger import` was cut short says to import again: through the real CLI.

The defect: an import killed after its first commit left the run's event in the ledger, and
none of its cases, end or refs. `runs` listed it INTERRUPTED, `inspect RUN` said `0 of 3 cases
finished; finish it with: oloproof run --resume RUN`, and `inspect latest` offered the same
`--resume`, which then executed the whole run again in this project, under whatever code and
cases were here, and recorded it as the run made elsewhere. The right fix is importing the
same archive again (the import writes the run's refs last, so a cut-short one is told by the
run's ref being absent): now each of them says so, and `--resume` is refused.

The import is killed by SIGKILL in a real `oloproof ledger import` process, right after its
first commit (a hook in that process), so the test does not depend on timing.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.support import oloproof, toy_project

# `oloproof ledger import ARCHIVE`, killed (SIGKILL) once its first commit of events is written.
KILLED_IMPORT = """
import os, signal, sys
from ledger.store import Ledger
from oloproof.cli.main import main

commit = Ledger._commit_imported

def commit_then_die(self, items, refs):
    written = commit(self, items, refs)
    if items:
        os.kill(os.getpid(), signal.SIGKILL)
    return written

Ledger._commit_imported = commit_then_die
sys.argv = ["oloproof", "ledger", "import", sys.argv[1]]
main()
"""


def test_a_cut_short_import_says_to_import_again(tmp_path: Path) -> None:
    source = toy_project(tmp_path / "source", cases=3)
    assert oloproof("run", cwd=source).code == 3  # too few cases to clear the floor
    archive = tmp_path / "run.oloarchive"
    assert oloproof("ledger", "export", "latest", "--to", str(archive), cwd=source).code == 0

    here = toy_project(tmp_path / "here", cases=3)
    killed = subprocess.run(
        [sys.executable, "-c", KILLED_IMPORT, str(archive)], cwd=here, capture_output=True
    )
    assert killed.returncode == 137, killed.stderr  # 128 + SIGKILL, as the CLI reports it
    (row,) = json.loads(oloproof("runs", "--json", cwd=here).out)
    run_id = row["run_id"]
    assert (row["execution_state"], row["cases"], row["import_unfinished"]) == (
        "INTERRUPTED",
        0,
        True,
    )
    # was: "(3 not run)": they ran where the run was made, and the archive holds them
    (line,) = oloproof("runs", cwd=here).lines
    assert line.endswith(
        "0 of 3 answered · 3 missing (3 not imported yet) · its import was cut short: import the "
        f"archive again  code {line.rsplit(' ', 1)[1]}"
    ), line

    again = (
        f"{run_id} came into this ledger by an `oloproof ledger import` that did not finish; "
        "import the same archive again to complete it (oloproof ledger import ARCHIVE)"
    )
    report = oloproof("inspect", run_id, cwd=here)
    assert report.code == 0, report.err
    # was: "0 of 3 cases finished; finish it with: oloproof run --resume RUN"
    assert report.lines[1] == f"0 of 3 cases finished; {again}"

    latest = oloproof("inspect", "latest", cwd=here)
    assert latest.code == 2
    assert latest.err == (
        "error: no run has finished yet, so `latest` names no run; the newest run, "
        f"{run_id}, did not finish (0 of 3 cases; {again})\n"
    )

    resumed = oloproof("run", "--resume", run_id, cwd=here)
    assert resumed.code == 2  # was 0: the three cases executed here and recorded as that run
    assert resumed.err == f"error: {again}\n"
    (row,) = json.loads(oloproof("runs", "--json", cwd=here).out)
    assert (row["state"], row["cases"]) == ("interrupted", 0)  # nothing was written

    done = oloproof("ledger", "import", str(archive), cwd=here)
    assert done.code == 0, done.err
    (row,) = json.loads(oloproof("runs", "--json", cwd=here).out)
    assert (row["execution_state"], row["gate"], row["cases"]) == ("COMPLETE", "BLOCK", 3)
    assert "import_unfinished" not in row
    assert oloproof("verify", cwd=here).code == 0
