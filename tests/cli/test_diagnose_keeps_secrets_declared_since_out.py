"""A diagnosis keeps out of what it stores a secret the project declared after the diagnosed run.
Real CLI runs in a subprocess, on a real ledger.

(Before: a run stored a system's answers holding the value of MY_SVC, not declared then; once
``secrets: [MY_SVC]`` was added, ``diagnose`` executed the failed cases again, under the run's
recorded config, which declared nothing: the ledger held the value 4 times before and 10 after,
each of the child runs' new executions and case results storing it as it was, where a run
would have kept it out. What was stored before it was declared stays as it is: an event's
address is the hash of its bytes.)
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.test_judge_key_in_the_first_output import stored_bodies
from tests.support import GOLD_RETRIEVE, gold_context_project, oloproof

SECRET = "Zk8-secret-value-31415926"
APP = (
    """
import os
from oloproof import Passage, Retrieval, rag_system


@rag_system(name="steady", version="1", depth=2, top_k=1, index_version="k")
class Steady:"""
    + GOLD_RETRIEVE
    + """
    def generate(self, input, context):
        first = context.items[0]
        said = first.text if first.doc_id == "kb-01" else "no idea"
        return {"answer": said + " " + os.environ["MY_SVC"]}
"""
)
CONFIG = """
system:
  name: steady
  version: "1"
  rag: {object: app:Steady}
dataset: cases.jsonl
concurrency: 1
evaluators:
  - {type: contains, criterion: answered, field: answer, expected_field: answer}
"""
GOLD = ("--intervention", "gold-context", "--criterion", "answered")


def test_what_a_diagnosis_executes_again_is_stored_without_a_secret_declared_since(
    tmp_path: Path,
) -> None:
    root = tmp_path / "p"
    env = {"MY_SVC": SECRET}
    gold_context_project(root, app=APP, config=CONFIG, questions=["q1", "q2"], env=env)
    before = stored_bodies(root).count(SECRET)
    assert before == 4  # each case's execution and result, as recorded before it was declared
    (root / "oloproof.yaml").write_text(CONFIG + "secrets: [MY_SVC]\n")
    done = oloproof("diagnose", "latest", *GOLD, "--json", cwd=root, env=env)
    assert done.code == 0, done.err
    summary = json.loads(done.out)["diagnosis"]["summary"]
    # Its child runs' answers hold the value now declared: each errors (SecretInAnswer, its
    # error giving the answer as stored), so none could be judged as given, nor recovered.
    assert (summary["selected"], summary["recovered"]) == (2, 0), summary
    assert stored_bodies(root).count(SECRET) == before
    assert "Its start, as stored: {answer: Two business days. [redacted]}" in stored_bodies(root)
    verified = oloproof("diagnose", "--verify", json.loads(done.out)["address"], cwd=root, env=env)
    assert verified.code == 0, verified.out + verified.err


def test_a_secret_declared_since_too_short_to_keep_out_stops_the_diagnosis(
    tmp_path: Path,
) -> None:
    root = tmp_path / "p"
    gold_context_project(root, app=APP, config=CONFIG, questions=["q1"], env={"MY_SVC": "pin42"})
    (root / "oloproof.yaml").write_text(CONFIG + "secrets: [MY_SVC]\n")
    done = oloproof("diagnose", "latest", *GOLD, cwd=root, env={"MY_SVC": "pin42"})
    assert (done.code, done.out) == (2, "")
    assert done.err.startswith(f"error: {root}/oloproof.yaml: secrets: the value of MY_SVC is "), (
        done.err
    )
    assert "pin42" not in done.err
