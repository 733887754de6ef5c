"""A run with a policy writes its decision in the commit that writes its end record, and reads
find both through the run's ``run_meta`` index. When one flipped byte hides the decision's
entry, ``inspect RUN`` printed "[UNDECIDED/COMPLETE] No gate: the run ended before its policy
was decided" of a run whose gate blocked (exit 1), ``runs`` listed it as "no gate (not decided)" and
``export`` wrote it (exit 0). They now refuse, naming the run and ``oloproof ledger
rebuild-indexes``; after a rebuild the gate is shown again."""

from __future__ import annotations

from pathlib import Path

from tests.ledger.tamper import hide_index_entry
from tests.support import oloproof, toy_project

from oloproof import events as ev
from oloproof.store import open_project_ledger
from oloproof.stored_runs import latest_decision

BLOCKING = "version: 1\nrules:\n  - {id: floor, metric: echo, min: 0.9}\n"


def _undecided(root: Path, run_id: str) -> bool:
    with open_project_ledger(root, create=False) as ledger:
        return latest_decision(ledger, run_id) is None


def test_a_decision_hidden_from_its_index_is_refused_not_read_as_none(tmp_path: Path) -> None:
    root = toy_project(tmp_path / "p", policy=BLOCKING, cases=2)
    (root / "app.py").write_text((root / "app.py").read_text().replace('case["q"]', '"no"'))
    run = oloproof("run", cwd=root)
    assert run.code == 1, run.out + run.err
    run_id = run.lines[0].split()[1]
    with open_project_ledger(root, create=False) as ledger:
        kinds = [event.type for _, event in ledger.lookup_events("run_meta", run_id)]
    assert kinds == [ev.RUN_END, ev.DECISION]
    hide_index_entry(root / ".oloproof", "run_meta", run_id, lambda: _undecided(root, run_id), 1)

    refusal = (
        f"error: the ledger's indexes disagree with run {run_id}: its index finds its end record "
        "but not the decision written with it; rebuild them with: oloproof ledger "
        "rebuild-indexes (if they still disagree, the ledger lacks some of the run's events: "
        "oloproof verify lists them)\n"
    )
    for args in (("inspect", run_id), ("inspect", run_id, "--json"), ("runs",), ("export", run_id)):
        refused = oloproof(*args, cwd=root)
        assert (refused.code, refused.out, refused.err) == (2, "", refusal), args

    assert oloproof("ledger", "rebuild-indexes", cwd=root).code == 0
    shown = oloproof("inspect", run_id, cwd=root)
    assert shown.code == 0 and "Gate: BLOCK (exit 1)" in shown.out, shown.out
    assert "BLOCK (exit 1)" in oloproof("runs", cwd=root).out
