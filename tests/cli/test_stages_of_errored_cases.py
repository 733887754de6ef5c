"""The Stages line of a run counts the stages a case ran and stored before it errored.

Eight cases; retrieve runs for all of them and generate raises on one. Its retrieval is
stored (a later run finds it in the stage cache), so the run's Stages line counts eight
retrievals, and the errored case's execution event links the retrieve stage it ran, as the
ledger holds it. The line used to say seven: the engine returned the error without the stages.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.support import oloproof

from oloproof import events as ev
from oloproof.store import open_project_ledger

RUN_ID = re.compile(r"run_[0-9A-Z]{26}")

APP = """
from oloproof import Passage, Retrieval, rag_system


@rag_system(name="breaks", version="1", depth=2, top_k=1)
class Breaks:
    def retrieve(self, input, depth):
        q = input["question"]
        return Retrieval(query=q, depth=depth, candidates=(
            Passage(doc_id=f"{q}-doc", score=1.0, text=f"About {q}."),
        ))

    def generate(self, input, context):
        if input["question"] == "q5":
            raise RuntimeError("the model is down for q5")
        return {"answer": context.items[0].text}
"""

CONFIG = """
system:
  name: breaks
  version: "1"
  rag: {object: app:Breaks}
dataset: cases.jsonl
concurrency: 2
evaluators:
  - {type: contains, criterion: answered, field: answer, expected_field: answer}
"""


def project(root: Path, config: str = CONFIG) -> Path:
    root.mkdir()
    (root / "app.py").write_text(APP)
    (root / "oloproof.yaml").write_text(config)
    with (root / "cases.jsonl").open("w") as f:
        for n in range(8):
            case = {"id": f"q{n}", "input": {"question": f"q{n}"}, "expected": {"answer": "About"}}
            f.write(json.dumps(case) + "\n")
    return root


def stages_line(out: str) -> str:
    return next(line for line in out.splitlines() if line.startswith("Stages:"))


def errored_execution_stages(root: Path, run_id: str) -> list[str]:
    """The stages the errored case's execution event links, by kind."""
    ledger = open_project_ledger(root, create=False)
    try:
        for _, event in ledger.lookup_events("run_cases", run_id):
            if event.type == ev.CASE_RESULT and event.body["status"] == "errored":
                execution = ledger.get(event.body["execution"]).body
                assert execution["error"]["message"] == "the model is down for q5"
                return [s["stage"] for s in execution.get("stages", [])]
    finally:
        ledger.close()
    raise AssertionError("no errored case")


def test_the_stages_of_an_errored_case_are_counted_and_linked(tmp_path: Path) -> None:
    root = project(tmp_path / "p")
    first = oloproof("run", cwd=root)
    assert first.code == 0, first.err
    assert stages_line(first.out) == "Stages: retrieve 0 hit/8 miss; generate 0 hit/7 miss"
    run_id = RUN_ID.findall(first.lines[0])[0]
    assert errored_execution_stages(root, run_id) == ["retrieve"]
    assert oloproof("inspect", run_id, cwd=root).out.count(stages_line(first.out)) == 1
    # The errored case runs again; its retrieval was stored, so it is found in the cache.
    second = oloproof("run", cwd=root)
    assert second.code == 0, second.err
    assert stages_line(second.out) == "Stages: retrieve 1 hit/0 miss; generate 0 hit/0 miss"
    verified = oloproof("verify", cwd=root)
    assert verified.code == 0, verified.out + verified.err
