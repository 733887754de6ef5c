"""Code a system picks by a name it holds as text is part of its code identity.

Plugin-style RAG code picks its retriever or prompt by name: ``getattr(handlers, STRATEGY)``,
``globals()[name]``, ``getattr(self, self.mode)`` in a staged system. The fingerprint follows
the names the code uses, and the name of the function called this way is text, not a name in
the code: an edit to that function reused every answer the old one made, and the run said
nothing. Every name of a project module such code holds (of its own module, for ``globals()``),
and, in a method, every attribute of its class, now counts.

Real CLI runs in a subprocess: run, edit the function picked by name, run again.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.support import bundle_cases, oloproof

CONFIG = """
system: {name: picked, version: "1", callable: app:answer}
dataset: cases.jsonl
evaluators:
  - {type: contains, criterion: answered, field: answer, expected_field: answer}
"""

RAG_CONFIG = """
system:
  name: picked
  version: "1"
  rag: {object: app:Picked, depth: 2, top_k: 1, index_version: "i1"}
dataset: cases.jsonl
evaluators:
  - {type: contains, criterion: answered, field: answer, expected_field: answer}
"""

HANDLERS = 'def short(question):\n    return question + " WORD"\n'

APPS = {
    "getattr on a module": (
        CONFIG,
        """
import handlers
from oloproof import system

STRATEGY = "short"


@system(name="picked", version="1")
def answer(case):
    return {"answer": getattr(handlers, STRATEGY)(case["q"])}
""",
    ),
    "globals()": (
        CONFIG,
        """
from oloproof import system


def short(question):
    return question + " WORD"


@system(name="picked", version="1")
def answer(case):
    return {"answer": globals()["sh" + "ort"](case["q"])}
""",
    ),
    "getattr on self in a stage": (
        RAG_CONFIG,
        """
from oloproof import Passage, Retrieval, rag_system


@rag_system(name="picked", version="1", depth=2, top_k=1, index_version="i1")
class Picked:
    mode = "_short"

    def _short(self, question):
        return question + " WORD"

    def retrieve(self, input, depth):
        text = getattr(self, self.mode)(input["q"])
        return Retrieval(query=input["q"], depth=depth, candidates=(Passage(doc_id="d", text=text),))

    def generate(self, input, context):
        return {"answer": context.items[0].text}
""",
    ),
}


@pytest.mark.parametrize("kind", sorted(APPS))
def test_an_edit_to_code_picked_by_name_executes_again(tmp_path: Path, kind: str) -> None:
    config, app = APPS[kind]
    root = tmp_path / "p"
    root.mkdir()
    (root / "app.py").write_text(app.replace("WORD", "first"))
    (root / "handlers.py").write_text(HANDLERS.replace("WORD", "first"))
    (root / "oloproof.yaml").write_text(config)
    case = {"id": "c1", "input": {"q": "q1"}, "expected": {"answer": "q1"}}
    (root / "cases.jsonl").write_text(json.dumps(case) + "\n")
    first = oloproof("run", cwd=root)
    assert first.code == 0, first.out + first.err
    edited = "handlers.py" if "module" in kind else "app.py"
    (root / edited).write_text((root / edited).read_text().replace("first", "second"))
    again = oloproof("run", cwd=root)
    assert again.code == 0, again.out + again.err
    assert "Cache: execution 0 hit/1 miss; judgment 0 hit/1 miss" in again.lines, again.out
    (result,) = bundle_cases(root, again.out.split()[1])
    assert result["output"]["answer"] == "q1 second"
