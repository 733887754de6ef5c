"""A comparison page says why its metric's pairs are missing or excluded, as ``compare`` does.

The probe: a candidate that recorded no citations on 40 of 240 cases (the baseline on 20 of
them too). ``compare`` printed ``200 paired · 20 missing · 20 excluded``, then "the interval
counts the 20 missing against the candidate …; the 200 paired alone give [...]", ``missing 20:
no_citations_recorded in the candidate`` and ``excluded 20: no_citations_recorded``. The
viewer's page, in a browser and exported, showed the counts and the widened interval alone:
nothing said the interval counted the missing pairs against the candidate, nor why 20 pairs
were missing (one run's output alone) and 20 excluded (both). Each line is now on the page,
checked here against ``compare --json``, not against the viewer's own code.
"""

from __future__ import annotations

import math
from pathlib import Path

from playwright.sync_api import Page, expect
from tests.cli.test_compare_output_exclusions_missing import CITER, _compared
from tests.support import oloproof
from tests.view.support import serving
from tests.view.test_view_browser import page  # noqa: F401  (the browser fixture)


def _interval(lower: float, upper: float) -> str:
    """An interval in points to 0.1, rounded outward (no bound here is near a margin)."""
    return f"[{math.floor(lower * 1000) / 10:+.1f}, {math.ceil(upper * 1000) / 10:+.1f}]"


def test_the_page_says_how_missing_and_excluded_pairs_count(tmp_path: Path, page: Page) -> None:  # noqa: F811
    code, as_json, _ = _compared(tmp_path, broken=40, both=20, probe=CITER)
    assert code == 3
    root = tmp_path / "p"
    (row,) = as_json["metrics"]  # type: ignore[misc]
    diff = row["difference"]
    assert row["missing_reasons"] == {"no_citations_recorded in the candidate": 20}
    assert row["excluded_reasons"] == {"no_citations_recorded": 20}
    expected = [
        f"{row['paired']} paired · {row['missing']} missing · {row['excluded']} excluded",
        _interval(diff["lower"], diff["upper"]),
        f"The interval counts the {row['missing']} missing against the candidate (lower bound) "
        f"and for it (upper bound); the {row['paired']} paired alone give "
        f"{_interval(diff['observed_lower'], diff['observed_upper'])}.",
        *(f"missing {n}: {r}" for r, n in row["missing_reasons"].items()),
        *(f"excluded {n}: {r}" for r, n in row["excluded_reasons"].items()),
    ]
    address = str(as_json["address"])
    runs = (as_json["candidate"]["run_id"], as_json["baseline"]["run_id"])  # type: ignore[index]
    site = tmp_path / "site"
    exported = oloproof("view", "--export", str(site), *runs, cwd=root)
    assert exported.code == 0, exported.out + exported.err
    (exported_page,) = (site / "comparisons").glob("*/index.html")
    with serving(root) as url:
        for shown in (f"{url}/comparisons/{address}", exported_page.as_uri()):
            page.goto(shown)
            metric_row = page.get_by_role("row").filter(has_text=row["metric"]).first
            for text in expected:
                expect(metric_row).to_contain_text(text)
