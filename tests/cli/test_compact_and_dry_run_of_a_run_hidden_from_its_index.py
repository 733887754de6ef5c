"""``oloproof ledger compact`` and ``oloproof run --dry-run`` found the runs through the
ledger's index by type unchecked. With one flipped byte hiding the older of two runs' entry
there, ``compact --keep-last 2`` kept the newest alone and dropped every event of the other,
and ``run --dry-run`` of a system whose code changed said its cases would execute because of
"no earlier run of this system" of a ledger holding one. Both now
refuse, naming the run and ``oloproof ledger rebuild-indexes``, and nothing is dropped."""

from __future__ import annotations

from pathlib import Path

from tests.ledger.raw import event_records, file_entries, tables, type_prefix
from tests.ledger.tamper import hide_index_entry
from tests.support import oloproof, toy_project

from ledger import Event
from oloproof import events as ev
from oloproof.store import open_project_ledger


def _runs(root: Path) -> int:
    with open_project_ledger(root, create=False) as ledger:
        return len(ledger.lookup("type", ev.RUN))


def _refusal(run_id: str) -> str:
    return (
        f"error: the ledger's indexes disagree with run {run_id}: its run event is missing "
        "from the index of runs; rebuild them with: oloproof ledger rebuild-indexes"
    )


def test_compact_refuses_rather_than_drop_a_run_hidden_from_the_index(tmp_path: Path) -> None:
    root = toy_project(tmp_path / "p", cases=2)
    older = oloproof("run", cwd=root)
    assert older.code in (0, 3), older.err
    run_id = older.lines[0].split()[1]
    assert oloproof("run", "--no-cache", cwd=root).code in (0, 3)
    hide_index_entry(root / ".oloproof", "type", ev.RUN, lambda: _runs(root) == 1)

    refused = oloproof("ledger", "compact", "--keep-last", "2", cwd=root)
    assert (refused.code, refused.out) == (2, ""), refused.out + refused.err
    assert refused.err.startswith(_refusal(run_id)), refused.err
    assert oloproof("ledger", "rebuild-indexes", cwd=root).code == 0
    assert oloproof("inspect", run_id, cwd=root).code in (0, 3)
    assert oloproof("ledger", "compact", "--keep-last", "2", cwd=root).code == 0
    assert oloproof("inspect", run_id, cwd=root).code in (0, 3)


def test_compact_refuses_another_event_filed_as_a_run(tmp_path: Path) -> None:
    root = toy_project(tmp_path / "p", cases=2)
    assert oloproof("run", cwd=root).code in (0, 3)
    seq, digest, _ = next(
        r
        for r in event_records(root / ".oloproof")
        if Event.from_bytes(r[2]).type == ev.CASE_RESULT
    )
    with tables(root / ".oloproof") as (txn, dbs):
        file_entries(txn, dbs, seq, digest, [type_prefix(ev.RUN)])

    refused = oloproof("ledger", "compact", "--keep-last", "1", cwd=root)
    assert (refused.code, refused.out) == (2, ""), refused.out + refused.err
    assert refused.err == (
        f"error: the ledger's index of runs lists sha256:{digest.hex()}, which is an "
        "oloproof.case_result event: rebuild the indexes with: oloproof ledger rebuild-indexes\n"
    )


def test_dry_run_refuses_rather_than_forget_a_run_hidden_from_the_index(tmp_path: Path) -> None:
    root = toy_project(tmp_path / "p", cases=2)
    run = oloproof("run", cwd=root)
    assert run.code in (0, 3), run.err
    run_id = run.lines[0].split()[1]
    hide_index_entry(root / ".oloproof", "type", ev.RUN, lambda: _runs(root) == 0)
    app = root / "app.py"
    app.write_text(app.read_text().replace('case["q"]', 'case["q"].strip()'))

    refused = oloproof("run", "--dry-run", cwd=root)
    assert (refused.code, refused.out) == (2, ""), refused.out + refused.err
    assert refused.err.startswith(_refusal(run_id)), refused.err
    assert oloproof("ledger", "rebuild-indexes", cwd=root).code == 0
    dry = oloproof("run", "--dry-run", cwd=root)
    assert dry.code == 0 and "code of run() in app.py changed" in dry.out, dry.out
