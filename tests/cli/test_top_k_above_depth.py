"""A staged system whose top_k is above its depth is refused before anything is written: retrieve
returns at most depth candidates, so the context's cut at top_k never drops one. Real CLI run.

(Before: `depth: 2, top_k: 5` ran and exited 0. No context was ever cut, every case's
`relevant_position` sat within "top_k", and the run recorded a top_k it never applied.)
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.support import oloproof, toy_project

APP = """
from oloproof import Passage, Retrieval, rag_system

@rag_system(name="rag", version="1", {settings})
class Rag:
    def retrieve(self, input, depth):
        return Retrieval(candidates=(Passage(doc_id="d1", text="x"), Passage(doc_id="d2", text="y"))[:depth])

    def generate(self, input, context):
        return {{"answer": " ".join(item.text or "" for item in context.items)}}
"""

CONFIG = """\
system:
  name: rag
  version: "1"
  rag:
    object: app:Rag
{settings}evaluators:
  - {{type: contains, criterion: echo, field: answer, expected_field: answer}}
"""


@pytest.mark.parametrize(
    ("decorated", "written", "line", "said"),
    [
        ("depth=6, top_k=2", "    depth: 2\n    top_k: 5\n", 7, "top_k 5 is above depth 2"),
        ("depth=2, top_k=1", "    top_k: 5\n", 6, "top_k 5 is above depth 2 (from @rag_system)"),
        ("depth=6, top_k=5", "    depth: 2\n", 6, "top_k 5 (from @rag_system) is above depth 2"),
        (
            "depth=2, top_k=5",
            "",
            5,
            "top_k 5 (from @rag_system) is above depth 2 (from @rag_system)",
        ),
    ],
)
def test_a_top_k_above_the_depth_is_refused(
    tmp_path: Path, decorated: str, written: str, line: int, said: str
) -> None:
    root = toy_project(tmp_path / "p", config=CONFIG.format(settings=written), policy="")
    (root / "app.py").write_text(APP.format(settings=decorated))
    result = oloproof("run", cwd=root)
    assert (result.code, result.out) == (2, ""), result.out + result.err
    assert result.err == (
        f"error: {root}/oloproof.yaml, line {line}: system.rag: {said}: retrieve returns at "
        "most 2 candidates, so none would ever be cut at top_k; give a top_k of 2 or less, or "
        "a depth of 5 to retrieve that many\n"
    )
    assert not (root / ".oloproof").exists()


def test_a_top_k_equal_to_the_depth_runs(tmp_path: Path) -> None:
    # Every candidate retrieved reaches the context: a cut that keeps all is a choice.
    root = toy_project(
        tmp_path / "p", config=CONFIG.format(settings="    depth: 2\n    top_k: 2\n"), policy=""
    )
    (root / "app.py").write_text(APP.format(settings="depth=2, top_k=1"))
    result = oloproof("run", cwd=root)
    assert result.code == 0, result.out + result.err
