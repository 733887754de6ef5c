"""The note on a newer run that stopped never prints part of a secret declared after it ran.
Real CLI runs in a subprocess, on a real ledger.

(Before: a run stopped on an error holding the value of MY_SVC, not yet declared, so stored as
it was; once ``secrets: [MY_SVC]`` was added, ``inspect latest``, its ``--json`` and
``compare`` printed the note on that run with its reason cut at 160 characters, and the cut
fell inside the value: ``… kkkkZk8-secret-v…``, twelve of its characters, which no redaction
of the printed line could recognise as the secret.)
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.support import oloproof

SECRET = "Zk8-secret-value-31415926"
APP = """
import os
from oloproof import current_case, system

@system(name="leaky", version="1")
def answer(case):
    if os.environ.get("BREAK"):
        # An artifact kind the system does not declare stops the run, naming the kind.
        current_case().record("k" * 115 + os.environ["MY_SVC"], {})
    return {"answer": "ok"}
"""
CONFIG = """\
system: {name: leaky, version: "1", callable: app:answer}
dataset: cases.jsonl
evaluators:
  - {type: contains, criterion: ok, field: answer, expected_field: answer}
"""


def test_a_stopped_run_s_reason_is_cut_after_the_secret_is_kept_out(tmp_path: Path) -> None:
    root = tmp_path / "p"
    root.mkdir()
    (root / "app.py").write_text(APP)
    (root / "oloproof.yaml").write_text(CONFIG)
    case = {"id": "c", "input": {"q": 1}, "expected": {"answer": "ok"}}
    (root / "cases.jsonl").write_text(json.dumps(case) + "\n")
    env = {"MY_SVC": SECRET}
    assert oloproof("run", cwd=root, env=env).code == 0
    stopped = oloproof("run", "--no-cache", cwd=root, env={**env, "BREAK": "1"})
    assert stopped.code == 2 and SECRET in stopped.err  # not declared yet: as it was
    (root / "oloproof.yaml").write_text(CONFIG + "secrets: [MY_SVC]\n")
    for command in (
        ("inspect", "latest"),
        ("inspect", "latest", "--json"),
        ("compare", "latest", "latest"),
    ):
        done = oloproof(*command, cwd=root, env=env)
        printed = done.out + done.err
        assert "stopped: case 'c': the system recorded a kkk" in printed, (command, printed)
        assert SECRET[:8] not in printed, (command, printed)
