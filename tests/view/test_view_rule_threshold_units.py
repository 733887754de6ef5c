"""A rule's threshold on the run page is written in the units of the interval beside it.

The probe: floors on ``hit_rate_at_1`` (a proportion: ``min: 0.2`` and ``min: 0.6925``) and on
``mrr_at_3`` (a mean: ``min: 0.5``). The run page's gate table wrote ``[40.7%, 59.3%] vs min
0.2``: an interval in percent beside a threshold that reads as 0.2%, which it clears by far
while the rule reads 20%. ``run`` and ``inspect`` print no threshold; where the CLI prints one
beside a rate (a judge's ``needs 80.0%``) it is in percent. The page now writes ``vs min
20.0%``, a proportion's threshold in percent as the policy gave it, never rounded (``min
69.25%``, not ``69.3%``, which a lower bound of 69.26% would print below), and a mean's to the
mean's precision (``vs min 0.500``).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.support import oloproof
from tests.view.test_view_rule_interval_units import ranked_project

POLICY = """version: 1
rules:
  - {id: mrr-floor, metric: mrr_at_3, min: 0.5}
  - {id: hit-floor, metric: hit_rate_at_1, min: 0.2}
  - {id: hit-high, metric: hit_rate_at_1, min: 0.6925}
"""


def test_each_threshold_is_in_its_intervals_units(tmp_path: Path) -> None:
    root = ranked_project(tmp_path / "p", POLICY)
    done = oloproof("run", "--json", cwd=root)
    assert done.code in (1, 3), done.out + done.err
    run_id = json.loads(done.out)["run_id"]
    site = tmp_path / "site"
    exported = oloproof("view", "--export", str(site), run_id, cwd=root)
    assert exported.code == 0, exported.out + exported.err
    html = (site / "runs" / run_id / "index.html").read_text()
    row = r'<tr><th scope="row">([a-z-]+)</th>(?:(?!<tr>).)*?\] vs ([^<]*)</span>'
    shown = dict(re.findall(row, html, re.DOTALL))
    # Was: min 0.5, min 0.2 and min 0.6925, beside [40.7%, 59.3%].
    assert shown == {"mrr-floor": "min 0.500", "hit-floor": "min 20.0%", "hit-high": "min 69.25%"}
    assert "against min 20.0%</title>" in html
