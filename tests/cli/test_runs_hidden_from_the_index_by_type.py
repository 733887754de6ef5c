"""``oloproof runs`` and the viewer's list of runs read the runs through the ledger's index by
type. When one flipped byte hides a run's entry there, ``runs`` printed "no runs yet" (exit 0)
of a ledger holding a finished run, and the viewer's list left it out, while ``inspect RUN``
still read it through its id. Each run's id names its run event, so both now refuse, naming
the run and ``oloproof ledger rebuild-indexes``; after a rebuild the run is listed again."""

from __future__ import annotations

from pathlib import Path

from tests.ledger.raw import event_records, file_entries, tables, type_prefix
from tests.ledger.tamper import hide_index_entry
from tests.support import oloproof, toy_project
from tests.view.support import fetch, page_text, serving

from ledger import Event
from oloproof import events as ev
from oloproof.store import open_project_ledger


def _runs(root: Path) -> int:
    with open_project_ledger(root, create=False) as ledger:
        return len(ledger.lookup("type", ev.RUN))


def test_a_run_hidden_from_the_index_by_type_is_refused_not_left_out(tmp_path: Path) -> None:
    root = toy_project(tmp_path / "p", cases=2)
    run = oloproof("run", cwd=root)
    assert run.code in (0, 3), run.err
    run_id = run.lines[0].split()[1]
    hide_index_entry(root / ".oloproof", "type", ev.RUN, lambda: _runs(root) == 0)

    said = (
        f"the ledger's indexes disagree with run {run_id}: its run event is missing from the "
        "index of runs; rebuild them with: oloproof ledger rebuild-indexes"
    )
    for args in (("runs",), ("runs", "--json")):
        refused = oloproof(*args, cwd=root)
        assert (refused.code, refused.out) == (2, ""), refused.out
        assert refused.err.startswith(f"error: {said}"), refused.err
    with serving(root) as url:
        status, page = fetch(f"{url}/")
    shown = page_text(page).replace(f"{run_id} :", f"{run_id}:")  # the run id is a link
    assert status == 500 and f"This page cannot be shown: {said}" in shown, shown

    assert oloproof("ledger", "rebuild-indexes", cwd=root).code == 0
    listed = oloproof("runs", cwd=root)
    assert listed.code == 0 and listed.lines[0].startswith(run_id), listed.out
    with serving(root) as url:
        assert run_id in fetch(f"{url}/")[1]


def test_another_event_filed_as_a_run_is_refused_not_read_as_one(tmp_path: Path) -> None:
    """An extra entry filing a case result under runs: ``runs`` stopped with a traceback
    (``KeyError: 'dataset'``, exit 1); it now refuses, naming the event and the rebuild."""
    root = toy_project(tmp_path / "p", cases=2)
    assert oloproof("run", cwd=root).code in (0, 3)
    seq, digest, _ = next(
        r
        for r in event_records(root / ".oloproof")
        if Event.from_bytes(r[2]).type == ev.CASE_RESULT
    )
    with tables(root / ".oloproof") as (txn, dbs):
        file_entries(txn, dbs, seq, digest, [type_prefix(ev.RUN)])

    refused = oloproof("runs", cwd=root)
    assert (refused.code, refused.out) == (2, ""), refused.out + refused.err
    assert refused.err == (
        f"error: the ledger's index of runs lists sha256:{digest.hex()}, which is an "
        "oloproof.case_result event: rebuild the indexes with: oloproof ledger rebuild-indexes\n"
    )
    assert oloproof("ledger", "rebuild-indexes", cwd=root).code == 0
    assert oloproof("runs", cwd=root).code == 0
