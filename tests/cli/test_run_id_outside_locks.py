"""A run id read from the ledger names files: the run's lock (``.oloproof/locks/RUN_ID.lock``),
its bundle (``.oloproof/bundles/RUN_ID/``) and the default folder of `export --format`. An id
holding ``/`` and ``..`` (from an imported archive: its events are checked against their
addresses, not against what a run id may be) made `run --resume`, which `runs` suggests for
such a run, create folders outside the ledger, write a file there and remove it (an existing
``x.lock`` of the user's was emptied, then deleted), and `export` write its bundle there.

Now every command that reads such a run refuses it before anything is written, in one
sentence, exit 2; and `runs`, which looks for a run's writer through its lock file, reads
nothing outside the ledger.
"""

from __future__ import annotations

from pathlib import Path

from tests.support import answered_project, oloproof

from oloproof import events as ev
from oloproof.store import open_project_ledger

APP = "def answer(case):\n    return {'answer': case['q']}\n"
HOSTILE = "run_/../../../../victim/x"


def test_a_run_id_that_climbs_out_of_the_locks_folder_is_refused(tmp_path: Path) -> None:
    source = answered_project(tmp_path / "source", APP)
    assert oloproof("run", cwd=source).code == 0
    with open_project_ledger(source, create=False) as ledger:
        ((_, run),) = list(ledger.events(ev.RUN))
    crafted = answered_project(tmp_path / "crafted", APP)
    with open_project_ledger(crafted) as ledger:  # an interrupted run, under another id
        ledger.put(ev.make(ev.RUN, {**run.body, "run_id": HOSTILE}))
    exported = oloproof("ledger", "export", "--all", "--to", "../run.oloarchive", cwd=crafted)
    assert exported.code == 0, exported.err
    target = answered_project(tmp_path / "project", APP)
    imported = oloproof("ledger", "import", "../run.oloarchive", cwd=target)
    assert imported.code == 0, imported.err
    victim = tmp_path / "victim" / "x.lock"
    victim.parent.mkdir()
    victim.write_text("the user's\n")

    listed = oloproof("runs", cwd=target)
    assert listed.code == 0 and listed.out.startswith(f"{HOSTILE}  "), listed.err
    refused = [
        oloproof("run", "--resume", HOSTILE, cwd=target),
        oloproof("export", HOSTILE, cwd=target),
        oloproof("export", HOSTILE, "--format", "jsonl", cwd=target),
    ]

    with open_project_ledger(target, create=False) as ledger:
        ((address, _),) = list(ledger.events(ev.RUN))
        assert len(ledger) == 1
    for done in refused:
        assert (done.code, done.out) == (2, ""), done.out
        assert done.err == (
            f"error: run event {address} names its run {HOSTILE!r}, which is not a run id: it "
            "is not read as a run\n"
        )
    assert victim.read_text() == "the user's\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "crafted",
        "project",
        "run.oloarchive",
        "source",
        "victim",
    ]
    assert sorted(p.name for p in (tmp_path / "victim").iterdir()) == ["x.lock"]
    assert sorted(p.name for p in (target / ".oloproof").iterdir()) == ["ledger"]
    assert sorted(p.name for p in target.iterdir() if p.name != "__pycache__") == [
        ".oloproof",
        "app.py",
        "cases.jsonl",
        "oloproof.yaml",
        "policy.yaml",
    ]
