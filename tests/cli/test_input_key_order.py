"""A case's input whose keys are written in another order, through the real CLI.

An execution is keyed on the case's input as the ledger stores it, whose mappings are in one
order whatever order the cases file wrote them in; yet the system was handed the input in the
file's order. Code that reads that order (a prompt built from `case.items()`, `json.dumps(case)`
sent to a model or an endpoint) answers the two orders differently, and one answer was used
for both. Measured with a system that answers its input's keys joined:

- a cases file saved again with its keys in another order (`{"q", "k"}` re-saved as
  `{"k", "q"}`) served the earlier run's `q,k` from the cache, where the same run with
  `--no-cache` answered `k,q`: a result for a call that was never made;
- two cases of one run whose inputs differ only in key order shared one execution: the second
  was recorded with the first's `q,k`, where run alone it answered `k,q`.

The system is now handed the input in the order the ledger stores it (the order `inspect`
shows), so what it is handed is what the execution is keyed on, in any file order.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.support import oloproof, write_project

APP = """
from oloproof import system


@system(name="keys", version="1")
def run(case):
    return {"answer": ",".join(case)}
"""
CONFIG = """\
system: {name: keys, version: "1", callable: "app:run"}
dataset: cases.jsonl
concurrency: 1
evaluators:
  - {type: equals, criterion: same, field: answer, expected_field: answer}
"""


def _write_cases(root: Path, *inputs: tuple[str, dict[str, Any]]) -> None:
    lines = (
        json.dumps({"id": case_id, "input": given, "expected": {"answer": "k,q"}})
        for case_id, given in inputs
    )
    (root / "cases.jsonl").write_text("".join(line + "\n" for line in lines))


def _answers(root: Path, *args: str) -> dict[str, Any]:
    """Run with ``args`` and give each case's recorded output."""
    done = oloproof("run", *args, cwd=root)
    assert done.code == 0, done.out + done.err
    answers = {}
    for case_id in json.loads((root / "ids.json").read_text()):
        shown = oloproof("inspect", "latest", "--case", case_id, "--json", cwd=root)
        assert shown.code == 0, shown.out + shown.err
        answers[case_id] = json.loads(shown.out)["output"]["answer"]
    return answers


def _project(root: Path, *inputs: tuple[str, dict[str, Any]]) -> Path:
    write_project(root, app=APP, config=CONFIG, policy="", cases=())
    _write_cases(root, *inputs)
    (root / "ids.json").write_text(json.dumps([case_id for case_id, _ in inputs]))
    return root


def test_a_cached_execution_is_what_the_code_answers_for_the_file_saved_again(
    tmp_path: Path,
) -> None:
    root = _project(tmp_path / "project", ("a", {"q": 1, "k": 2}))
    _answers(root)
    _write_cases(root, ("a", {"k": 2, "q": 1}))  # the same content, its keys re-ordered
    cached = _answers(root)
    made = _answers(root, "--no-cache")
    assert cached == made


def test_cases_whose_inputs_differ_in_key_order_share_what_each_would_be_answered(
    tmp_path: Path,
) -> None:
    both = _answers(_project(tmp_path / "both", ("a", {"q": 1, "k": 2}), ("b", {"k": 2, "q": 1})))
    alone = {
        case_id: _answers(_project(tmp_path / case_id, (case_id, given)))[case_id]
        for case_id, given in (("a", {"q": 1, "k": 2}), ("b", {"k": 2, "q": 1}))
    }
    assert both == alone
