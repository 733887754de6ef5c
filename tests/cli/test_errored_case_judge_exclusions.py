"""An errored case the answer judge would exclude (no reference answer) is excluded, not missing.

Beside `contains`, `equals` and the retrieval metrics (test_errored_case_exclusions), the answer
judge excludes a case whose expected values hold no reference answer (`no_expected_value`),
whatever it answered, and asks the model nothing. An errored case without one was recorded
`missing: execution_errored`, widening the metric's interval with cases that could never
count. It now records the exclusion, as the case does when it runs; an errored case with a
reference answer stays missing. The judge is a server on 127.0.0.1 that passes every answer.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.support import bundle_cases, oloproof, write_project

from oloproof.testing import ScriptedJudgeServer, verdict

APP = """
from oloproof import system

@system(name="toy", version="1")
def run(case):
    if case["q"].startswith("boom"):
        raise RuntimeError("upstream down")
    return {"answer": "yes"}
"""
CONFIG = """\
system: {{name: toy, version: "1", callable: "app:run"}}
dataset: cases.jsonl
policy: policy.yaml
evaluators:
  - type: answer_judge
    provider: openai
    model: passes-all
    base_url: {url}
    api_key_env: JUDGE_KEY
    max_retries: 0
"""
ENV = {"JUDGE_KEY": "judge-key-0123456789"}


def test_an_errored_case_without_a_reference_answer_is_excluded(tmp_path: Path) -> None:
    cases = [
        *(
            {"id": f"ok{i}", "input": {"q": f"q{i}"}, "expected": {"answer": "yes"}}
            for i in range(6)
        ),
        {"id": "unlabelled", "input": {"q": "boom1"}, "expected": {}},
        {"id": "labelled", "input": {"q": "boom2"}, "expected": {"answer": "yes"}},
    ]
    with ScriptedJudgeServer(default=verdict(True)) as server:
        root = write_project(
            tmp_path / "p",
            app=APP,
            config=CONFIG.format(url=server.openai_base_url),
            policy="version: 1\nrules:\n  - {id: r, metric: answer_equivalent, min: 0.1}\n",
            cases=cases,
        )
        done = oloproof("run", "--json", cwd=root, env=ENV)
    report = json.loads(done.out)
    (metric,) = report["metrics"]
    # Was: 2 missing, both execution_errored.
    assert (metric["observed"], metric["missing"], metric["excluded"]) == (6, 1, 1), metric
    assert metric["missing_reasons"] == {"execution_errored": 1}
    assert metric["excluded_reasons"] == {"no_expected_value": 1}
    verdicts = {c["id"]: c["verdicts"] for c in bundle_cases(root, report["run_id"])}
    assert verdicts["unlabelled"] == {
        "answer_equivalent": {"s": "excluded", "r": "no_expected_value"}
    }
    assert verdicts["labelled"] == {"answer_equivalent": {"s": "missing", "r": "execution_errored"}}
    assert oloproof("verify", cwd=root).code == 0
