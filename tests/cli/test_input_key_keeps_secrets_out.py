"""A case's input key is made from the input as it is stored, so the ledger holds nothing a guess
at a secret in the input could be checked against. Real CLI runs in a subprocess.

(Before: a case whose input held the value of MY_SVC, declared under ``secrets:``, was stored
with ``[redacted]`` in its input, but its case result and execution stored ``input_key``, the
blake3 key of the input as it was, secret included: anyone reading the ledger could check a
guess at the value by replacing ``[redacted]`` with it and comparing keys, which is what the
code fingerprints are made not to allow.)
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.cli.test_judge_key_in_the_first_output import stored_bodies
from tests.support import oloproof

from oloproof import events as ev

SECRET = "Zk8-secret-value-31415926"
APP = """
from oloproof import system

@system(name="t", version="1")
def answer(case):
    return {"answer": "ok"}
"""
CONFIG = """\
system: {name: t, version: "1", callable: app:answer}
dataset: cases.jsonl
secrets: [MY_SVC]
evaluators:
  - {type: contains, criterion: ok, field: answer, expected_field: answer}
"""


def test_the_input_key_is_the_key_of_the_input_as_stored(tmp_path: Path) -> None:
    root = tmp_path / "p"
    root.mkdir()
    (root / "app.py").write_text(APP)
    (root / "oloproof.yaml").write_text(CONFIG)
    case = {"id": "c", "input": {"q": f"connect with {SECRET}"}, "expected": {"answer": "ok"}}
    (root / "cases.jsonl").write_text(json.dumps(case) + "\n")
    done = oloproof("run", cwd=root, env={"MY_SVC": SECRET})
    assert done.code == 0, done.out + done.err
    stored = stored_bodies(root)
    keys = set(re.findall(r'"input_key": "([0-9a-f]+)"', stored))
    assert keys == {ev.identity_key({"q": "connect with [redacted]"})}, keys
    assert ev.identity_key(case["input"]) not in stored
    # A rotated value, in the input and the variable, leaves the key, and so the cached
    # execution, as it was.
    rotated = SECRET.upper()
    case["input"] = {"q": f"connect with {rotated}"}
    (root / "cases.jsonl").write_text(json.dumps(case) + "\n")
    again = oloproof("run", cwd=root, env={"MY_SVC": rotated})
    assert "Cache: execution 1 hit/0 miss" in again.out, again.out
