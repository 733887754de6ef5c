"""``current_case()`` called in a thread the system started, through the real CLI.

The probe: a system that records its retrieval from a ``ThreadPoolExecutor`` worker, which does
not see the case its system runs. The run stopped with ``error: case 'c0': current_case() was
called outside a running case``, about a case that was running. It now says where the call was
and what to do instead; handing the recorder to the thread records (the run passes).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.support import oloproof, write_project

APP = """
from concurrent.futures import ThreadPoolExecutor

from oloproof import Passage, Retrieval, current_case, system

POOL = ThreadPoolExecutor(2)


def record(recorder, q):
    (recorder or current_case()).retrieval(
        Retrieval(query=q, depth=1, candidates=(Passage(doc_id="d1"),))
    )


@system(name="r", version="1", records=("retrieval/v1",))
def run(case):
    handed = current_case() if case["hand"] else None
    POOL.submit(record, handed, case["q"]).result()
    return {"answer": "yes"}
"""

CONFIG = """\
system: {name: r, version: "1", callable: app:run}
dataset: cases.jsonl
policy: policy.yaml
concurrency: 1
evaluators:
  - {type: mrr, k: 5}
"""

POLICY = "version: 1\nrules:\n  - {id: f, metric: mrr_at_5, min: 0.01}\n"


@pytest.mark.parametrize("hand", [False, True])
def test_current_case_in_a_thread_of_the_system(tmp_path: Path, hand: bool) -> None:
    cases = [
        {
            "id": f"c{i}",
            "input": {"q": f"q{i}", "hand": hand},
            "expected": {"relevant": [{"doc_id": "d1"}]},
        }
        for i in range(3)
    ]
    root = write_project(tmp_path / "p", app=APP, config=CONFIG, policy=POLICY, cases=cases)
    result = oloproof("run", cwd=root)
    if hand:
        assert result.code == 0, result.out + result.err
        assert "3 / 3 observed · 0 missing · 0 excluded" in result.out, result.out
        return
    assert (result.code, result.out) == (2, ""), result.err
    assert result.err == (
        "error: case 'c0': current_case() was called where no case is running: outside a "
        "system's call, or in a thread the system started, which does not see its case; call "
        "current_case() in the system itself and hand the recorder to the thread\n"
    )
