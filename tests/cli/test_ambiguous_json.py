"""JSON input that names a key twice in one object: JSON leaves which value counts undefined
(Python's parser silently keeps the last), so Oloproof refuses it, exit 2, saying where, before
anything is written. Real CLI in a subprocess."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.support import oloproof, write_project

APP = """
from oloproof import system

@system(name="echo", version="1")
def run(case):
    return {"answer": case["q"]}
"""


def project(root: Path, extra: str = "", evaluator: str = "") -> Path:
    cases = [
        {"id": f"c{i}", "input": {"q": f"q{i}"}, "expected": {"answer": f"q{i}"}} for i in range(3)
    ]
    root = write_project(
        root,
        app=APP,
        config=(
            'system: {name: echo, version: "1", callable: app:run}\ndataset: cases.jsonl\n'
            "policy: policy.yaml\nevaluators:\n"
            "  - {type: contains, criterion: ok, field: answer, expected_field: answer}\n"
            + evaluator
        ),
        policy="version: 1\nrules:\n  - {id: floor, metric: ok, min: 0.1}\n",
        cases=cases,
    )
    if extra:
        with (root / "cases.jsonl").open("a") as f:
            f.write(extra + "\n")
    return root


@pytest.mark.parametrize(
    ("line", "key"),
    [
        ('{"id": "a", "id": "b", "input": {"q": "a"}}', "id"),
        (
            '{"id": "a", "input": {"q": "a"}, "expected": {"answer": "a", "answer": "zzz"}}',
            "answer",
        ),
        ('{"id": "a", "input": {"q": "a", "deep": [{"k": 1, "k": 2}]}}', "k"),
    ],
)
def test_a_case_line_that_names_a_key_twice_is_refused(tmp_path: Path, line: str, key: str) -> None:
    root = project(tmp_path / "p", extra=line)
    result = oloproof("run", cwd=root)
    assert (result.code, result.out) == (2, "")
    assert result.err == (
        f"error: {root / 'cases.jsonl'}, line 4: the key {key!r} appears twice in one object\n"
    )
    assert not (root / ".oloproof").exists()


def test_a_schema_file_that_names_a_key_twice_is_refused(tmp_path: Path) -> None:
    root = project(
        tmp_path / "p",
        evaluator="  - {type: json_schema, criterion: shaped, schema_path: answer.json}\n",
    )
    (root / "answer.json").write_text('{"type": "string", "type": "object"}')
    result = oloproof("run", cwd=root)
    assert result.code == 2, result.err
    assert "answer.json" in result.err
    assert "the JSON Schema file is ambiguous: the key 'type' appears twice" in result.err
    assert not (root / ".oloproof").exists()


def test_qrels_that_judge_one_document_twice_differently_are_refused(tmp_path: Path) -> None:
    root = project(tmp_path / "p")
    before = (root / "cases.jsonl").read_text()
    (root / "qrels.txt").write_text("c1 0 d1 1\nc1 0 d2 0\nc1 0 d1 1\nc1 0 d1 3\n")
    result = oloproof("qrels-to-cases", "qrels.txt", cwd=root)
    assert (result.code, result.err) == (
        2,
        f"error: {Path('qrels.txt')}, line 4: query 'c1', document 'd1' was judged 1 on line 1 "
        "and 3 here\n",
    )
    (root / "qrels.txt").write_text("\n")
    empty = oloproof("qrels-to-cases", "qrels.txt", cwd=root)
    assert (empty.code, empty.err) == (
        2,
        f"error: {Path('qrels.txt')}: holds no judgment (qid iter docno rel lines)\n",
    )
    assert (root / "cases.jsonl").read_text() == before  # nothing written
    # The same judgment given twice says one thing: it is taken.
    (root / "qrels.txt").write_text("c1 0 d1 2\nc1 0 d1 2\n")
    done = oloproof("qrels-to-cases", "qrels.txt", cwd=root)
    assert done.code == 0, done.err
    labelled = [json.loads(line) for line in (root / "cases.jsonl").read_text().splitlines()]
    assert labelled[1]["expected"]["relevant"] == [{"doc_id": "d1", "grade": 2}]


@pytest.mark.parametrize(
    ("line", "why"),
    [
        (b"c1 0 d1 1_0\n", "relevance '1_0' is not an integer"),
        (b"c1 0 d1 +1\n", "relevance '+1' is not an integer"),
        ("c1 0 d1 \u0661\n".encode(), "relevance '\u0661' is not an integer"),
        (b"c1 0 d1 99999999999999999999999\n", "relevance 99999999999999999999999 is beyond"),
        (b"c1 0 d\xff 1\n", "not UTF-8 text (byte 6)"),
    ],
)
def test_a_qrels_grade_trec_eval_would_read_otherwise_is_refused(
    tmp_path: Path, line: bytes, why: str
) -> None:
    # Python's int() read "1_0" as 10 and the Arabic-Indic one as 1; a 23-digit grade was
    # written into cases.jsonl, which every later command then refused; a byte that is not
    # UTF-8 was a traceback.
    root = project(tmp_path / "p")
    before = (root / "cases.jsonl").read_text()
    (root / "qrels.txt").write_bytes(line)
    result = oloproof("qrels-to-cases", "qrels.txt", cwd=root)
    assert result.code == 2, result.err
    assert result.err.startswith(f"error: {Path('qrels.txt')}") and why in result.err, result.err
    assert "Traceback" not in result.err and len(result.err.splitlines()) == 1
    assert (root / "cases.jsonl").read_text() == before
