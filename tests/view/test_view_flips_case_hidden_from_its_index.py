"""The viewer finds a comparison's flips among each run's failing cases, and each one's
counterpart by its id (the ``run_case`` index). When one flipped byte hides a case from that
index in either run, the served comparison page and ``view --export`` refuse, naming the run
and ``oloproof ledger rebuild-indexes``, as ``inspect`` of the comparison does; they showed
"Changed cases: 0 improved, 0 regressed" beside counts that hold the regression of c2. After a
rebuild the flip is listed again."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.ledger.tamper import hide_index_entry
from tests.support import TOY_APP, halves_project, oloproof
from tests.view.support import fetch, page_text, serving

from oloproof import events as ev
from oloproof.metrics import case_result_of
from oloproof.store import open_project_ledger

REGRESSED = 'return {"answer": "no" if case["q"] == "x2" else case["q"]}'


def _hidden(root: Path, run_id: str, case_id: str) -> bool:
    with open_project_ledger(root, create=False) as ledger:
        return case_result_of(ledger, run_id, case_id) is None


def _flip_listed(root: Path, address: str) -> bool:
    with serving(root) as url:
        status, page = fetch(f"{url}/comparisons/{address}")
    assert status == 200, page
    text = page_text(page)
    assert "Changed cases:" in text, text
    return "Changed cases: 0 improved, 1 regressed" in text


@pytest.mark.parametrize("side", ["baseline", "candidate"])
def test_the_viewer_refuses_flips_once_a_case_is_hidden_from_its_index(
    tmp_path: Path, side: str
) -> None:
    root = halves_project(tmp_path / "p")
    baseline = oloproof("run", cwd=root)
    (root / "app.py").write_text(TOY_APP.replace('return {"answer": case["q"]}', REGRESSED))
    candidate = oloproof("run", cwd=root)
    assert {baseline.code, candidate.code} <= {0, 3}, baseline.err + candidate.err
    base_id, cand_id = baseline.lines[0].split()[1], candidate.lines[0].split()[1]
    compared = oloproof("compare", cand_id, base_id, cwd=root)
    assert compared.code == 0, compared.err
    address = compared.lines[0].split()[1]
    assert _flip_listed(root, address)
    damaged = base_id if side == "baseline" else cand_id
    hide_index_entry(
        root / ".oloproof", ev.RUN_CASE, f"{damaged}/c2", lambda: _hidden(root, damaged, "c2")
    )

    said = (
        f"the ledger's indexes disagree with run {damaged}: its index by case id misses case "
        "'c2', which"
    )
    hint = "rebuild them with: oloproof ledger rebuild-indexes"
    with serving(root) as url:
        status, page = fetch(f"{url}/comparisons/{address}")
    assert status == 500, page
    shown = page_text(page).replace(f"{damaged} :", f"{damaged}:")  # the run id is a link
    assert f"This page cannot be shown: {said}" in shown and hint in shown, shown
    site = tmp_path / "site"
    refused = oloproof("view", "--export", str(site), cand_id, base_id, cwd=root)
    assert (refused.code, refused.out) == (2, ""), refused.out + refused.err
    # The export checks each run's index by case id before it reads a comparison.
    checked = f"error: the ledger's indexes disagree with run {damaged}: its index by case id "
    assert refused.err.startswith(f"{checked}misses 1 of its 10 cases; {hint}"), refused.err
    assert not site.exists()

    assert oloproof("ledger", "rebuild-indexes", cwd=root).code == 0
    assert _flip_listed(root, address)
    exported = oloproof("view", "--export", str(site), cand_id, base_id, cwd=root)
    assert exported.code == 0, exported.err
