"""``oloproof runs`` counts what a run holds after a resume that was killed, through the CLI.

The probe: a run interrupted (Ctrl-C) after 10 of its 30 cases, then resumed, and the resume
killed (SIGKILL) once it had written 10 more. ``inspect`` said ``20 of 30 cases finished``;
``runs`` still read the end record the first go wrote: ``10 of 30 observed · 20 missing (20 not
run)``, as if the resume had written nothing. The end record a later go wrote nothing over
says how the run stands; one that the ledger holds more case results than it counted does not,
and ``runs`` counts the run's cases then, as it does for a run that has no end record.
"""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path

from tests.support import (
    HELD_TOY_APP,
    HELD_TOY_CONFIG,
    interrupted_while_held,
    oloproof,
    runs_fields,
    start_run,
    write_project,
)
from tests.view.support import fetch, serving

POLICY = "version: 1\nrules:\n  - {id: floor, metric: echo, min: 0.5}\n"


def _finished(root: Path, run_id: str) -> str:
    """``inspect``'s line saying how many cases the run holds."""
    done = oloproof("inspect", run_id, cwd=root)
    assert len(done.lines) > 1, done.out + done.err
    return done.lines[1]


def test_runs_counts_the_cases_a_killed_resume_wrote(tmp_path: Path) -> None:
    cases = (
        {"id": f"c{i}", "input": {"q": f"q{i}"}, "expected": {"answer": f"q{i}"}} for i in range(30)
    )
    root = write_project(
        tmp_path / "p", app=HELD_TOY_APP, config=HELD_TOY_CONFIG, policy=POLICY, cases=cases
    )
    run_id = interrupted_while_held(root, "holding\n", {"HOLD": "q10"})
    assert runs_fields(root, run_id)[5] == "10 of 30 answered · 20 missing (20 not run)"

    resumed = start_run(root, "holding\n", {"HOLD": "q20"}, ("--resume", run_id))
    try:
        # The cases before the one it holds are written while it waits (a stalled run writes
        # what finished within seconds); then it is killed, leaving no end record.
        held = "20 of 30 cases finished so far; another process is writing the run now"
        for _ in range(600):  # the batch is written within seconds; this only bounds a hang
            if _finished(root, run_id) == held:
                break
            time.sleep(0.2)
        # While it runs, the row counts what it has written so far, as `inspect` does.
        assert runs_fields(root, run_id)[3:6:2] == [
            "RUNNING",
            "20 of 30 answered · 10 missing (10 not run)",
        ]
        resumed.send_signal(signal.SIGKILL)
        resumed.communicate(timeout=60)
    finally:
        resumed.kill()
    assert _finished(root, run_id).startswith("20 of 30 cases finished; ")
    fields = runs_fields(root, run_id)
    # Was: "10 of 30 observed · 20 missing (20 not run)", from the first go's end record.
    assert fields[3:6] == [
        "INTERRUPTED",
        "BLOCK (exit 3)",
        "20 of 30 answered · 10 missing (10 not run)",
    ]
    listed = oloproof("runs", "--json", cwd=root)
    (row,) = [r for r in json.loads(listed.out) if r["run_id"] == run_id]
    assert (row["cases"], row["observed"], row["not_run"]) == (20, 20, 10)
    # The gate shown is the one decided on the first 10: `inspect` says so under it (it said
    # nothing, its rule note counting 20 missing beside a metrics table counting 10), and
    # `latest`'s note counts the 20 held (it said 10, from the first go's end record).
    shown = oloproof("inspect", run_id, cwd=root)
    assert shown.lines[2:4] == [
        "Gate: BLOCK (exit 3)",
        "The gate was decided on 10 of the 20 cases finished: a --resume finished 10 more and "
        "ended before deciding again, so the gate counts them as missing (which cannot make it "
        "more lenient) and the metrics count all of them; resuming decides on every case",
    ]
    report = json.loads(oloproof("inspect", run_id, "--json", cwd=root).out)
    assert (report["decided_on"], report["cases"]) == (10, 20)
    assert (
        f"{run_id}, did not finish (20 of 30 cases;" in oloproof("inspect", "latest", cwd=root).err
    )
    # The cache counts went with the killed go: the Cache line says what it leaves out (it
    # claimed to count every case of the run), before and after the run is finished.
    uncounted = " (not counting the 10 cases a go that was killed wrote)"
    assert f"Cache: execution 0 hit/10 miss; judgment 0 hit/10 miss{uncounted}" in shown.lines
    finished = oloproof("run", "--resume", run_id, cwd=root, env={"HOLD": "none"})
    assert finished.code == 0, finished.out + finished.err
    assert f"Cache: execution 0 hit/20 miss; judgment 0 hit/20 miss{uncounted}" in finished.lines
    assert f"Cache: execution 0 hit/20 miss; judgment 0 hit/20 miss{uncounted}" in (
        oloproof("inspect", run_id, cwd=root).lines
    )
    with serving(root) as url:  # the viewer says it in the same words
        assert uncounted in fetch(f"{url}/runs/{run_id}")[1]
