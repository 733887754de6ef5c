"""A recorder kept from one case (``current_case()`` called once, its result kept) and used in
the next, through the real CLI.

The probe: a system that keeps the first case's recorder in a module global and records each
case's retrieval through it. Every case after the first recorded its retrieval into a case that
had ended: the records went nowhere, and ``mrr_at_5`` read ``1 / 1 observed · 0 missing · 5
excluded`` (``no_retrieval_recorded``), exit 0 from a floor decided on the one case that
recorded, with no word of the others. Now a recorder refuses a record while another case's
recorder is the current one: the run stops at that case with one line saying so, exit 2, as for
any artifact that cannot be recorded. A recorder handed to a thread the system starts (where no
case is current) still records for its own case.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.support import oloproof, write_project

APP = """
from oloproof import Passage, Retrieval, current_case, system

KEPT = []


@system(name="ranker", version="1", records=("retrieval/v1",))
def run(case):
    if not KEPT:
        KEPT.append(current_case())
    ranked = (Passage(doc_id="d1"), Passage(doc_id="x"))
    KEPT[0].retrieval(Retrieval(query=case["q"], depth=2, candidates=ranked))
    return {"answer": "yes"}
"""

CONFIG = """\
system: {{name: ranker, version: "1", callable: app:run}}
dataset: cases.jsonl
policy: policy.yaml
concurrency: {concurrency}
evaluators:
  - {{type: mrr, k: 5}}
"""

POLICY = "version: 1\nrules:\n  - {id: mrr-floor, metric: mrr_at_5, min: 0.01}\n"


@pytest.mark.parametrize("concurrency", [1, 6])
def test_a_recorder_kept_from_another_case_stops_the_run(tmp_path: Path, concurrency: int) -> None:
    cases = [
        {"id": f"c{i}", "input": {"q": f"q{i}"}, "expected": {"relevant": [{"doc_id": "d1"}]}}
        for i in range(6)
    ]
    root = write_project(
        tmp_path / "p",
        app=APP,
        config=CONFIG.format(concurrency=concurrency),
        policy=POLICY,
        cases=cases,
    )
    result = oloproof("run", cwd=root)
    assert result.code == 2, result.out + result.err
    assert "Traceback" not in result.err
    said = result.err.strip().splitlines()[-1]
    assert said.startswith("error: case 'c"), said
    assert said.endswith(
        ": the system recorded a retrieval/v1 artifact through the recorder of another case "
        "(a recorder kept from an earlier call of current_case()); call current_case() in each "
        "case"
    ), said
    runs = oloproof("runs", cwd=root)
    assert " STOPPED " in runs.out, runs.out


HANDED_APP = """
import threading

from oloproof import Passage, Retrieval, current_case, system


@system(name="ranker", version="1", records=("retrieval/v1",))
def run(case):
    recorder = current_case()
    ranked = (Passage(doc_id="d1"), Passage(doc_id="x"))
    worker = threading.Thread(
        target=recorder.retrieval, args=(Retrieval(query=case["q"], depth=2, candidates=ranked),)
    )
    worker.start()
    worker.join()
    return {"answer": "yes"}
"""


def test_a_recorder_handed_to_a_thread_of_its_case_records(tmp_path: Path) -> None:
    cases = [
        {"id": f"c{i}", "input": {"q": f"q{i}"}, "expected": {"relevant": [{"doc_id": "d1"}]}}
        for i in range(6)
    ]
    root = write_project(
        tmp_path / "p",
        app=HANDED_APP,
        config=CONFIG.format(concurrency=3),
        policy=POLICY,
        cases=cases,
    )
    result = oloproof("run", cwd=root)
    assert result.code == 0, result.out + result.err
    assert "6 / 6 observed · 0 missing · 0 excluded" in result.out, result.out
