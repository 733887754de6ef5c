"""A run's page says how a metric's interval counts its missing cases, as `run` prints it.

The probe: 30 cases, 5 of whose system calls raise. `run` printed under its metrics table
`echo: 5 missing: 5 execution_errored` and `the interval counts them as failing for the lower
bound and passing for the upper; the 25 observed alone give [86.3%, 100.0%]`. The run's page
showed the reason but not how the wide interval beside it was made, nor what the observed
cases alone give. It now shows the same line, in a browser and exported.
"""

from __future__ import annotations

from pathlib import Path

from playwright.sync_api import Page, expect
from tests.support import TOY_CONFIG, TOY_POLICY, oloproof, write_project
from tests.view.support import serving
from tests.view.test_view_browser import page  # noqa: F401  (the browser fixture)

APP = """
from oloproof import system

@system(name="toy", version="1")
def run(case):
    if case["q"].startswith("boom"):
        raise RuntimeError("upstream down")
    return {"answer": case["q"]}
"""


def test_the_run_page_says_how_missing_cases_count(tmp_path: Path, page: Page) -> None:  # noqa: F811
    cases = [
        {
            "id": f"c{i}",
            "input": {"q": f"boom{i}" if i < 5 else f"q{i}"},
            "expected": {"answer": "q"},
        }
        for i in range(30)
    ]
    root = write_project(tmp_path / "p", app=APP, config=TOY_CONFIG, policy=TOY_POLICY, cases=cases)
    done = oloproof("run", cwd=root)
    assert done.code in (0, 3), done.out + done.err
    (line,) = [line.strip() for line in done.lines if line.startswith("  the interval counts")]
    assert line.startswith(
        "the interval counts them as failing for the lower bound and passing for the upper; "
        "the 25 observed alone give ["
    ), line
    run_id = done.lines[0].split()[1]
    site = tmp_path / "site"
    exported = oloproof("view", "--export", str(site), run_id, cwd=root)
    assert exported.code == 0, exported.out + exported.err
    with serving(root) as url:
        for shown in (f"{url}/runs/{run_id}", (site / "runs" / run_id / "index.html").as_uri()):
            page.goto(shown)
            metric_row = page.get_by_role("row").filter(has_text="echo").filter(has_text="observed")
            expect(metric_row.first).to_contain_text(line)
