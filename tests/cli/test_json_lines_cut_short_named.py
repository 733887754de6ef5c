"""A line of a cases file or a labels file that is not JSON, and a JSON Schema file that is
not, say what is wrong and where in words that read whole, through the real CLI.

Before the fix a labels file cut short inside a string was refused as ``not valid JSON
(Unterminated string starting at)``, the sentence stopping at "at", and with no column for any
problem; a cases file gave ``(Invalid control character at at column 27)`` and a schema file
``Unterminated string starting at at line 2``. Python's message for such problems ends in "at";
each now reads ``… at column N`` (``… at line N`` for the schema file).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.support import TOY_CONFIG, copy_example, oloproof, toy_project

# Each file's second line, and what is said of it.
CASES = {
    "cut short in a string": (
        '{"id": "c2", "input": {"q": "x',
        "Unterminated string starting at column 29",
    ),
    "a raw tab in a string": (
        '{"id": "c2", "input": {"q": "x\ty"}}',
        "Invalid control character at column 31",
    ),
}
LABELS = {
    "cut short in a string": (
        '{"id": "b", "input": {"questi',
        "Unterminated string starting at column 23",
    ),
    "a raw tab in a string": (
        '{"id": "b", "input": {"question": "q"}, "output": {"answer": "a\tb"}, "label": true}',
        "Invalid control character at column 64",
    ),
}


@pytest.mark.parametrize("name", list(CASES))
def test_a_cases_line_not_json_is_named_with_its_column(tmp_path: Path, name: str) -> None:
    root = toy_project(tmp_path / "p")
    with (root / "cases.jsonl").open("a") as file:
        file.write(CASES[name][0] + "\n")
    result = oloproof("run", cwd=root)
    said = CASES[name][1]
    assert (result.code, result.out, result.err) == (
        2,
        "",
        f"error: {root}/cases.jsonl, line 2: not valid JSON ({said})\n",
    )
    assert not (root / ".oloproof").exists()


@pytest.mark.parametrize("name", list(LABELS))
def test_a_labels_line_not_json_is_named_with_its_column(tmp_path: Path, name: str) -> None:
    root = copy_example("judge_gate", tmp_path / "p")
    first = (root / "labels.jsonl").read_text().splitlines()[0]
    (root / "mine.jsonl").write_text(first + "\n" + LABELS[name][0] + "\n")
    result = oloproof(
        "calibrate",
        "--evaluator",
        "groundedness",
        "--labels",
        "mine.jsonl",
        cwd=root,
        env={"JUDGE_GATE_KEY": "test-key"},
    )
    said = LABELS[name][1]
    assert (result.code, result.out, result.err) == (
        2,
        "",
        f"error: mine.jsonl, line 2: not valid JSON ({said})\n",
    )
    assert not (root / ".oloproof").exists()


def test_a_schema_file_cut_short_is_named_with_its_line(tmp_path: Path) -> None:
    check = "  - {type: json_schema, criterion: shaped, schema_path: shape.json}\npolicy:"
    root = toy_project(tmp_path / "p", config=TOY_CONFIG.replace("policy:", check))
    (root / "shape.json").write_text('{\n  "type": "obj')
    result = oloproof("run", cwd=root)
    assert (result.code, result.out, result.err) == (
        2,
        "",
        f"error: {root}/shape.json: the JSON Schema file is not JSON: Unterminated string "
        "starting at line 2\n",
    )
    assert not (root / ".oloproof").exists()
