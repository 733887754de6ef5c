"""A gold passage whose text is only whitespace is refused, as an empty one is.

Through the real CLI, on the support example. Gold context replaces the retrieved context with
the case's gold passages; one of `"   "` gives the model nothing to read, so the diagnosis would
label the case GENERATION_FAILURE, "still failed with the gold context", on evidence the model
never had. The loader refused `""` and took `"   "`: both are now refused the same way, naming
the file, the line and the field, before anything runs.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.support import copy_example, oloproof


@pytest.mark.parametrize("text", [" ", " \n\t "])
def test_a_gold_passage_of_whitespace_is_refused(tmp_path: Path, text: str) -> None:
    root = copy_example("support_rag", tmp_path)
    cases = root / "cases.jsonl"
    rows = [json.loads(line) for line in cases.read_text().splitlines()]
    assert rows[1]["id"] == "money_back"
    rows[1]["expected"]["gold_context"][0]["text"] = text
    cases.write_text("".join(json.dumps(row) + "\n" for row in rows))
    done = oloproof("run", cwd=root)
    assert (done.code, done.out) == (2, "")
    assert done.err == (
        f"error: {cases}, line 2: expected.gold_context[0].text of case 'money_back' holds "
        "only whitespace; a gold passage is the text that would have answered the case, and "
        "the model is given it in place of the retrieved context\n"
    )
    assert not (root / ".oloproof").exists()
