"""``oloproof ledger compact`` and ``oloproof run --dry-run`` found the runs through the
ledger's index by type unchecked. With one flipped byte hiding the older of two runs' entry
there, ``compact --keep-last 2`` kept the newest alone and dropped every event of the other,
and ``run --dry-run`` of a system whose code changed said its cases would execute because of
"no earlier run of this system" of a ledger holding one. Both now
refuse, naming ``oloproof ledger rebuild-indexes``, and nothing is dropped. Compaction refuses
any index that disagrees with the events before it chooses anything: a comparison or a run's
decision hidden from its index was dropped for good as well (``0 of 0 comparisons``, exit 0)."""

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


def _not_compacted(root: Path) -> str:
    return (
        f"error: the ledger at {root / '.oloproof'} was not compacted: its indexes disagree with "
        "its events (stale index "
    )


def _compact_refused(root: Path) -> None:
    """``compact --keep-last 2`` refuses, naming ``rebuild-indexes``, and leaves the ledger
    as it was; after a rebuild it compacts."""
    before = (root / ".oloproof" / "ledger" / "data.mdb").read_bytes()
    refused = oloproof("ledger", "compact", "--keep-last", "2", cwd=root)
    assert (refused.code, refused.out) == (2, ""), refused.out + refused.err
    assert refused.err.startswith(_not_compacted(root)), refused.err
    assert refused.err.endswith(
        "rebuild them with: oloproof ledger rebuild-indexes, then compact it\n"
    ), refused.err
    assert (root / ".oloproof" / "ledger" / "data.mdb").read_bytes() == before
    assert oloproof("ledger", "rebuild-indexes", cwd=root).code == 0
    assert oloproof("ledger", "compact", "--keep-last", "2", cwd=root).code == 0


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

    _compact_refused(root)
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

    _compact_refused(root)


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


def _held(root: Path, kind: str) -> int:
    with open_project_ledger(root, create=False) as ledger:
        return len(ledger.lookup("type", kind))


def test_compact_refuses_rather_than_drop_a_comparison_hidden_from_the_index(
    tmp_path: Path,
) -> None:
    root = toy_project(tmp_path / "p", cases=2)
    runs = [oloproof("run", "--no-cache", cwd=root) for _ in range(2)]
    base, cand = (run.lines[0].split()[1] for run in runs)
    assert oloproof("compare", cand, base, cwd=root).code == 0
    assert _held(root, ev.COMPARISON) == 1
    hide_index_entry(
        root / ".oloproof", "type", ev.COMPARISON, lambda: _held(root, ev.COMPARISON) == 0
    )

    _compact_refused(root)  # was: "0 of 0 comparisons", exit 0, the comparison gone
    assert _held(root, ev.COMPARISON) == 1


def test_compact_refuses_rather_than_drop_a_decision_hidden_from_the_index(
    tmp_path: Path,
) -> None:
    root = toy_project(tmp_path / "p", cases=2)
    run = oloproof("run", cwd=root)
    run_id = run.lines[0].split()[1]

    def undecided() -> bool:
        with open_project_ledger(root, create=False) as ledger:
            kinds = [event.type for _, event in ledger.lookup_events("run_meta", run_id)]
        return ev.DECISION not in kinds

    hide_index_entry(root / ".oloproof", "run_meta", run_id, undecided, 1)

    _compact_refused(root)  # was: the decision not kept, the run kept without its gate
    assert _held(root, ev.DECISION) == 1
