"""A relevance label without the chunk its metric reads is refused when the cases are read.

The probe: `hit_rate` with `relevance_unit: chunk` over 40 cases, the 32nd of which labels a
document without a `chunk_id`. `run --dry-run` said all was well (exit 0), and `run` recorded 31
cases and a stopped run before failing with `error: case c31: ...`, naming no file or line. The
label is now refused as the cases file is read, at its line, before anything is written.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.support import oloproof, write_project

APP = """
from oloproof import Passage, Retrieval, current_case, system

@system(name="ranker", version="1", records=("retrieval/v1",))
def run(case):
    current_case().retrieval(Retrieval(query="q", depth=1, candidates=(
        Passage(doc_id="d1", chunk_id="c1", text="t"),)))
    return {"answer": "x"}
"""
CONFIG = """\
system: {name: ranker, version: "1", callable: app:run}
dataset: cases.jsonl
policy: policy.yaml
evaluators:
  - {type: hit_rate, k: 1}
  - {type: recall, k: 1, relevance_unit: chunk}
"""


def _label(n: int) -> dict[str, str]:
    return {"doc_id": "d1"} if n == 31 else {"doc_id": "d1", "chunk_id": "c1"}


@pytest.mark.parametrize("command", [("run",), ("run", "--dry-run")])
def test_a_label_without_its_chunk_is_refused_at_its_line(
    tmp_path: Path, command: tuple[str, ...]
) -> None:
    root = write_project(
        tmp_path / "p",
        app=APP,
        config=CONFIG,
        policy="version: 1\nrules:\n  - {id: r, metric: recall_at_1, min: 0.5}\n",
        cases=(
            {"id": f"c{n}", "input": {}, "expected": {"relevant": [_label(n)]}} for n in range(40)
        ),
    )
    done = oloproof(*command, cwd=root)
    assert (done.code, done.err) == (
        2,
        f"error: {root}/cases.jsonl, line 32: expected.relevant[0] of case 'c31' has no "
        "chunk_id, and 'recall_at_1' reads relevance by chunk (relevance_unit: chunk)\n",
    ), done.out
    assert not (root / ".oloproof").exists()
    # Labelled whole, the same cases run.
    (root / "cases.jsonl").write_text(
        "".join(
            json.dumps({"id": f"c{n}", "input": {}, "expected": {"relevant": [_label(0)]}}) + "\n"
            for n in range(40)
        )
    )
    assert oloproof(*command, cwd=root).code == 0
