"""An evaluator's ``expected_field`` that no case's ``expected`` holds is refused, as a slice
on a metadata key no case has is: the file, the line, the evaluator, the field, the fields the
cases do hold and the closest of them; exit 2, before the ledger is made. Real CLI.

(Before: ``expected_field: answr`` excluded every case from its metric, no_expected_value,
and the run printed ``0 / 0 observed · 0 missing · 2 excluded``; under a rule on it the gate
blocked, exit 3, for want of evidence, as if no case were labelled.)
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.support import oloproof, write_project

from oloproof.testing import ScriptedJudgeServer, verdict

APP = """
from oloproof import system

@system(name="echo", version="1")
def run(case):
    return {"answer": case["q"]}
"""
CONFIG = """\
system: {{name: echo, version: "1", callable: app:run}}
dataset: cases.jsonl
policy: policy.yaml
evaluators:
  - {{type: contains, criterion: echo, field: answer, expected_field: answer}}
  - {{type: equals, criterion: exact, field: answer, expected_field: {field}}}
"""
POLICY = "version: 1\nrules:\n  - {id: floor, metric: exact, min: 0.5}\n"
CASES = [
    {"id": "c1", "input": {"q": "x"}, "expected": {"answer": "x", "gold": {"answer": "x"}}},
    {"id": "c2", "input": {"q": "y"}, "expected": {"answer": "y", "notes": None}},
]


def _run(root: Path, field: str, cases: list[dict[str, Any]] = CASES) -> tuple[int, str, str]:
    write_project(root, app=APP, config=CONFIG.format(field=field), policy=POLICY, cases=cases)
    done = oloproof("run", "--json", cwd=root)
    return done.code, done.out, done.err


def test_a_misspelt_expected_field_is_refused(tmp_path: Path) -> None:
    code, out, err = _run(tmp_path / "p", "answr")
    assert (code, out) == (2, ""), err
    config = (tmp_path / "p" / "oloproof.yaml").resolve()
    assert err == (
        f"error: {config}, line 6: evaluators.1: expected_field 'answr' of 'exact': no case "
        "has it in expected, so every case would be excluded from the metric (the cases' "
        "expected fields: answer, gold, notes); did you mean 'answer'?\n"
    )
    assert not (tmp_path / "p" / ".oloproof").exists()


def test_a_misspelt_dotted_field_names_the_paths_of_its_depth(tmp_path: Path) -> None:
    code, out, err = _run(tmp_path / "p", "gold.answr")
    assert (code, out) == (2, ""), err
    assert "expected_field 'gold.answr' of 'exact': no case has it in expected" in err
    assert "(the cases' expected fields: gold.answer); did you mean 'gold.answer'?\n" in err
    assert not (tmp_path / "p" / ".oloproof").exists()


def test_a_field_some_cases_hold_is_read(tmp_path: Path) -> None:
    # c1 alone holds gold.answer: c2 is a case nobody labelled, excluded as before.
    code, out, err = _run(tmp_path / "p", "gold.answer")
    assert code == 3, out + err  # one case observed: too few to decide the floor
    exact = next(m for m in json.loads(out)["metrics"] if m["criterion"] == "exact")
    assert (exact["successes"], exact["observed"]) == (1, 1)
    assert exact["excluded_reasons"] == {"no_expected_value": 1}


def test_a_field_held_as_null_is_no_misspelling(tmp_path: Path) -> None:
    # Every case holding it is null: written, so meant, and each case is unlabelled there.
    code, out, err = _run(
        tmp_path / "p", "notes", [{**c, "expected": {"answer": "x", "notes": None}} for c in CASES]
    )
    assert code == 3, out + err
    exact = next(m for m in json.loads(out)["metrics"] if m["criterion"] == "exact")
    assert exact["excluded_reasons"] == {"no_expected_value": 2}


def test_cases_with_no_expected_at_all(tmp_path: Path) -> None:
    cases = [{"id": "c1", "input": {"q": "x"}}]
    code, out, err = _run(tmp_path / "p", "answer", cases)
    assert (code, out) == (2, ""), err
    assert err.endswith(
        "evaluators.0: expected_field 'answer' of 'echo': no case has it in expected, so every "
        "case would be excluded from the metric (no case has any)\n"
    )


JUDGE_CONFIG = """\
system: {{name: echo, version: "1", callable: app:run}}
evaluators:
  - type: answer_judge
    provider: openai
    model: m
    base_url: {url}
    api_key_env: JUDGE_KEY
    expected_field: reference
"""


def test_an_answer_judge_is_refused_before_any_call(tmp_path: Path) -> None:
    with ScriptedJudgeServer(default=verdict(True)) as server:
        root = write_project(
            tmp_path / "p",
            app=APP,
            config=JUDGE_CONFIG.format(url=server.openai_base_url),
            policy="version: 1\nrules: []\n",
            cases=CASES,
        )
        done = oloproof("run", cwd=root, env={"JUDGE_KEY": "judge-key-0123456789"})
        calls = len(server.requests)
    assert (done.code, done.out, calls) == (2, "", 0), done.err
    config = (root / "oloproof.yaml").resolve()
    assert done.err.startswith(f"error: {config}, line 8: evaluators.0: expected_field ")
    assert "'reference' of 'answer_equivalent': no case has it in expected" in done.err
    assert not (root / ".oloproof").exists()
