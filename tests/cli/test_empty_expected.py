"""An empty expected text is contained in every output: `contains` excludes such a case (with
its reason) rather than pass it. Real CLI run."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support import oloproof, write_project

APP = """
from oloproof import system

@system(name="echo", version="1")
def run(case):
    return {"answer": "whatever the system says"}
"""


def test_contains_excludes_a_case_whose_expected_text_is_empty(tmp_path: Path) -> None:
    root = write_project(
        tmp_path / "p",
        app=APP,
        config=(
            'system: {name: echo, version: "1", callable: app:run}\ndataset: cases.jsonl\n'
            "evaluators:\n  - {type: contains, criterion: ok, field: answer, expected_field: answer}\n"
        ),
        policy="version: 1\nrules:\n  - {id: floor, metric: ok, min: 0.5}\n",
        cases=[
            {"id": "said", "input": {}, "expected": {"answer": "the system says"}},
            {"id": "blank", "input": {}, "expected": {"answer": ""}},
            {"id": "spaces", "input": {}, "expected": {"answer": "  "}},
        ],
    )
    result = oloproof("run", "--json", cwd=root)
    assert result.code == 0, result.err
    report = json.loads(result.out)
    (tally,) = report["metrics"]
    assert (tally["successes"], tally["observed"], tally["excluded"]) == (1, 1, 2)
    assert tally["excluded_reasons"] == {"empty_expected_value": 2}
