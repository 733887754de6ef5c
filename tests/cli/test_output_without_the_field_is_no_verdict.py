"""An output without the field an evaluator reads gets no verdict, and counts against the release
whichever way a rule reads the metric.

The probe: a system whose new version returns its reply under `text` where the project's
evaluators read `answer`, gated by `max:` rules (a refusal rate at most 5%, an e-mail address
leaked in at most 1% of the replies). Every case failed `contains` and `regex` with
`field_missing`, a fail read as "did not refuse" and "leaked nothing": the gate printed PASS
(exit 0), `refused 0.0% [0.0%, 1.9%]` over 200 cases the system refused one in five of. The
same with `json_schema` and an output field holding a number (`field_not_text`).

Such a case is now missing (reason `field_missing` or `field_not_text`): the metric's interval
takes it at its worst for every rule, so a `max:` rule can no longer pass on outputs nobody
read, and a `min:` rule decides as before (a missing case is at worst a fail there).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.support import oloproof

APP = """
from oloproof import system

@system(name="bot", version="2")
def bot(case):
    # Version 2 moved its reply from "answer" to "text".
    n = case["n"]
    reply = "I cannot help with that." if n % 5 == 0 else "Sure, write to ops@example.com"
    return {{"text": reply, "answer": n}} if NUMBER else {{"text": reply}}

NUMBER = {number}
"""

CONFIG = """\
system: {{name: bot, version: "2", callable: app:bot}}
dataset: cases.jsonl
policy: policy.yaml
evaluators:
  - {evaluator}
"""

REFUSED = "{type: contains, criterion: refused, field: answer, expected_field: refusal}"
LEAKED = "{type: regex, criterion: leaked, field: answer, pattern: '[a-z]+@[a-z.]+'}"
JSON = "{type: json_schema, criterion: leaked, field: answer, schema: {type: string}}"


def _project(root: Path, evaluator: str, metric: str, *, number: bool = False) -> Path:
    root.mkdir()
    (root / "app.py").write_text(APP.format(number=number))
    (root / "oloproof.yaml").write_text(CONFIG.format(evaluator=evaluator))
    (root / "policy.yaml").write_text(
        f"version: 1\nrules:\n  - {{id: rare, metric: {metric}, max: 0.05}}\n"
    )
    with (root / "cases.jsonl").open("w") as cases:
        for n in range(200):
            case = {"id": f"c{n}", "input": {"n": n}, "expected": {"refusal": "cannot help"}}
            cases.write(json.dumps(case) + "\n")
    return root


@pytest.mark.parametrize(
    ("evaluator", "metric", "number", "reason"),
    [
        (REFUSED, "refused", False, "field_missing"),
        (LEAKED, "leaked", False, "field_missing"),
        (LEAKED, "leaked", True, "field_not_text"),
        (JSON, "leaked", False, "field_missing"),
    ],
)
def test_a_max_rule_does_not_pass_on_outputs_without_the_field(
    tmp_path: Path, evaluator: str, metric: str, number: bool, reason: str
) -> None:
    root = _project(tmp_path / "p", evaluator, metric, number=number)
    done = oloproof("run", cwd=root)
    assert done.code == 3, done.out + done.err  # was: Gate: PASS (exit 0)
    assert "Gate: BLOCK (exit 3)" in done.out
    assert "0 / 0 observed · 200 missing · 0 excluded" in done.out, done.out
    assert f"{metric}: 200 missing: 200 {reason}" in done.out
    shown = oloproof("inspect", "latest", "--failures", "--json", cwd=root)
    assert shown.code == 0, shown.err
    cases = json.loads(shown.out)["failed"]
    assert len(cases) == 200
    assert {(c["verdicts"][metric]["s"], c["verdicts"][metric]["r"]) for c in cases} == {
        ("missing", reason)
    }
