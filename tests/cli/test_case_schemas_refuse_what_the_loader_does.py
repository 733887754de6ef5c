"""An entry of ``expected.relevant`` or ``expected.gold_context`` that the cases file's loader
refuses is refused by its JSON Schema too (``schemas/relevance-label.json``,
``schemas/gold-passage.json``), so an editor checking a cases file with them flags what
``oloproof run`` will refuse.

Before the fix the schemas took an empty ``chunk_id``, an empty passage ``text`` and a grade
past ±1,000,000, each of which ``oloproof run`` refuses with the line (exit 2).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from tests.support import REPO, oloproof, toy_project

REFUSED: dict[str, tuple[str, str, dict[str, Any]]] = {
    "an empty chunk_id": ("relevant", "relevance-label", {"doc_id": "d", "chunk_id": ""}),
    "a grade past a million": ("relevant", "relevance-label", {"doc_id": "d", "grade": 2e6}),
    "a grade below minus a million": (
        "relevant",
        "relevance-label",
        {"doc_id": "d", "grade": -2e6},
    ),
    "an empty passage chunk_id": (
        "gold_context",
        "gold-passage",
        {"doc_id": "d", "chunk_id": "", "text": "t"},
    ),
    "an empty passage text": ("gold_context", "gold-passage", {"doc_id": "d", "text": ""}),
}


@pytest.mark.parametrize("name", list(REFUSED))
def test_an_entry_the_loader_refuses_the_schema_refuses(tmp_path: Path, name: str) -> None:
    key, schema_name, entry = REFUSED[name]
    root = toy_project(tmp_path)
    case = {"id": "c1", "input": {"q": "x"}, "expected": {"answer": "x", key: [entry]}}
    (root / "cases.jsonl").write_text(json.dumps(case) + "\n")
    result = oloproof("run", cwd=root)
    assert result.code == 2 and f"{root}/cases.jsonl, line 1: " in result.err, result.err
    schema = json.loads((REPO / "schemas" / f"{schema_name}.json").read_text())
    assert not Draft202012Validator(schema).is_valid(entry)
