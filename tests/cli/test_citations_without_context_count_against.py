"""An answer that cites passages but recorded no context counts against the run, not out of it.

The probe: a system records its citations on every case, but its context only where its
retriever worked. On 20 of 100 cases it fell back to answering from nowhere, citing an id that
no context holds (`kb-999`), and recorded no context there. `citation_validity` excluded those
20 (`no_context_recorded`): `citations_valid` read `80 / 80 observed · 0 missing · 20 excluded`,
100%, and a floor of 90% passed (`Gate: PASS`, exit 0), the fabricated citations out of sight.
An answer that cites something makes a claim the context must back; with no context recorded
the claim cannot be checked, so the verdict is missing now, counted against the system. An
answer that cites nothing and recorded no context is still excluded (nothing to check).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from scipy.stats import beta
from tests.support import metric_of, oloproof, write_project

# Shared with test_citation_judge_without_context_counts_against, whose case "hold" stops it
# and "textless" records the cited passage without its text.
APP = """
import sys
import time

from oloproof import Context, ContextItem, current_case, system

KB = Context(items=(ContextItem(doc_id="kb-1", text="Refunds take 14 days."),))


@system(name="citer", version="1", records=("context/v1", "citations/v1"))
def citer(case):
    recorder = current_case()
    if case.get("hold"):
        sys.stderr.write("holding\\n")
        sys.stderr.flush()
        time.sleep(600)
    if case["n"] < case["fallback"]:
        recorder.citations([] if case["n"] == 0 else ["kb-999"])  # answered from nowhere
    elif case.get("textless"):  # the passage's text was not kept
        recorder.context(Context(items=(ContextItem(doc_id="kb-1"),)))
        recorder.citations(["kb-1"])
    else:
        recorder.context(KB)
        recorder.citations(["kb-1"])
    return {"answer": "Refunds take 14 days."}
"""
CONFIG = """\
system: {name: citer, version: "1", callable: "app:citer"}
dataset: cases.jsonl
policy: policy.yaml
evaluators:
  - {type: citation_validity}
"""
POLICY = "version: 1\nrules:\n  - {id: cited, metric: citations_valid, min: 0.9}\n"


def _project(tmp_path: Path, fallback: int) -> Path:
    return write_project(
        tmp_path / "p",
        app=APP,
        config=CONFIG,
        policy=POLICY,
        cases=({"id": f"c{n}", "input": {"n": n, "fallback": fallback}} for n in range(101)),
    )


def test_citations_no_context_could_back_are_missing_and_block(tmp_path: Path) -> None:
    # c0 cites nothing and has no context: excluded; c1..c20 cite without a context: missing.
    root = _project(tmp_path, fallback=21)
    done = oloproof("run", cwd=root)
    assert done.code == 3, done.out + done.err  # was 0: 80 / 80 observed · 21 excluded
    row = next(line for line in done.lines if "citations_valid" in line and "observed" in line)
    assert "80 / 80 observed · 20 missing · 1 excluded" in row, row
    report = json.loads(oloproof("inspect", "latest", "--json", cwd=root).out)
    metric = metric_of(report, "citations_valid")
    assert metric["missing_reasons"] == {"no_context_recorded": 20}, metric
    assert metric["excluded_reasons"] == {"no_context_recorded": 1}, metric
    # The lower bound counts the 20 against the system: scipy's Clopper-Pearson of 80 / 100.
    assert metric["lower"] == pytest.approx(beta.ppf(0.025, 80, 21), abs=1e-9), metric


def test_every_answer_with_its_context_passes_as_before(tmp_path: Path) -> None:
    root = _project(tmp_path, fallback=1)
    done = oloproof("run", cwd=root)
    assert done.code == 0, done.out + done.err
    row = next(line for line in done.lines if "citations_valid" in line and "observed" in line)
    assert "100 / 100 observed · 0 missing · 1 excluded" in row, row
