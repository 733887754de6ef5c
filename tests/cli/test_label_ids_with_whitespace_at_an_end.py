"""A relevance label or gold passage whose doc_id or chunk_id has whitespace at an end is refused.

Through the real CLI, on the support example. Ids are matched exactly, so `"kb-11 "` matches
no passage the retriever returns: the retrieval metrics counted security_review's relevant
passage (retrieved 2nd) as never retrieved, and the gold-context diagnosis labelled it
RETRIEVAL_MISS, "no relevant evidence was retrieved", where it was CONTEXT_ASSEMBLY_LOSS. Such
an id is now refused, naming the file, the line and the field, before anything runs.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.support import copy_example, oloproof


@pytest.mark.parametrize(
    ("field", "key", "value", "end"),
    [
        ("relevant", "doc_id", "kb-11 ", "end"),
        ("relevant", "chunk_id", "c1\n", "end"),
        ("gold_context", "doc_id", " kb-11", "start"),
    ],
)
def test_an_id_with_whitespace_at_an_end_is_refused(
    tmp_path: Path, field: str, key: str, value: str, end: str
) -> None:
    root = copy_example("support_rag", tmp_path)
    cases = root / "cases.jsonl"
    rows = [json.loads(line) for line in cases.read_text().splitlines()]
    (line,) = [n for n, row in enumerate(rows, start=1) if row["id"] == "security_review"]
    rows[line - 1]["expected"][field][0][key] = value
    cases.write_text("".join(json.dumps(row) + "\n" for row in rows))
    done = oloproof("run", cwd=root)
    assert (done.code, done.out) == (2, "")
    assert done.err == (
        f"error: {cases}, line {line}: expected.{field}[0].{key} of case 'security_review' is "
        f"{value!r}, with whitespace at its {end}; ids are matched exactly, so it would match "
        "no retrieved passage\n"
    )
    assert not (root / ".oloproof").exists()
