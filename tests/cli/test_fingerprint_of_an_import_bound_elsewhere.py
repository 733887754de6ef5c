"""A module-level name bound by an import (``import json as codec``, ``from json import dumps``,
``from ha import f``) is seen by the code fingerprint for what it holds, through the real CLI.

The walk counted the module or function a name held under that module's or function's own
name, a standard-library one by Python's version alone, and the name's own binding not at all:
a project module doing ``import json as codec`` and calling ``codec.dumps(...)``, edited to
``import pickle as codec``, reused the old answers (``Cache: execution 1 hit/0 miss``) with no
``Not seen by the code fingerprint`` line; so did ``from json import dumps`` edited to ``from
pickle import dumps``, and ``from ha import f`` edited to ``from hb import f`` when both
functions were reached anyway. A stage's class attribute holding a module (``codec = json``,
read as ``self.codec``) was as blind.

Which one such a name holds is now a constant of the key (``constant codec in codec_use.py
changed``).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.support import answered_project, oloproof, write_project

APP = """
import ha
import hb
from codec_use import encoded
from oloproof import system


@system(name="s", version="1")
def answer(case):
    return {"answer": case["q"] + encoded(case["q"])[:0]}
"""

# A project module read through the system, the edit that binds the name to something else,
# and the change the dry run names.
EDITS = {
    "a module imported under another name": (
        "import json as codec\n\ndef encoded(q):\n    return str(codec.dumps(q))\n",
        "import json as codec",
        "import pickle as codec",
        "constant codec in codec_use.py changed",
    ),
    "a library function imported by its name": (
        "from json import dumps\n\ndef encoded(q):\n    return str(dumps(q))\n",
        "from json import dumps",
        "from pickle import dumps",
        "constant dumps in codec_use.py changed",
    ),
    "a submodule imported by its name": (
        "from email import parser\n\ndef encoded(q):\n    return parser.__name__\n",
        "from email import parser",
        "from html import parser",
        "constant parser in codec_use.py changed",
    ),
    "a project function imported by its name": (
        "import ha, hb\nfrom ha import f\n\ndef encoded(q):\n    return ha.f(q) + hb.f(q) + f(q)\n",
        "from ha import f",
        "from hb import f",
        "constant f in codec_use.py changed",
    ),
}


@pytest.mark.parametrize("edit", list(EDITS))
def test_rebinding_an_import_executes_again(tmp_path: Path, edit: str) -> None:
    module, old, new, named = EDITS[edit]
    root = answered_project(tmp_path / "p", APP, cases=2)
    (root / "codec_use.py").write_text(module)
    (root / "ha.py").write_text("def f(q):\n    return q\n")
    (root / "hb.py").write_text("def f(q):\n    return q.upper()\n")
    first = oloproof("run", cwd=root)
    assert "Cache: execution 0 hit/2 miss; judgment 0 hit/2 miss" in first.lines, first.err
    path = root / "codec_use.py"
    path.write_text(path.read_text().replace(old, new))

    dry = oloproof("run", "--dry-run", cwd=root)
    assert f"  2 executions: {named}" in dry.lines, dry.out
    rerun = oloproof("run", cwd=root)
    assert "Cache: execution 0 hit/2 miss; judgment 0 hit/2 miss" in rerun.lines, rerun.out


STAGED = """
import json
import pickle

from oloproof import Retrieval, rag_system


@rag_system(name="s", version="1", depth=2, top_k=1)
class Staged:
    codec = json

    def retrieve(self, input, depth):
        return Retrieval(query=input["q"], depth=depth, candidates=())

    def generate(self, input, context):
        return {"answer": input["q"] + str(self.codec.dumps(1))[:0]}
"""
STAGED_CONFIG = """
system: {name: s, version: "1", rag: {object: "app:Staged"}}
dataset: cases.jsonl
policy: policy.yaml
evaluators:
  - {type: contains, criterion: answered, field: answer, expected_field: answer}
"""


def test_a_stage_s_class_attribute_holding_another_module_generates_again(
    tmp_path: Path,
) -> None:
    cases = (
        {"id": f"q{i}", "input": {"q": f"q{i}"}, "expected": {"answer": f"q{i}"}} for i in (0, 1)
    )
    policy = "version: 1\nrules:\n  - {id: answers, metric: answered, min: 0.5}\n"
    root = write_project(
        tmp_path / "p", app=STAGED, config=STAGED_CONFIG, policy=policy, cases=cases
    )
    first = oloproof("run", cwd=root)
    assert "Stages: retrieve 0 hit/2 miss; generate 0 hit/2 miss" in first.lines, first.err
    path = root / "app.py"
    path.write_text(path.read_text().replace("codec = json", "codec = pickle"))

    rerun = oloproof("run", cwd=root)
    assert "Cache: execution 0 hit/2 miss; judgment 0 hit/2 miss" in rerun.lines, rerun.out
    assert "Stages: retrieve 2 hit/0 miss; generate 0 hit/2 miss" in rerun.lines, rerun.out
