"""A missing case of a graded metric counts at its worst value, the method included, through
the real CLI.

The probe: recall@2 on 13 cases, rule ``min: 0.635``. Twelve cases retrieve both relevant
passages (recall 1). When case 13 retrieves one of them (recall 0.5) the values make a mean,
whose betting interval [0.631, 1.000] overlaps the floor: INSUFFICIENT_EVIDENCE, exit 3. When
case 13 raises instead, the observed values are all 1 and were read as a proportion, bounded
by Clopper-Pearson with the missing case at 0 and 1 (12 of 13: [63.9%, 100.0%]): PASS, exit 0.
The error read better than any answer could have: over every recall case 13 could have had,
the lowest lower bound is about 0.545.

Now the missing case counts at whichever value bounds the interval widest, the method that
value would choose included (decision schema 5, ``missing_any_value``); and a decision an
earlier release recorded (schema 4) still verifies, and still shows what it decided.
"""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from scipy.stats import binomtest
from tests.betting_reference import betting as betting_reference
from tests.support import (
    Result,
    earlier_release,
    oloproof,
    stale_when_current,
    verified_as_made,
    write_project,
)

from ledger import decode
from oloproof import events as ev
from oloproof.store import open_project_ledger

APP = """
import os
from oloproof import Passage, Retrieval, current_case, system

@system(name="retriever", version="1", records=("retrieval/v1",))
def run(case):
    docs = ["a", "b"]
    if case["q"] == "q13":
        if os.environ["CASE_13"] == "raises":
            raise RuntimeError("the index is down")
        docs = ["a", "z"]  # one of its two relevant passages: recall 0.5
    current_case().retrieval(Retrieval(candidates=tuple(Passage(doc_id=d) for d in docs)))
    return {"answer": "x"}
"""

CONFIG = """
system: {name: retriever, version: "1", callable: app:run}
dataset: cases.jsonl
policy: policy.yaml
evaluators:
  - {type: recall, k: 2}
"""

POLICY = "version: 1\nrules:\n  - {id: recall, metric: recall_at_2, min: 0.635}\n"

# An earlier release (decision schema 4): a missing case counted as 0 and 1 alone, and a metric
# whose observed values were all 0 or 1 read by Clopper-Pearson, in its decision and its report.
EARLIER_RELEASE = earlier_release(
    {ev.DECISION: 4},
    also="""
from oloproof import metrics

today_bound = metrics.MetricTally.bounded_interval


def bounded_interval(self, *args, **kwargs):
    self.any_value = False
    return today_bound(self, *args, **kwargs)


metrics.MetricTally.bounded_interval = bounded_interval
""",
)


def project(root: Path) -> Path:
    cases = [
        {
            "id": f"q{i}",
            "input": {"q": f"q{i}"},
            "expected": {"relevant": [{"doc_id": "a"}, {"doc_id": "b"}]},
        }
        for i in range(1, 14)
    ]
    return write_project(root, app=APP, config=CONFIG, policy=POLICY, cases=cases)


def run(root: Path, case_13: str, *, earlier: bool = False) -> Result:
    command = EARLIER_RELEASE if earlier else ("-m", "oloproof")
    return oloproof("run", "--no-cache", cwd=root, env={"CASE_13": case_13}, command=command)


def _read(xs: Sequence[float]) -> tuple[float, float]:
    """The interval of a complete run, by the method its values choose: scipy's exact binomial
    interval for values all 0 or 1, else the betting reference."""
    if all(x in (0.0, 1.0) for x in xs):
        ci = binomtest(round(sum(xs)), len(xs)).proportion_ci(0.95, method="exact")
        return float(ci.low), float(ci.high)
    return betting_reference(xs)


# Every recall case 13 could have had, as near 0 and 1 as 1e-9.
RECALLS = [0.0, 1e-9, 0.01, 0.25, 0.5, 0.75, 0.99, 1 - 1e-9, 1.0]


def worst_case() -> tuple[float, float]:
    """Brute force over RECALLS: the lowest lower and the highest upper bound."""
    bounds = [_read([1.0] * 12 + [value]) for value in RECALLS]
    return min(low for low, _ in bounds), max(high for _, high in bounds)


def floor_pct(x: float) -> str:
    """A lower bound as the display rule prints it: rounded down to 0.1%."""
    return f"{math.floor(round(x * 1000, 6)) / 10:.1f}%"


def metric_row(done: Result) -> str:
    return next(line for line in done.lines if line.startswith("│ recall_at_2"))


def rule_row(done: Result) -> str:
    return next(line for line in done.lines if line.startswith("│ recall "))


