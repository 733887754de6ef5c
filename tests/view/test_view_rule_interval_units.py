"""A rule's interval on the run page is written in its metric's units, as ``run`` writes it.

The probe: a floor (``min: 0.5``) on ``mrr_at_3``, a mean of reciprocal ranks (half the cases
rank the relevant passage first, half second). ``oloproof run`` and ``inspect --json`` gave the
metric as a mean, ``0.750 [0.702, 0.804]`` (``proportion: false``); the run page's gate table
wrote the interval the rule decided on as ``[70.2%, 80.4%] vs min 0.5``, a percentage of
cases beside a threshold on a mean. It is now written as the interval it is (a betting
interval on a mean: ``[0.702, 0.804]``; a Clopper-Pearson one on a proportion stays in percent).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from playwright.sync_api import Page, expect
from tests.support import oloproof, write_project
from tests.view.support import serving
from tests.view.test_view_browser import page  # noqa: F401  (the browser fixture)

APP = """
from oloproof import Passage, Retrieval, current_case, system


@system(name="ranker", version="1", records=("retrieval/v1",))
def run(case):
    docs = ("d1", "x") if case["n"] % 2 else ("x", "d1")
    current_case().retrieval(Retrieval(query="q", depth=2, candidates=tuple(
        Passage(doc_id=d, text=d) for d in docs)))
    return {"answer": "x"}
"""
CONFIG = """\
system: {name: ranker, version: "1", callable: "app:run"}
dataset: cases.jsonl
policy: policy.yaml
evaluators:
  - {type: mrr, k: 3}
  - {type: hit_rate, k: 1}
"""
POLICY = """version: 1
rules:
  - {id: mrr-floor, metric: mrr_at_3, min: 0.5}
  - {id: hit-floor, metric: hit_rate_at_1, min: 0.2}
"""


def _mean(lower: float, upper: float) -> str:
    return f"[{math.floor(lower * 1000) / 1000:.3f}, {math.ceil(upper * 1000) / 1000:.3f}]"


def _percent(lower: float, upper: float) -> str:
    return f"[{math.floor(lower * 1000) / 10:.1f}%, {math.ceil(upper * 1000) / 10:.1f}%]"


def ranked_project(root: Path, policy: str) -> Path:
    """120 cases, half ranking the relevant passage first and half second, under ``policy``."""
    return write_project(
        root,
        app=APP,
        config=CONFIG,
        policy=policy,
        cases=(
            {"id": f"c{n}", "input": {"n": n}, "expected": {"relevant": [{"doc_id": "d1"}]}}
            for n in range(120)
        ),
    )


def test_each_rule_interval_is_in_its_metrics_units(tmp_path: Path, page: Page) -> None:  # noqa: F811
    root = ranked_project(tmp_path / "p", POLICY)
    done = oloproof("run", "--json", cwd=root)
    assert done.code == 0, done.out + done.err
    run_id = json.loads(done.out)["run_id"]
    inspected = json.loads(oloproof("inspect", run_id, "--json", cwd=root).out)
    proportion = {m["criterion"]: m["proportion"] for m in inspected["metrics"]}
    assert proportion == {"mrr_at_3": False, "hit_rate_at_1": True}
    expected = {}
    for rule in inspected["rules"]:
        detail = rule["detail"]
        written = _percent if proportion[rule["metric"]] else _mean
        expected[rule["rule_id"]] = written(detail["lower"], detail["upper"])
    (metric,) = (m for m in inspected["metrics"] if m["criterion"] == "mrr_at_3")
    # No case is missing: the rule decided on the interval `run` prints for the metric.
    assert expected["mrr-floor"] == _mean(metric["lower"], metric["upper"])
    with serving(root) as url:
        page.goto(f"{url}/runs/{run_id}")
        for rule_id, interval in expected.items():
            row = page.locator("table.rules tr").filter(has_text=rule_id)
            expect(row).to_contain_text(interval)
        mrr_row = page.locator("table.rules tr").filter(has_text="mrr-floor")
        expect(mrr_row).not_to_contain_text("%")
