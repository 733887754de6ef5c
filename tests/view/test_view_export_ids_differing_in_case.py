"""A static export gives every case a page file of its own, on any disk.

An exported case page was named by its id when the id was plainly safe: ``c1`` and ``C1`` were
written as ``cases/c1.html`` and ``cases/C1.html``, one file on a case-insensitive file system
(macOS, Windows), where the second written replaced the first and both links opened it: one
case shown as the other. A name holding a capital letter is now a digest of it; those without
keep their readable names. And a comparison's side-by-side page of a case named ``index`` was
``comparisons/ADDRESS/index.html``, the comparison's own page: one replaced the other. The
side-by-side pages are now in the comparison's ``cases/`` folder, as they are when served.
Checked here by the names the export writes and by what each page shows.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.support import oloproof, write_project
from tests.view.support import ODD_APP, page_text
from tests.view.test_view_pages import _links

IDS = ["c1", "C1", "index", "money_back"]
CONFIG = """\
system: {name: odd, version: "1", callable: app:run}
dataset: cases.jsonl
evaluators:
  - {type: contains, criterion: answered, field: answer, expected_field: answer}
"""


def test_every_case_has_a_page_file_of_its_own(tmp_path: Path) -> None:
    cases = [{"id": i, "input": {"q": f"<<{i}>>"}, "expected": {"answer": "yes"}} for i in IDS]
    root = write_project(tmp_path / "p", app=ODD_APP, config=CONFIG, policy="", cases=cases)
    failing = json.loads(oloproof("run", "--json", cwd=root).out)["run_id"]
    passing = oloproof("run", "--json", "--no-cache", cwd=root, env={"ANSWER_YES": "1"})
    passing_id = json.loads(passing.out)["run_id"]
    assert oloproof("compare", passing_id, failing, cwd=root).code == 0
    site = tmp_path / "site"
    assert oloproof("view", "--export", str(site), failing, passing_id, cwd=root).code == 0

    pages = sorted(p.name for p in (site / "runs" / failing / "cases").iterdir())
    # Was: C1.html beside c1.html, one file where the disk ignores case.
    assert len({name.casefold() for name in pages}) == len(pages) == len(IDS), pages
    assert {"c1.html", "index.html", "money_back.html"} <= set(pages)

    (comparison,) = site.glob("comparisons/*/index.html")
    # Was: the side-by-side page of the case "index" written over the comparison's own page.
    assert "Comparison" in page_text(comparison.read_text())
    listed = site / "runs" / failing / "failures" / "all-1.html"
    for page, prefix in ((listed, "../cases/"), (comparison, "cases/")):
        files = _links(page.read_text(), prefix)
        assert sorted(files) == sorted(IDS), files
        for case_id in IDS:
            shown = page_text((page.parent / files[case_id]).read_text())
            assert f"<<{case_id}>>" in shown, (page, case_id)
            assert not [i for i in IDS if i != case_id and f"<<{i}>>" in shown], (page, case_id)
