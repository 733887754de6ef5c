"""A labelled case whose system recorded no retrieval counts against the run, not out of it.

The probe: a system declaring `records=("retrieval/v1",)` ranks the relevant passage first in
80 of 100 labelled cases and records nothing in the other 20 (its retriever broke there and it
answered anyway). Those 20 were `excluded: no_retrieval_recorded`, so `hit_rate_at_1` read
`80 / 80 observed · 0 missing · 20 excluded`, 100%, and a floor of 90% passed (`Gate: PASS`,
exit 0): the cases it would have failed left the denominator. A comparison already counted such
a case as a missing pair; the run now does too: the case's labels say there was something to
find, so the verdict is missing (`no_retrieval_recorded`), and the interval counts it against
the system. A case without labels is still excluded by its labels, whatever it recorded.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from scipy.stats import beta
from tests.support import metric_of, oloproof, write_project

APP = """
from oloproof import Passage, Retrieval, current_case, system


@system(name="ranker", version="1", records=("retrieval/v1",))
def ranker(case):
    if case["n"] >= case["broken"]:
        current_case().retrieval(Retrieval(query="q", depth=2, candidates=(
            Passage(doc_id="d1", text="the relevant one"),
            Passage(doc_id="x", text="another"),
        )))
    return {"answer": "x"}
"""
CONFIG = """\
system: {name: ranker, version: "1", callable: "app:ranker"}
dataset: cases.jsonl
policy: policy.yaml
evaluators:
  - {type: hit_rate, k: 1}
"""
POLICY = "version: 1\nrules:\n  - {id: hits, metric: hit_rate_at_1, min: 0.9}\n"


def _project(tmp_path: Path, broken: int) -> Path:
    cases = [
        {
            "id": f"c{n}",
            "input": {"n": n, "broken": broken},
            "expected": {"relevant": [{"doc_id": "d1"}]},
        }
        for n in range(100)
    ]
    # Two cases without labels: nothing to find, excluded whatever the system recorded.
    cases += [{"id": f"u{n}", "input": {"n": n, "broken": broken}} for n in (0, 99)]
    return write_project(tmp_path / "p", app=APP, config=CONFIG, policy=POLICY, cases=cases)


def test_a_labelled_case_without_a_retrieval_is_missing_and_blocks(tmp_path: Path) -> None:
    root = _project(tmp_path, broken=20)
    done = oloproof("run", cwd=root)
    assert done.code == 3, done.out + done.err
    row = next(line for line in done.lines if "hit_rate_at_1" in line and "observed" in line)
    assert "80 / 80 observed · 20 missing · 2 excluded" in row, row
    assert "Gate: BLOCK" in done.out
    report = json.loads(oloproof("inspect", "latest", "--json", cwd=root).out)
    metric = metric_of(report, "hit_rate_at_1")
    assert (metric["observed"], metric["missing"], metric["excluded"]) == (80, 20, 2), metric
    # Counted against for the lower bound, for the system for the upper (scipy's Clopper-Pearson
    # of 80 / 100 and of 100 / 100); the estimate stays that of the cases observed.
    assert metric["lower"] == pytest.approx(beta.ppf(0.025, 80, 21), abs=1e-9), metric
    assert (metric["upper"], metric["estimate"]) == (1.0, 1.0), metric
    failures = oloproof("inspect", "latest", "--failures", cwd=root)
    assert "no_retrieval_recorded" in failures.out, failures.out


def test_every_case_recorded_passes_as_before(tmp_path: Path) -> None:
    root = _project(tmp_path, broken=0)
    done = oloproof("run", cwd=root)
    assert done.code == 0, done.out + done.err
    row = next(line for line in done.lines if "hit_rate_at_1" in line and "observed" in line)
    assert "100 / 100 observed · 0 missing · 2 excluded" in row, row
    assert "Gate: PASS" in done.out