def _decision(root: Path) -> tuple[int, dict[str, Any], tuple[str, ...]]:
    """The project's one decision: its stored schema, its body as read, its refs."""
    with open_project_ledger(root, create=False) as ledger:
        ((address, event),) = ledger.events(ev.DECISION)
        stored = decode(ledger.get_bytes(address))["schema"]
        return stored, json.loads(json.dumps(event.body)), event.refs


def test_an_answer_of_half_is_insufficient_evidence(tmp_path: Path) -> None:
    root = project(tmp_path / "p")
    done = run(root, "answers")
    assert done.code == 3, done.out + done.err
    assert "INSUFFICIENT_EVIDENCE │ interval_overlaps_threshold" in rule_row(done)
    assert "│ 0.962    │ [0.631, 1.000] │" in metric_row(done)


def test_a_graded_case_that_raised_is_counted_at_its_worst_value(tmp_path: Path) -> None:
    root = project(tmp_path / "p")
    done = run(root, "raises")
    assert done.code == 3, done.out + done.err  # was 0: PASS on [63.9%, 100.0%]
    assert done.lines[2] == "Gate: BLOCK (exit 3)"
    assert "INSUFFICIENT_EVIDENCE │ missing_cases_decide" in rule_row(done)
    low, high = worst_case()
    assert 0.545 < low < 0.546 and high == 1.0
    printed = f"[{floor_pct(low)}, 100.0%]"
    assert printed == "[54.5%, 100.0%]"
    assert f"│ 100.0%   │ {printed} │ 12 / 12 observed · 1 missing · 0 excluded │" in (
        metric_row(done)
    )
    at = done.lines.index("recall_at_2: 1 missing: 1 execution_errored")
    assert done.lines[at + 1] == (
        "  the interval holds any value they could have had, from 0 to 1: one between makes it "
        "a betting interval, so each bound is the wider of that and Clopper-Pearson, with them "
        "at 0 for the lower bound and 1 for the upper; the 12 observed alone give "
        "[73.5%, 100.0%]"
    )
    # What is stored decided so, on that interval, and re-derives.
    schema, body, _ = _decision(root)
    assert (schema, body["missing_any_value"]) == (ev.SCHEMAS[ev.DECISION], True)
    (rule,) = body["rules"]
    assert rule["outcome"] == "INSUFFICIENT_EVIDENCE" and rule["detail"]["method"] == "betting"
    assert math.isclose(rule["detail"]["lower"], low, abs_tol=1e-9)
    assert rule["detail"]["observed_only"]["outcome"] == "PASS"
    verified = oloproof("verify", cwd=root)
    assert verified.code == 0, verified.out + verified.err
    # `inspect` prints the same report, re-derived from the ledger.
    run_id = done.lines[0].split()[1]
    assert metric_row(oloproof("inspect", run_id, cwd=root)) == metric_row(done)


def test_a_decision_an_earlier_release_made_still_verifies_as_it_was_made(
    tmp_path: Path,
) -> None:
    root = project(tmp_path / "p")
    earlier = run(root, "raises", earlier=True)
    assert earlier.code == 0, earlier.out + earlier.err  # what it decided then
    assert "PASS     │ interval_above_threshold" in rule_row(earlier)
    assert "│ [63.9%, 100.0%] │" in metric_row(earlier)
    run_id = earlier.lines[0].split()[1]
    schema, body, refs = _decision(root)
    # Stored at schema 4 and read through its upcaster: decided by the rule of its day.
    verified_as_made(root, (schema, body), "missing_any_value", 4, "re-derived 1 decision(s)")
    # Today's release shows what was decided then; its metrics table, derived afresh, shows
    # the bound a missing case has today.
    shown = oloproof("inspect", run_id, cwd=root)
    assert "Gate: PASS (exit 0)" in shown.lines
    assert rule_row(shown) == rule_row(earlier)
    assert "│ [54.5%, 100.0%] │" in metric_row(shown)
    listed = json.loads(oloproof("runs", "--json", cwd=root).out)[0]
    assert (listed["gate"], listed["exit_code"]) == ("PASS", 0)

    # The same PASS recorded at today's schema claims a bound it was not decided on.
    stale = stale_when_current(root, {**body, "missing_any_value": True}, refs)
    assert "rules[0].outcome: stored 'PASS', re-derived 'INSUFFICIENT_EVIDENCE'" in stale


def test_the_brute_force_covers_the_method_the_values_choose() -> None:
    """The reference itself: case 13 at 0 or 1 is read by Clopper-Pearson, between by betting,
    and an answer near 0 reads below both ends' Clopper-Pearson bound."""
    cp_zero = _read([1.0] * 12 + [0.0])[0]
    near_zero = min(_read([1.0] * 12 + [v])[0] for v in itertools.islice(RECALLS, 1, 3))
    assert near_zero < cp_zero
