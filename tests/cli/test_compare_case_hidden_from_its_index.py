"""A comparison finds each case in the other run by its id (the ``run_case`` index). When one
flipped byte hides a case of one run from that index, while the run's own list of cases still
holds it, ``compare`` refuses, naming that run and ``oloproof ledger rebuild-indexes``, rather
than record the case as held by the other run only (it printed ``not paired 1: only in
candidate (c2)`` and exited 0); after a rebuild it pairs every case again. The flips of a
comparison recorded before the damage are read the same way: ``inspect --json`` refuses too,
rather than list no flip for a case whose regression the comparison counts."""

from __future__ import annotations

import json
from pathlib import Path

from tests.ledger.tamper import hide_index_entry
from tests.support import TOY_APP, halves_project, oloproof, toy_project

from ledger import open_ledger
from oloproof import events as ev
from oloproof.metrics import case_result_of
from oloproof.store import open_project_ledger


def _hidden(root: Path, run_id: str, case_id: str) -> bool:
    with open_project_ledger(root, create=False) as ledger:
        return case_result_of(ledger, run_id, case_id) is None


def test_compare_refuses_a_run_whose_index_by_case_hides_one(tmp_path: Path) -> None:
    root = toy_project(tmp_path / "p", cases=3)
    baseline, candidate = oloproof("run", cwd=root), oloproof("run", cwd=root)
    assert {baseline.code, candidate.code} <= {0, 3}, baseline.err + candidate.err
    base_id, cand_id = baseline.lines[0].split()[1], candidate.lines[0].split()[1]
    hide_index_entry(
        root / ".oloproof", ev.RUN_CASE, f"{base_id}/c2", lambda: _hidden(root, base_id, "c2")
    )

    refusal = (
        f"error: the ledger's indexes disagree with run {base_id}: its index by case id "
        f"misses 1 of the cases run {cand_id} holds too; rebuild them with: oloproof ledger "
        "rebuild-indexes (if they still disagree, the ledger lacks some of the run's events: "
        "oloproof verify lists them)\n"
    )
    for args in (["compare", cand_id, base_id], ["compare", base_id, cand_id]):
        refused = oloproof(*args, cwd=root)
        assert (refused.code, refused.out, refused.err) == (2, "", refusal), args
    with open_ledger(root / ".oloproof") as ledger:
        assert not list(ledger.events(ev.COMPARISON))

    assert oloproof("ledger", "rebuild-indexes", cwd=root).code == 0
    compared = oloproof("compare", cand_id, base_id, cwd=root)
    assert compared.code == 0, compared.err
    assert compared.lines[0].endswith(f"against {base_id} · 3 paired cases")
    assert "not paired" not in compared.out
    assert oloproof("verify", cwd=root).code == 0


def test_the_flips_of_a_comparison_are_refused_once_a_case_is_hidden(tmp_path: Path) -> None:
    root = halves_project(tmp_path / "p")
    baseline = oloproof("run", cwd=root)
    regressed = 'return {"answer": "no" if case["q"] == "x2" else case["q"]}'
    (root / "app.py").write_text(TOY_APP.replace('return {"answer": case["q"]}', regressed))
    candidate = oloproof("run", cwd=root)
    assert {baseline.code, candidate.code} <= {0, 3}, baseline.err + candidate.err
    base_id, cand_id = baseline.lines[0].split()[1], candidate.lines[0].split()[1]
    compared = oloproof("compare", cand_id, base_id, cwd=root)
    assert compared.code == 0, compared.err
    address = compared.lines[0].split()[1]
    healthy = oloproof("inspect", address, "--json", cwd=root)
    assert [f["case_id"] for f in json.loads(healthy.out)["flipped"]] == ["c2"]
    hide_index_entry(
        root / ".oloproof", ev.RUN_CASE, f"{base_id}/c2", lambda: _hidden(root, base_id, "c2")
    )

    refused = oloproof("inspect", address, "--json", cwd=root)
    assert (refused.code, refused.out) == (2, ""), refused.out
    assert refused.err.startswith(
        f"error: the ledger's indexes disagree with run {base_id}: its index by case id "
        f"misses 1 of the cases run {cand_id} holds too; rebuild them with: "
    )
    assert oloproof("ledger", "rebuild-indexes", cwd=root).code == 0
    assert oloproof("inspect", address, "--json", cwd=root).out == healthy.out
