"""The viewer finds a case's page by the case id (the ``run_case`` index). When one flipped
byte hides a case of a finished run from that index, while the run's failures page still lists
it, the case page answered 404 "run … holds no result for case 'money_back': the run did not
finish it (it was interrupted, or is still running …)", and ``view --export`` wrote part of the
site, then stopped with a traceback (exit 1). Both now refuse, naming the run and
``oloproof ledger rebuild-indexes``, the export before it writes anything (exit 2); after a
rebuild the page is shown again."""

from __future__ import annotations

from pathlib import Path

from tests.ledger.tamper import hide_index_entry
from tests.support import copy_example, oloproof
from tests.view.support import RUN_ID, fetch, page_text, serving

from oloproof import events as ev
from oloproof.metrics import case_result_of
from oloproof.store import open_project_ledger


def _hidden(root: Path, run_id: str, case_id: str) -> bool:
    with open_project_ledger(root, create=False) as ledger:
        return case_result_of(ledger, run_id, case_id) is None


def test_a_case_hidden_from_its_index_is_refused_not_called_unfinished(tmp_path: Path) -> None:
    root = copy_example("support_rag", tmp_path)
    run = oloproof("run", cwd=root)
    assert run.code == 3, run.err
    run_id = RUN_ID.findall(run.out)[0]
    case = f"/runs/{run_id}/cases/money_back"
    hide_index_entry(
        root / ".oloproof", ev.RUN_CASE, f"{run_id}/money_back",
        lambda: _hidden(root, run_id, "money_back"),
    )  # fmt: skip

    said = (
        f"the ledger's indexes disagree with run {run_id}: its index by case id misses 1 of "
        "its 13 cases; rebuild them with: oloproof ledger rebuild-indexes"
    )
    with serving(root) as url:
        listed = page_text(fetch(f"{url}/runs/{run_id}/failures")[1])
        status, page = fetch(url + case)
    assert "money_back" in listed
    shown = page_text(page).replace(f"{run_id} :", f"{run_id}:")  # the run id is a link
    assert (status, "did not finish" in shown) == (500, False), shown
    assert f"This page cannot be shown: {said}" in shown, shown
    site = tmp_path / "site"
    refused = oloproof("view", "--export", str(site), run_id, cwd=root)
    assert (refused.code, refused.out) == (2, ""), refused.out + refused.err
    assert refused.err.startswith(f"error: {said}"), refused.err
    assert not site.exists()

    assert oloproof("ledger", "rebuild-indexes", cwd=root).code == 0
    with serving(root) as url:
        status, page = fetch(url + case)
    assert status == 200, page
    exported = oloproof("view", "--export", str(site), run_id, cwd=root)
    assert exported.code == 0, exported.err
