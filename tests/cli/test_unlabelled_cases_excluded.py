"""`contains` and `equals` look at the label first: a case with no expected value (or, for
`contains`, an empty one) is excluded whatever its output holds, so the shape of unlabelled
outputs moves neither the metric's denominator nor the gate. Real CLI run.

(Before: such a case was excluded when the output had the field as text, but failed with
`field_missing` or `field_not_text` when it had not, and the gate blocked on it.)
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.support import oloproof, write_project

APP = """
from oloproof import system

@system(name="echo", version="1")
def run(case):
    return case["out"]
"""


def test_an_unlabelled_case_is_excluded_whatever_its_output(tmp_path: Path) -> None:
    root = write_project(
        tmp_path / "p",
        app=APP,
        config=(
            'system: {name: echo, version: "1", callable: app:run}\ndataset: cases.jsonl\n'
            "policy: policy.yaml\nevaluators:\n"
            "  - {type: contains, criterion: answer_correct}\n"
            "  - {type: equals, criterion: answer_exact}\n"
        ),
        policy="version: 1\nrules:\n"
        "  - {id: never-wrong, metric: answer_correct, kind: observed_count, max_failures: 0}\n",
        cases=[
            {
                "id": "labelled",
                "input": {"out": {"answer": "Paris"}},
                "expected": {"answer": "Paris"},
            },
            {"id": "text", "input": {"out": {"answer": "I cannot help"}}, "expected": {}},
            {"id": "refusal", "input": {"out": {"refusal": "I cannot help"}}, "expected": {}},
            {"id": "number", "input": {"out": {"answer": 7}}, "expected": {}},
            {"id": "null_label", "input": {"out": 7}, "expected": {"answer": None}},
            {"id": "blank_label", "input": {"out": {}}, "expected": {"answer": " "}},
        ],
    )
    result = oloproof("run", "--json", cwd=root)
    assert result.code == 0, result.out + result.err
    report = json.loads(result.out)
    assert report["gate_label"] == "PASS"
    tallies = {m["criterion"]: m for m in report["metrics"]}
    contains, equals = tallies["answer_correct"], tallies["answer_exact"]
    assert (contains["successes"], contains["observed"]) == (1, 1)
    assert contains["excluded_reasons"] == {"no_expected_value": 4, "empty_expected_value": 1}
    # equals would compare " " with what the output holds there: nothing, so no verdict.
    assert (equals["successes"], equals["observed"], equals["missing"]) == (1, 1, 1)
    assert equals["excluded_reasons"] == {"no_expected_value": 4}
