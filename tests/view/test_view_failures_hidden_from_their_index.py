"""The viewer reads a run's problem cases through the failures indexes (all of them, by kind,
by criterion). When one flipped byte hides a failing case there, the failures page said
"3 case(s)" of a run with 4 failing cases, and the comparison page left out a flip. Both now
refuse, naming the run and ``oloproof ledger rebuild-indexes``; after a rebuild the case is
shown again."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.ledger.tamper import hide_index_entry
from tests.support import TOY_APP, halves_project, oloproof
from tests.view.support import fetch, page_text, serving

from oloproof import events as ev
from oloproof.store import open_project_ledger

FAILING = 'return {"answer": "no" if case["q"] in ("x1", "x2", "x3", "x4") else case["q"]}'
HINT = "rebuild them with: oloproof ledger rebuild-indexes"


def _filed(root: Path, index: str, key: str) -> int:
    with open_project_ledger(root, create=False) as ledger:
        return len(ledger.lookup(index, key))


def _said(root: Path, path: str, run_id: str) -> str:
    with serving(root) as url:
        status, page = fetch(f"{url}{path}")
    shown = page_text(page).replace(f"{run_id} :", f"{run_id}:")  # the run id is a link
    return f"{status} {shown}"


@pytest.mark.parametrize(
    ("index", "suffix", "path"),
    [
        (ev.FAILURES, "", "/failures"),
        (ev.FAILURES_KIND, "/failed", "/failures?kind=failed"),
        (ev.FAILURES_CRITERION, "/failed/echo", "/failures?criterion=echo"),
    ],
)
def test_the_failures_page_refuses_a_case_hidden_from_its_index(
    tmp_path: Path, index: str, suffix: str, path: str
) -> None:
    root = halves_project(tmp_path / "p")
    (root / "app.py").write_text(TOY_APP.replace('return {"answer": case["q"]}', FAILING))
    run = oloproof("run", cwd=root)
    assert run.code in (0, 1, 3), run.err
    run_id = run.lines[0].split()[1]
    page = f"/runs/{run_id}{path}"
    assert "4 case(s)" in _said(root, page, run_id)
    key = run_id + suffix
    hide_index_entry(root / ".oloproof", index, key, lambda: _filed(root, index, key) == 3)

    said = _said(root, page, run_id)
    assert said.startswith("500 "), said
    assert (
        f"This page cannot be shown: the ledger's indexes disagree with run {run_id}: its "
        "failures index finds 3 of its 4 " in said
    ), said
    assert HINT in said, said

    assert oloproof("ledger", "rebuild-indexes", cwd=root).code == 0
    assert "4 case(s)" in _said(root, page, run_id)


def test_the_comparison_refuses_a_flip_hidden_from_the_failures_index(tmp_path: Path) -> None:
    root = halves_project(tmp_path / "p")
    baseline = oloproof("run", cwd=root)
    (root / "app.py").write_text(TOY_APP.replace('return {"answer": case["q"]}', FAILING))
    candidate = oloproof("run", cwd=root)
    assert {baseline.code, candidate.code} <= {0, 1, 3}, baseline.err + candidate.err
    base_id, cand_id = baseline.lines[0].split()[1], candidate.lines[0].split()[1]
    compared = oloproof("compare", cand_id, base_id, cwd=root)
    address = compared.lines[0].split()[1]
    page = f"/comparisons/{address}"
    assert "Changed cases: 0 improved, 4 regressed" in _said(root, page, cand_id)
    key = f"{cand_id}/failed/echo"
    hide_index_entry(
        root / ".oloproof",
        ev.FAILURES_CRITERION,
        key,
        lambda: _filed(root, ev.FAILURES_CRITERION, key) == 3,
    )

    said = _said(root, page, cand_id)
    assert said.startswith("500 "), said
    assert f"the ledger's indexes disagree with run {cand_id}: its failures index" in said, said
    assert oloproof("ledger", "rebuild-indexes", cwd=root).code == 0
    assert "Changed cases: 0 improved, 4 regressed" in _said(root, page, cand_id)
