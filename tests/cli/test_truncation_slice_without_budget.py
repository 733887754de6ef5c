"""The ``context_truncated`` slice of a staged system with no token budget is refused before
anything is written: only a budget drops passages, so every case would read ``false``. Real
CLI run.

(Before: the run printed the slice's one value, 'false', for every case of a system that never
had a budget, and exited 0.)
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.support import oloproof, toy_project

APP = """
from oloproof import Passage, Retrieval, rag_system

@rag_system(name="rag", version="1", depth=2, top_k=1{budget})
class Rag:
    def retrieve(self, input, depth):
        return Retrieval(candidates=(Passage(doc_id="d1", text="x"),))

    def generate(self, input, context):
        return {{"answer": " ".join(item.text or "" for item in context.items)}}

    def count_tokens(self, passage):
        return 1
"""

CONFIG = """\
system:
  name: rag
  version: "1"
  rag: {{object: app:Rag{budget}}}
evaluators:
  - {{type: contains, criterion: echo, field: answer, expected_field: answer}}
slices: [relevant_position, context_truncated]
"""


def _project(root: Path, decorated: str, written: str) -> Path:
    toy_project(root, config=CONFIG.format(budget=written), cases=3)
    (root / "app.py").write_text(APP.format(budget=decorated))
    return root


def test_a_truncation_slice_without_a_budget_is_refused(tmp_path: Path) -> None:
    root = _project(tmp_path / "p", "", "")
    done = oloproof("run", cwd=root)
    assert (done.code, done.out) == (2, ""), done.out + done.err
    assert done.err == (
        f"error: {root}/oloproof.yaml, line 7: slices: context_truncated says whether the token "
        "budget dropped passages, and system.rag sets no token_budget (nor does @rag_system), "
        "so every case would read false; set a token_budget, or leave the slice out\n"
    )
    assert not (root / ".oloproof").exists()


@pytest.mark.parametrize(
    ("decorated", "written"), [(", token_budget=5", ""), ("", ", token_budget: 5")]
)
def test_a_budget_from_either_place_fills_the_slice(
    tmp_path: Path, decorated: str, written: str
) -> None:
    done = oloproof("run", cwd=_project(tmp_path / "p", decorated, written))
    assert done.code == 0, done.out + done.err
    assert "context_truncated" in done.out
