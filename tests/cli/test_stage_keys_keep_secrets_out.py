"""The keys a staged system's stages are cached by are made from what is stored, with the
secrets the run keeps out replaced: they do not depend on a secret's value. Real CLI runs in a
subprocess, two projects alike but for the value.

(Before: the retrieve and generate stages of a case whose question and passage held the value
of MY_SVC, declared under ``secrets:``, stored identities keyed on the question and passages
as they were: two projects whose only difference was the value stored different identities,
so a guess at the value could be checked against them.)
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.cli.test_judge_key_in_the_first_output import stored_bodies
from tests.support import oloproof

APP = """
import os
from oloproof import Passage, Retrieval, rag_system


@rag_system(name="steady", version="1", depth=1, top_k=1, index_version="k")
class Steady:
    def retrieve(self, input, depth):
        passage = Passage(doc_id="kb-01", text="The key is " + os.environ["MY_SVC"])
        return Retrieval(query=input["question"], depth=depth, candidates=(passage,))

    def generate(self, input, context):
        return {"answer": "x"}
"""
CONFIG = """\
system:
  name: steady
  version: "1"
  rag: {object: app:Steady}
dataset: cases.jsonl
secrets: [MY_SVC]
evaluators:
  - {type: contains, criterion: answered, field: answer, expected_field: answer}
"""


def stage_keys(root: Path, secret: str) -> list[str]:
    """The stage identities a run of the project (made in ``root``) with ``secret`` stores."""
    root.mkdir()
    (root / "app.py").write_text(APP)
    (root / "oloproof.yaml").write_text(CONFIG)
    case = {"id": "c", "input": {"question": f"is {secret} valid?"}, "expected": {"answer": "x"}}
    (root / "cases.jsonl").write_text(json.dumps(case) + "\n")
    done = oloproof("run", cwd=root, env={"MY_SVC": secret})
    assert done.code == 0, done.out + done.err
    stored = stored_bodies(root)
    assert secret not in stored
    return sorted(re.findall(r'"identity": "([0-9a-f]+)"', stored))


def test_stage_keys_do_not_depend_on_a_secret_s_value(tmp_path: Path) -> None:
    one = stage_keys(tmp_path / "one", "Zk8-secret-value-31415926")
    other = stage_keys(tmp_path / "other", "Qw3-another-value-2718281")
    assert one and one == other
