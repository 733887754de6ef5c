"""`qrels-to-cases` writes each case back on its own line, whatever JSON whitespace a line holds.

The probe: a case whose line held a carriage return between two keys (JSON whitespace, which
the cases loader reads as part of the line) made `qrels-to-cases` split the file at it: the
second case was written labelled and again unlabelled, three lines for two cases, exit 0. The
file is now split as the loader counts its lines.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.support import oloproof


def test_a_carriage_return_inside_a_case_line_stays_inside_it(tmp_path: Path) -> None:
    (tmp_path / "cases.jsonl").write_bytes(
        b'{"id": "q1",\r"input": {}, "expected": {}}\n{"id": "q2", "input": {}, "expected": {}}\n'
    )
    (tmp_path / "qrels.txt").write_text("q1 0 d1 1\nq2 0 d2 0\n")
    done = oloproof("qrels-to-cases", "qrels.txt", "--output", "out.jsonl", cwd=tmp_path)
    assert done.code == 0, done.err
    lines = (tmp_path / "out.jsonl").read_text().splitlines()
    assert [json.loads(line)["id"] for line in lines] == ["q1", "q2"]  # was q1, q2, q2
    assert [json.loads(line)["expected"]["relevant"] for line in lines] == [
        [{"doc_id": "d1", "grade": 1}],
        [{"doc_id": "d2", "grade": 0}],
    ]
