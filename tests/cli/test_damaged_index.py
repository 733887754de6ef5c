"""Reads check before they decide: when one flipped byte in the LMDB file hides a case from a
run's index, ``inspect``, ``compare``, ``diagnose`` and ``export`` refuse and name
``oloproof ledger rebuild-indexes``, after which ``verify`` is clean and the reads agree again."""

from __future__ import annotations

from pathlib import Path

from tests.ledger.raw import tables
from tests.ledger.tamper import hide_index_entry
from tests.support import copy_example, oloproof

from ledger import open_ledger
from oloproof import events as ev
from oloproof.store import open_project_ledger

REBUILD = "rebuild them with: oloproof ledger rebuild-indexes"


def _case_count(root: Path, run_id: str) -> int:
    with open_project_ledger(root, create=False) as ledger:
        return sum(1 for _ in ledger.lookup_events("run_cases", run_id))


def test_reads_refuse_a_run_whose_index_disagrees_and_a_rebuild_mends_it(
    tmp_path: Path,
) -> None:
    root = copy_example("support_rag", tmp_path)
    baseline = oloproof("run", cwd=root)
    candidate = oloproof("run", cwd=root)
    assert {baseline.code, candidate.code} <= {0, 1, 3}, baseline.err + candidate.err
    base_id, cand_id = baseline.lines[0].split()[1], candidate.lines[0].split()[1]
    healthy = oloproof("inspect", cand_id, cwd=root)
    assert healthy.code == 0, healthy.err
    before = _case_count(root, cand_id)
    hide_index_entry(
        root / ".oloproof", "run_cases", cand_id, lambda: _case_count(root, cand_id) == before - 1
    )

    refusal = (
        f"error: the ledger's indexes disagree with run {cand_id}: its end record counts 13 "
        f"cases (0 errored), its index finds 12 (0 errored); {REBUILD} (if they still "
        "disagree, the ledger lacks some of the run's events: oloproof verify lists them)\n"
    )
    for args in (
        ["inspect", cand_id],
        ["inspect", cand_id, "--failures"],
        ["inspect", cand_id, "--case", "faq-001"],
        ["export", cand_id],
        ["compare", cand_id, base_id, "--policy", "compare.yaml"],
        ["compare", base_id, cand_id],
        ["diagnose", cand_id, "--intervention", "gold-context", "--criterion", "answer_correct"],
    ):
        result = oloproof(*args, cwd=root)
        assert (result.code, result.err) == (2, refusal), args
    with open_ledger(root / ".oloproof") as ledger:
        assert not list(ledger.events(ev.COMPARISON))
        assert not list(ledger.events(ev.DIAGNOSIS))

    damaged = oloproof("verify", cwd=root)
    assert damaged.code == 1
    assert damaged.lines[0].startswith("stale index run_cases: 1 entry missing")
    assert f"the indexes are derived from the events: {REBUILD}" in damaged.lines
    rebuilt = oloproof("ledger", "rebuild-indexes", cwd=root)
    assert rebuilt.code == 0, rebuilt.err
    assert rebuilt.lines[-1].startswith("rebuilt the indexes from ")
    clean = oloproof("verify", cwd=root)
    assert clean.code == 0, clean.out + clean.err
    assert oloproof("inspect", cand_id, cwd=root).out == healthy.out


def test_an_unreadable_run_directory_is_refused_named_and_rebuilt(tmp_path: Path) -> None:
    root = copy_example("support_rag", tmp_path)
    first = oloproof("run", cwd=root)
    assert first.code in (0, 1, 3), first.err
    healthy = oloproof("inspect", "latest", cwd=root)
    with tables(root / ".oloproof") as (txn, dbs):
        txn.put(b"runs", b"\xa1\x64next\x00", db=dbs[b"meta"])  # a map with no runs in it

    where = root / ".oloproof"
    said = f"the indexes of the ledger at {where} cannot be read: its run directory is unreadable"
    for args in (["runs"], ["inspect", "latest"], ["export", "latest"]):
        refused = oloproof(*args, cwd=root)
        assert (refused.code, refused.err) == (
            2,
            f"error: {said} (`oloproof ledger rebuild-indexes` rebuilds them now)\n",
        ), args
    damaged = oloproof("verify", cwd=root)
    assert damaged.code == 1
    assert damaged.lines[:3] == [
        f"stale index runs: {said}",
        "note: links, refs and index entries were not checked: the run directory is unreadable",
        "note: the program's own checks were not run: they read the indexes",
    ], damaged.out
    assert f"the indexes are derived from the events: {REBUILD}" in damaged.lines
    assert oloproof("ledger", "rebuild-indexes", cwd=root).code == 0
    assert oloproof("verify", cwd=root).code == 0
    assert oloproof("inspect", "latest", cwd=root).out == healthy.out
