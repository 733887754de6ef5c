"""The viewer's page of a case an interrupted run never reached says the run did not finish it.

As `inspect RUN --case ID` (tests/cli/test_inspect_case_not_run_said.py), the page of such a
case said `run … has no case 'c4'`, as for an id the run never planned or one mistyped. It says
the run holds no result for it, because the run did not finish it; an id the run never planned
is still no case of it. Through `oloproof view` on 127.0.0.1.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import quote

from tests.support import HELD_TOY_APP, HELD_TOY_CONFIG, interrupted_while_held, write_project
from tests.view.support import fetch, page_text, serving


def test_the_page_of_a_case_the_run_never_reached_says_so(tmp_path: Path) -> None:
    cases = [
        {"id": f"c{i}", "input": {"q": f"q{i}"}, "expected": {"answer": f"q{i}"}} for i in range(5)
    ]
    root = write_project(
        tmp_path / "p",
        app=HELD_TOY_APP,
        config=HELD_TOY_CONFIG,
        policy="version: 1\nrules:\n  - {id: floor, metric: echo, min: 0.05}\n",
        cases=cases,
    )
    run_id = interrupted_while_held(root, "holding\n", env={"HOLD": "q2"})
    with serving(root) as url:
        pages = {
            case: fetch(f"{url}/runs/{quote(run_id)}/cases/{case}") for case in ("c0", "c4", "c9")
        }
    status, page = pages["c4"]
    assert status == 404
    assert (
        f"run {run_id} holds no result for case 'c4': the run did not finish it (it was "
        "interrupted, or is still running; `oloproof runs` says which)"
    ) in page_text(page), page
    assert pages["c0"][0] == 200
    status, page = pages["c9"]
    assert status == 404 and f"run {run_id} has no case 'c9'" in page_text(page), page
