"""``diagnose`` of a run another process is still writing says so, through the CLI.

The probe: a staged run held on its third of four cases, diagnosed under gold context while
held. The diagnosis counted the two cases not yet written as never finished in the parent run
and printed nothing saying the run was still running.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from tests.support import GOLD_DIAGNOSIS, GOLD_RETRIEVE, oloproof, run_in_progress

APP = (
    """
import os
import sys
import time
from pathlib import Path

from oloproof import Passage, Retrieval, rag_system

HERE = Path(__file__).parent


@rag_system(name="held", version="1", depth=2, top_k=1, index_version="k")
class Held:"""
    + GOLD_RETRIEVE
    + """
    def generate(self, input, context):
        if context.source == "gold":
            return {"answer": context.items[0].text}
        if input["question"] == os.environ.get("HOLD"):
            sys.stderr.write("holding\\n")
            sys.stderr.flush()
            while not (HERE / "release").exists():
                time.sleep(0.05)
        return {"answer": "no idea"}
"""
)
CONFIG = """
system:
  name: held
  version: "1"
  rag: {object: app:Held}
dataset: cases.jsonl
concurrency: 1
evaluators:
  - {type: contains, criterion: answer_correct, field: answer, expected_field: answer}
"""
EXPECTED = {
    "answer": "Two business days",
    "relevant": [{"doc_id": "kb-01"}],
    "gold_context": [{"doc_id": "kb-01", "text": "Two business days."}],
}


def test_a_diagnosis_of_a_running_run_says_it_is_running(tmp_path: Path) -> None:
    root = tmp_path / "p"
    root.mkdir()
    (root / "app.py").write_text(APP)
    (root / "oloproof.yaml").write_text(CONFIG)
    (root / "cases.jsonl").write_text(
        "".join(
            json.dumps({"id": q, "input": {"question": q}, "expected": EXPECTED}) + "\n"
            for q in ("q1", "q2", "q3", "q4")
        )
    )
    with run_in_progress(root, "holding\n", {"HOLD": "q3"}) as proc:
        for _ in range(600):  # the 2 cases before the held one are written within seconds
            listed = oloproof("runs", "--json", cwd=root)
            assert listed.code == 0, listed.err
            (row,) = json.loads(listed.out)
            if row["cases"] == 2:
                break
            time.sleep(0.2)
        run_id = row["run_id"]
        done = oloproof("diagnose", run_id, *GOLD_DIAGNOSIS, "--json", cwd=root)
        assert done.code == 0, done.out + done.err
        # Was: nothing on stderr.
        assert done.err == (
            f"note: {run_id} is still running (2 of 4 cases so far; another process "
            f"(pid {proc.pid}) is writing it); this diagnosis reads the cases written so far, "
            "and counts the others as never finished\n"
        ), done.err
        data = json.loads(done.out)
        assert data["still_running"] == {"run_id": run_id, "cases": 2, "planned_cases": 4}
        (root / "release").touch()
