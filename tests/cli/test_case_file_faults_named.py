"""A cases file's faults are named at their line, and a grade no metric can add up is refused,
through the real CLI.

Before the fix a line that is not UTF-8 was named by its byte alone ("cases.jsonl: not UTF-8
text (byte 99)"), and a relevance grade of 1e308 was taken: nDCG adds grades up, the sum
overflows to infinity and a ranking that should score 0.70 scored 0.0, the same as one that
found nothing. qrels-to-cases refuses a grade beyond ±1,000,000; the cases file now does too.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.support import oloproof, toy_project

FIRST = json.dumps({"id": "c1", "input": {"q": "x"}, "expected": {"answer": "x"}}) + "\n"


def _run(root: Path, second: bytes) -> tuple[int, str, str]:
    toy_project(root)
    (root / "cases.jsonl").write_bytes(FIRST.encode() + second)
    result = oloproof("run", cwd=root)
    assert not (root / ".oloproof").exists()
    return result.code, result.out, result.err


def test_a_line_that_is_not_utf8_is_named(tmp_path: Path) -> None:
    byte = len(FIRST) + len('{"id": "c')
    assert _run(tmp_path, b'{"id": "c\xff2", "input": {"q": "x"}}\n') == (
        2,
        "",
        f"error: {tmp_path}/cases.jsonl, line 2: not UTF-8 text (byte {byte})\n",
    )


@pytest.mark.parametrize(
    ("grade", "shown"), [("1e308", "1e+308"), ("-1000001", "-1000001"), ("1000000.5", "1000000.5")]
)
def test_a_grade_beyond_any_scale_is_refused(tmp_path: Path, grade: str, shown: str) -> None:
    line = (
        '{"id": "c2", "input": {"q": "x"}, "expected": {"relevant": [{"doc_id": "d1"}, '
        f'{{"doc_id": "d2", "grade": {grade}}}]}}}}\n'
    )
    assert _run(tmp_path, line.encode()) == (
        2,
        "",
        f"error: {tmp_path}/cases.jsonl, line 2: expected.relevant[1].grade of case 'c2' is "
        f"{shown}, beyond ±1,000,000, which no grade needs\n",
    )
