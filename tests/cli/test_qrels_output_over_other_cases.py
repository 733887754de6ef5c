"""`qrels-to-cases --output` does not write over a cases file of other cases. Real CLI.

An existing cases file at --output is replaced only when it holds the very cases of --cases (an
earlier labelling of them, written again). Before the fix any cases file was: a typo naming the
project's test split as --output replaced it with the labelled training cases, exit 0, the
message saying only "Labelled 2 cases in test.jsonl".
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.support import oloproof


def _write_cases(path: Path, *ids: str) -> None:
    path.write_text(
        "".join(json.dumps({"id": i, "input": {"q": i}}) + "\n" for i in ids), encoding="utf-8"
    )


def test_a_cases_file_of_other_cases_is_not_written_over(tmp_path: Path) -> None:
    _write_cases(tmp_path / "cases.jsonl", "q1", "q2")
    _write_cases(tmp_path / "test.jsonl", "t1", "t2", "t3")
    before = (tmp_path / "test.jsonl").read_bytes()
    (tmp_path / "qrels.txt").write_text("q1 0 d1 1\nq2 0 d2 0\n", encoding="utf-8")

    done = oloproof("qrels-to-cases", "qrels.txt", "--output", "test.jsonl", cwd=tmp_path)
    assert done.code == 2, done.out + done.err  # was 0: "Labelled 2 cases in test.jsonl"
    assert done.out == ""
    assert done.err == (
        "error: will not write the labelled cases over test.jsonl: it holds other cases than "
        "cases.jsonl (3 cases, the first 't1'), not an earlier labelling of them; give another "
        "path, or remove the file first\n"
    )
    assert (tmp_path / "test.jsonl").read_bytes() == before


def test_an_earlier_labelling_of_the_same_cases_is_written_again(tmp_path: Path) -> None:
    _write_cases(tmp_path / "cases.jsonl", "q1", "q2")
    (tmp_path / "qrels.txt").write_text("q1 0 d1 1\n", encoding="utf-8")
    first = oloproof("qrels-to-cases", "qrels.txt", "--output", "l.jsonl", cwd=tmp_path)
    assert first.code == 0, first.err
    (tmp_path / "qrels.txt").write_text("q1 0 d1 2\nq2 0 d2 1\n", encoding="utf-8")
    again = oloproof("qrels-to-cases", "qrels.txt", "--output", "l.jsonl", cwd=tmp_path)
    assert again.code == 0, again.err
    assert again.out == "Labelled 2 cases in l.jsonl; 0 have no qrels\n"
    rows = [json.loads(line) for line in (tmp_path / "l.jsonl").read_text().splitlines()]
    assert [row["expected"]["relevant"][0]["grade"] for row in rows] == [2, 1]
