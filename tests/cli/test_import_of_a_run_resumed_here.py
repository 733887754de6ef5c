"""An import that gives a run a second result for some of its cases says so: the real CLI.

The defect: `oloproof ledger export` of a run still running writes the cases so far (with a
warning). Imported into another project, the run read INTERRUPTED there and `run --resume`
finished it there. The archive of the same run once it had ended where it was made then
imported with exit 0 and only "imported 12 new events ... chain: 4 commit(s)": the run held
two results for its cases, which no report counts (reports count the first, the ones
made here; docs/ledger.md, "one result a case"), and nothing said so until `verify` was run.
Now the import says, on stderr, which run already held a result for how many of the cases
the archive brings, that its reports count those it held, and that `verify` names the others.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.support import HELD_TOY_CONFIG, oloproof, run_in_progress, write_project

# A system that holds the case whose `q` is the environment's HOLD (saying "holding" on stderr) until a file `release`
# appears beside it, and answers with the time: the same code answering otherwise in another
# project, as a model does. (No module-level path: the code's identity reads its globals.)
APP = """
import os
import sys
import time
from pathlib import Path

from oloproof import system


@system(name="toy", version="1")
def run(case):
    if case["q"] == os.environ.get("HOLD"):
        sys.stderr.write("holding\\n")
        sys.stderr.flush()
        while not (Path(__file__).parent / "release").exists():
            time.sleep(0.05)
    return {"answer": f"{case['q']} at {time.time_ns()}"}
"""
POLICY = "version: 1\nrules:\n  - {id: floor, metric: echo, min: 0.5}\n"
CASES = [{"id": f"c{i}", "input": {"q": f"x{i}"}, "expected": {"answer": "x"}} for i in range(4)]


def project(root: Path) -> Path:
    return write_project(root, app=APP, config=HELD_TOY_CONFIG, policy=POLICY, cases=CASES)


def test_an_import_says_which_results_no_report_will_count(tmp_path: Path) -> None:
    source = project(tmp_path / "source")
    partial, whole = tmp_path / "partial.oloarchive", tmp_path / "whole.oloarchive"
    with run_in_progress(source, "holding\n", env={"HOLD": "x2"}) as running:
        (row,) = json.loads(oloproof("runs", "--json", cwd=source).out)
        exported = oloproof("ledger", "export", row["run_id"], "--to", str(partial), cwd=source)
        assert exported.code == 0 and "still running" in exported.err, exported
        (source / "release").touch()
        running.wait(timeout=60)
    run_id = row["run_id"]
    assert oloproof("ledger", "export", run_id, "--to", str(whole), cwd=source).code == 0

    here = project(tmp_path / "here")
    assert oloproof("ledger", "import", str(partial), cwd=here).code == 0
    resumed = oloproof("run", "--resume", run_id, cwd=here)
    assert resumed.code in (1, 3), resumed
    before = oloproof("runs", "--json", cwd=here).out

    imported = oloproof("ledger", "import", str(whole), cwd=here)
    assert imported.code == 0, imported
    # The cases the partial archive lacks, which ran both here and there.
    twice = [case["id"] for case in CASES[row["cases"] :]]
    shown = ", ".join(repr(c) for c in twice[:3]) + (", …" if len(twice) > 3 else "")
    assert imported.err == (
        f"warning: {run_id} already held a result for {len(twice)} of the cases this archive "
        f"brings ({shown}): the run went on both here and where the archive was made; its "
        "reports count the results it held, and `oloproof verify` names the others\n"
    )
    assert oloproof("runs", "--json", cwd=here).out == before
    checked = oloproof("verify", cwd=here)
    assert checked.code == 1 and "already holds a result for case 'c2'" in checked.out

    again = oloproof("ledger", "import", str(whole), cwd=here)  # nothing new: nothing to say
    assert (again.code, again.err) == (0, ""), again
