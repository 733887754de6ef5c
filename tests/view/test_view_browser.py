"""The viewer in a real browser: Debian's Chromium, headless, driven through Playwright.

No browser is downloaded: Playwright drives /usr/bin/chromium (``make`` and ``.ci/run``
install it). Every wait is on what the page shows (Playwright's ``expect``), never a sleep. A
failing test leaves a screenshot of the page it was on (.pytest_cache/screenshots/), named in
its report.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect, sync_playwright
from tests.support import oloproof
from tests.view.support import ODD_IDS, OddIdsProject, SupportProject, serving

CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture
def page(tmp_path: Path) -> Iterator[Page]:
    if shutil.which(CHROMIUM) is None:
        pytest.fail(f"{CHROMIUM} is missing: `apt-get install -y chromium` (make does it)")
    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(tmp_path / "profile"),  # a fresh user data dir for each test
            executable_path=CHROMIUM,
            headless=True,
            args=ARGS,
            viewport={"width": 1280, "height": 900},
        )
        context.set_default_timeout(30_000)
        tab = context.new_page()
        try:
            yield tab  # a failure's screenshot is taken by conftest's report hook
        finally:
            context.close()


def test_from_the_runs_page_to_a_failed_case_its_diagnosis_and_a_child_run(
    page: Page, support_project: SupportProject, support_url: str
) -> None:
    p = support_project
    page.goto(support_url + "/")
    expect(page.get_by_role("heading", name="Runs")).to_be_visible()
    page.get_by_role("link", name=p.run_id, exact=True).click()
    expect(page.get_by_role("heading", level=1)).to_contain_text(p.run_id)
    expect(page.locator("table.rules")).to_contain_text("INSUFFICIENT_EVIDENCE")
    page.get_by_role("link", name="4 case(s) failed, errored or are missing a verdict").click()
    expect(page.locator("p.summary")).to_contain_text("4 case(s)")
    page.get_by_role("link", name="refund_review", exact=True).click()
    expect(page.get_by_role("heading", level=1)).to_contain_text("refund_review")
    expect(page.locator("table.ranking-table")).to_contain_text("token_budget")
    expect(page.locator(".verdict-row", has_text="answer_correct")).to_contain_text("failed")
    page.get_by_role("link", name="Diagnosis gold context").click()
    expect(page.locator("ul.counts")).to_contain_text("Recovered under gold context: 3 of 4")
    row = page.locator("table.diag-cases tr", has_text="refund_review")
    expect(row).to_contain_text("CONTEXT_ASSEMBLY_LOSS")
    page.get_by_role("link", name=p.gold_run, exact=True).click()
    expect(page.get_by_role("heading", level=1)).to_contain_text(p.gold_run)
    expect(page.locator("dl.facts")).to_contain_text("gold context")


def test_from_a_comparison_to_a_flipped_case_side_by_side(
    page: Page, support_project: SupportProject, support_url: str
) -> None:
    p = support_project
    page.goto(f"{support_url}/runs/{p.gold_run}")
    page.get_by_role("link", name=f"comparison of {p.gold_run} against {p.control_run}").click()
    expect(page.locator("table.diffs")).to_contain_text("3 fail→pass, 0 pass→fail")
    flipped = page.locator("table.flips tr", has_text="security_review")
    expect(flipped).to_contain_text("fail → pass")
    flipped.get_by_role("link", name="security_review").click()
    expect(page.get_by_role("heading", level=1)).to_contain_text("security_review")
    baseline, candidate = page.locator("article.side").all()
    expect(baseline).to_contain_text(f"Baseline: {p.control_run}")
    expect(candidate).to_contain_text(f"Candidate: {p.gold_run}")
    expect(baseline.locator(".verdict-row", has_text="answer_correct")).to_contain_text("failed")
    expect(candidate.locator(".verdict-row", has_text="answer_correct")).to_contain_text("passed")


def test_the_keyboard_reaches_and_follows_links(
    page: Page, support_project: SupportProject, support_url: str
) -> None:
    page.goto(support_url + "/")
    page.keyboard.press("Tab")
    expect(page.locator("a.skip")).to_be_focused()
    page.keyboard.press("Enter")  # skip to the content
    link = page.get_by_role("link", name=support_project.run_id, exact=True)
    link.focus()
    page.keyboard.press("Enter")
    expect(page.get_by_role("heading", level=1)).to_contain_text(support_project.run_id)


def test_a_hostile_output_stays_text_in_the_browser(
    page: Page, hostile_project: tuple[Path, str]
) -> None:
    root, run_id = hostile_project
    with serving(root) as url:
        page.goto(f"{url}/runs/{run_id}/cases/xss")
        expect(page.locator("pre.json").nth(0)).to_contain_text("<img src=x onerror=alert(1)>")
        expect(page.locator("main")).to_contain_text("<script>document.title = 'owned'</script>")
        assert page.title() != "owned"
        assert page.locator("main script, main img").count() == 0


def test_the_export_opens_from_disk(
    page: Page, support_project: SupportProject, tmp_path: Path
) -> None:
    p = support_project
    site = tmp_path / "site"
    assert oloproof("view", "--export", str(site), p.run_id, cwd=p.root).code == 0
    page.goto((site / "index.html").as_uri())
    page.get_by_role("link", name=p.run_id, exact=True).click()
    expect(page.locator("table.metrics")).to_contain_text("69.2%")
    page.get_by_role("link", name="answer_correct", exact=True).first.click()
    page.get_by_role("link", name="seat_count", exact=True).click()
    expect(page.get_by_role("heading", level=1)).to_contain_text("seat_count")


def test_every_case_id_opens_its_own_page_even_a_dot_segment(
    page: Page, odd_ids_project: OddIdsProject
) -> None:
    p = odd_ids_project
    with serving(p.root) as url:
        for listing in (f"/runs/{p.run_id}/failures", f"/comparisons/{p.comparison}"):
            for case_id in ODD_IDS:
                page.goto(url + listing)
                page.get_by_role("link", name=case_id, exact=True).click()
                expect(page.locator("h1 .id")).to_have_text(case_id)
                expect(page.locator("main").first).to_contain_text(f"<<{case_id}>>")
