"""Every child run of a diagnosis asks its judges again, the intervention as its control.

A deterministic staged system is gated by an LLM judge that, like a model sampled at a non-zero
temperature, agrees with a right answer only the first time it is shown it. Diagnosed twice in
a row through the real CLI, the second diagnosis's child runs produce the same answers as the
first's, so their executions are the same events: the judgments the first diagnosis stored for
them used to be read back, the judge was not asked at all, and the second diagnosis printed the
first one's recoveries as if it had observed them again.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.support import GOLD_RETRIEVE, child_run_reports, gold_context_project, oloproof

from oloproof.testing import RecordedRequest, Reply, ScriptedJudgeServer, answer

APP = (
    """
from oloproof import Passage, Retrieval, rag_system


@rag_system(name="steady", version="1", depth=2, top_k=1, index_version="k")
class Steady:"""
    + GOLD_RETRIEVE
    + """
    def generate(self, input, context):
        first = context.items[0]
        return {"answer": first.text if first.doc_id == "kb-01" else "no idea"}
"""
)

CONFIG = """
system:
  name: steady
  version: "1"
  rag: {{object: app:Steady}}
dataset: cases.jsonl
concurrency: 1
evaluators:
  - type: answer_judge
    provider: openai
    model: first-time-judge
    base_url: {url}
    api_key_env: FRESH_JUDGE_KEY
    max_retries: 0
"""

QUESTIONS = ["q1", "q2", "q3", "q4"]
GOLD = ["--intervention", "gold-context", "--criterion", "answer_equivalent"]
ENV = {"FRESH_JUDGE_KEY": "fresh-judge-key-0123456789"}


class FirstTimeJudge:
    """Passes an answer holding the expected words the first time it is shown each question's
    answer, fails it after that; fails every other answer."""

    def __init__(self) -> None:
        self.shown: Counter[str] = Counter()

    def __call__(self, request: RecordedRequest) -> Reply:
        prompt = request.user_message
        self.shown[prompt] += 1
        right = "Two business days." in prompt.split("<answer>")[-1]
        verdict = "pass" if right and self.shown[prompt] == 1 else "fail"
        return answer(json.dumps({"verdict": verdict, "reason": "compared"}))


@pytest.fixture()
def project(tmp_path: Path) -> Iterator[tuple[Path, str, ScriptedJudgeServer]]:
    with ScriptedJudgeServer(default=FirstTimeJudge()) as server:
        root = tmp_path / "steady"
        config = CONFIG.format(url=server.openai_base_url)
        run_id = gold_context_project(root, app=APP, config=config, questions=QUESTIONS, env=ENV)
        yield root, run_id, server


def ok(*args: str, cwd: Path) -> list[str]:
    done = oloproof(*args, cwd=cwd, env=ENV)
    assert done.code == 0, done.out + done.err
    return done.lines


def test_a_diagnosis_made_again_asks_the_judge_again(
    project: tuple[Path, str, ScriptedJudgeServer],
) -> None:
    root, run_id, server = project
    first = ok("diagnose", run_id, *GOLD, cwd=root)
    assert "Recovered under gold context: 4 of 4" in first
    asked = len(server.requests)
    again = ok("diagnose", run_id, *GOLD, cwd=root)
    # The judge is asked about each case of both child runs again, and now fails the answers it
    # passed the first time: nothing recovered.
    assert len(server.requests) - asked == 8
    assert "Recovered under gold context: 0 of 4" in again
    # [hits, misses, shared] of each child run's judgments: every one made by it.
    judgments = [report["cache"]["judgment"] for report in child_run_reports(root, again, ENV)]
    assert judgments == [[0, 4, 0], [0, 4, 0]]
    address = re.findall(r"sha256:[0-9a-f]{64}", again[-1])[0]
    ok("diagnose", "--verify", address, cwd=root)
    ok("verify", cwd=root)
