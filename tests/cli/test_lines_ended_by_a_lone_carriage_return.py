"""A cases file or a labels file whose lines end in a carriage return alone (``\\r``, as old Mac
files do) is refused, naming the line and why, through the real CLI.

JSON Lines ends a line at ``\\n``, so such a file is one line holding several JSON values (a
``\\r`` between them is JSON whitespace). Before the fix the refusal said only ``not valid JSON
(Extra data at column 64)``, pointing at a place where nothing could be seen wrong; it now
says that the line goes on after a carriage return. A file of ``\\r\\n`` lines is read as
ever.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.support import copy_example, oloproof, toy_project

CR = (
    "; the line goes on after a carriage return (\\r): JSON Lines ends a line at \\n (or \\r\\n), "
    "not at \\r alone"
)


def _cases(ending: str) -> str:
    return "".join(
        json.dumps({"id": f"c{i}", "input": {"q": "x"}, "expected": {"answer": "x"}}) + ending
        for i in (1, 2)
    )


def test_a_cases_file_of_lone_carriage_returns_is_refused_saying_so(tmp_path: Path) -> None:
    root = toy_project(tmp_path / "p")
    (root / "cases.jsonl").write_bytes(_cases("\r").encode())
    result = oloproof("run", cwd=root)
    assert (result.code, result.out, result.err) == (
        2,
        "",
        f"error: {root}/cases.jsonl, line 1: not valid JSON (Extra data at column 64){CR}\n",
    )
    assert not (root / ".oloproof").exists()


def test_a_cases_file_of_crlf_lines_is_read(tmp_path: Path) -> None:
    root = toy_project(tmp_path / "p")
    (root / "cases.jsonl").write_bytes(_cases("\r\n").encode())
    result = oloproof("run", "--json", cwd=root)
    assert result.code in (0, 3), result.err  # 2 cases are too few to pass the gate
    assert json.loads(result.out)["cases"] == 2


def test_a_labels_file_of_lone_carriage_returns_is_refused_saying_so(tmp_path: Path) -> None:
    root = copy_example("judge_gate", tmp_path / "p")
    lines = (root / "labels.jsonl").read_text().splitlines()[:2]
    (root / "mine.jsonl").write_text("\r".join(lines) + "\r", newline="")
    result = oloproof(
        "calibrate",
        "--evaluator",
        "groundedness",
        "--labels",
        "mine.jsonl",
        cwd=root,
        env={"JUDGE_GATE_KEY": "test-key"},
    )
    column = len(lines[0]) + 2
    assert (result.code, result.out, result.err) == (
        2,
        "",
        f"error: mine.jsonl, line 1: not valid JSON (Extra data at column {column}){CR}\n",
    )
