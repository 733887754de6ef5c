"""Missing cases count against every decision, through the real CLI.

The issue's example: 300 cases, and a system that raises on exactly the 100 it would get wrong.
Counted out of the denominator, those 100 made ``min: 0.9`` PASS (200 / 200 observed) and a
non-inferiority comparison against an all-correct baseline PASS. Counted against the decision,
neither can pass. The printed numbers are checked against scipy, not against the code.
"""

from __future__ import annotations

import html
import json
import math
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path

from scipy.stats import binomtest
from tests.support import calibrate_judge_gate, oloproof, serving_judge_gate

from oloproof.testing import RecordedRequest, Reply, nonsense

APP = """
from oloproof import system

@system(name="flaky", version="1")
def flaky(case):
    q = case["q"]
    if q % 3 == 0:
        raise RuntimeError("boom")
    if q % 50 == 1 and case.get("long"):
        raise ValueError("the index is gone: " + "x" * 300)
    return {"answer": "yes"}

@system(name="perfect", version="1")
def perfect(case):
    return {"answer": "no" if case["q"] % 3 == 0 else "yes"}
"""

CONFIG = """\
system:
  name: {name}
  version: "1"
  callable: app:{name}
dataset: cases.jsonl
evaluators:
  - {{type: contains, criterion: answer_correct, field: answer, expected_field: answer}}
policy: policy.yaml
"""

FLOOR = "version: 1\nrules:\n  - {id: floor, metric: answer_correct, min: 0.9}\n"
NOT_WORSE = (
    "version: 1\nrules:\n  - id: not-worse\n    metric: answer_correct\n"
    "    non_inferiority: {margin: 5}\n"
)


def project(root: Path, n: int = 300, *, long: bool = False) -> Path:
    (root / "app.py").write_text(APP)
    (root / "oloproof.yaml").write_text(CONFIG.format(name="flaky"))
    (root / "baseline.yaml").write_text(CONFIG.format(name="perfect"))
    (root / "policy.yaml").write_text(FLOOR)
    (root / "compare.yaml").write_text(NOT_WORSE)
    lines = []
    for i in range(n):
        case_input = {"q": i, "long": True} if long else {"q": i}
        expected = {"answer": "no" if i % 3 == 0 else "yes"}
        lines.append(json.dumps({"id": f"c{i}", "input": case_input, "expected": expected}))
    (root / "cases.jsonl").write_text("\n".join(lines) + "\n")
    return root


def floor_pct(x: float) -> str:
    """A lower bound printed as the display rule prints it: rounded down to 0.1%."""
    return f"{math.floor(round(x * 1000, 6)) / 10:.1f}%"


def rule_failure(junit: Path, rule_id: str) -> str:
    """The text of the JUnit failure of the rule ``rule_id``."""
    (case,) = (
        c
        for c in ET.parse(junit).getroot().iter("testcase")
        if c.get("name", "").startswith(rule_id)
    )
    failure = case.find("failure")
    assert failure is not None and failure.text is not None
    return failure.text


def test_errored_cases_cannot_pass_a_floor(tmp_path: Path) -> None:
    root = project(tmp_path)
    result = oloproof("run", "--summary", "summary.md", "--junit", "junit.xml", cwd=root)
    assert result.code == 3, result.out + result.err  # was 0: the floor PASSed on 200 / 200
    run_id = result.lines[0].split()[1]
    low = floor_pct(binomtest(200, 300).proportion_ci(0.95, "exact").low)  # 61.0%
    observed_low = floor_pct(binomtest(200, 200).proportion_ci(0.95, "exact").low)  # 98.1%
    expected = [
        f"Run {run_id} [DECIDED/PARTIAL]",
        f"100 of 300 cases errored: RuntimeError: boom (first: c0) · oloproof inspect {run_id} "
        "--failures",
        "Gate: BLOCK (exit 3)",
        "┌───────┬────────────────┬───────────────────────┬──────────────────────┐",
        "│ rule  │ metric         │ decision              │ reason               │",
        "├───────┼────────────────┼───────────────────────┼──────────────────────┤",
        "│ floor │ answer_correct │ INSUFFICIENT_EVIDENCE │ missing_cases_decide │",
        "└───────┴────────────────┴───────────────────────┴──────────────────────┘",
        "floor: 100 missing cases decide it: on the observed cases alone it would be PASS "
        "(interval_above_threshold)",
        "",
        "┌────────────────┬──────────┬─────────────────┬───────────────────────────────────────────────┐",
        "│ metric         │ estimate │ interval        │ evidence                                      │",
        "├────────────────┼──────────┼─────────────────┼───────────────────────────────────────────────┤",
        f"│ answer_correct │ 100.0%   │ [{low}, 100.0%] │ 200 / 200 observed · 100 missing · 0 excluded │",
        "└────────────────┴──────────┴─────────────────┴───────────────────────────────────────────────┘",
        "answer_correct: 100 missing: 100 execution_errored",
        "  the interval counts them as failing for the lower bound and passing for the upper; "
        f"the 200 observed alone give [{observed_low}, 100.0%]",
        "Cache: execution 0 hit/300 miss; judgment 0 hit/200 miss",
    ]
    assert result.lines == expected
    inspected = oloproof("inspect", run_id, cwd=root)
    assert inspected.lines[:-1] == expected  # the same, re-derived from the ledger
    report = json.loads(oloproof("inspect", run_id, "--json", cwd=root).out)
    (row,) = report["metrics"]
    ci = binomtest(200, 300).proportion_ci(0.95, "exact")
    assert math.isclose(row["lower"], ci.low, abs_tol=1e-12) and row["upper"] == 1.0
    assert row["observed_lower"] < 1.0 and row["missing_reasons"] == {"execution_errored": 100}
    (rule,) = report["rules"]
    assert rule["detail"]["observed_only"]["outcome"] == "PASS"
    # Every output that shows the rule says what decided it, as the terminal does.
    said = expected[8]
    assert said in (root / "summary.md").read_text().splitlines()
    assert rule_failure(root / "junit.xml", "floor").splitlines()[-1] == said
    assert oloproof("view", "--export", "site", run_id, cwd=root).code == 0
    assert said in html.unescape((root / "site" / "runs" / run_id / "index.html").read_text())
    assert report["errors"] == [
        {"type": "RuntimeError", "message": "boom", "count": 100, "first": "c0"}
    ]


def test_errored_cases_cannot_pass_a_comparison(tmp_path: Path) -> None:
    root = project(tmp_path)
    baseline = oloproof("run", "--config", "baseline.yaml", cwd=root)
    assert baseline.code == 0, baseline.out + baseline.err
    candidate = oloproof("run", cwd=root)
    assert candidate.code == 3
    base_id, cand_id = baseline.lines[0].split()[1], candidate.lines[0].split()[1]
    result = oloproof(
        "compare", cand_id, base_id, "--policy", "compare.yaml", "--summary", "summary.md",
        "--junit", "junit.xml", cwd=root,
    )  # fmt: skip
    assert result.code == 3, result.out + result.err  # was 0: PASS on +0.0 [-2.7, +2.7]
    assert result.lines[1:] == [
        "not paired 100: errored in candidate (c0, c3, c6, c9, c12 and 95 more)",
        "answer_correct: +0.0 points [-42.7, +1.9] · 200 paired · 100 missing · 0 excluded",
        "  the interval counts the 100 missing against the candidate (lower bound) and for it "
        "(upper bound); the 200 paired alone give [-2.7, +2.7]",
        "  missing 100: errored_in_candidate",
        "Decisions",
        "  not-worse  answer_correct  non-inferiority, margin 5.0 points  INSUFFICIENT_EVIDENCE  "
        "missing_cases_decide",
        "    100 missing pairs decide it: on the 200 paired alone it would be PASS "
        "(interval_above_margin)",
        "Gate: BLOCK (exit 3)",
    ]
    data = json.loads(
        oloproof("compare", cand_id, base_id, "--policy", "compare.yaml", "--json", cwd=root).out
    )
    assert data["decisions"][0]["detail"]["missing"] == 100
    # Every output that shows the rule says what decided it, as the terminal does.
    said = result.lines[-2].strip()
    summary = (root / "summary.md").read_text().splitlines()
    assert f"not-worse: {said}" in summary
    assert f"answer_correct: {result.lines[3].strip()}" in summary  # how the interval counts
    assert rule_failure(root / "junit.xml", "not-worse").splitlines()[-1] == said
    assert oloproof("view", "--export", "site", cand_id, base_id, cwd=root).code == 0
    pages = [p.read_text() for p in (root / "site" / "comparisons").rglob("*.html")]
    assert any(said in html.unescape(page) for page in pages)


def test_a_never_rule_cannot_pass_with_cases_missing(tmp_path: Path) -> None:
    root = project(tmp_path, n=30)
    (root / "policy.yaml").write_text(
        "version: 1\nrules:\n  - {id: never, metric: answer_correct, kind: observed_count, "
        "max_failures: 0}\n"
    )
    result = oloproof("run", cwd=root)
    assert result.code == 3, result.out + result.err  # was 0: 0 observed failures
    assert "│ never │ answer_correct │ INSUFFICIENT_EVIDENCE │ missing_cases_decide │" in (
        result.lines
    )
    assert (
        "never: 10 missing cases decide it: on the observed cases alone it would be PASS "
        "(observed_failures_within_limit)" in result.lines
    )


def test_the_errored_line_groups_errors_most_common_first(tmp_path: Path) -> None:
    root = project(tmp_path, n=300, long=True)
    result = oloproof("run", cwd=root)
    run_id = result.lines[0].split()[1]
    # Multiples of 3 raise RuntimeError (100 of them); of q % 50 == 1, the four that are not
    # multiples of 3 (c1, c101, c151, c251) raise a ValueError with a 319-character message.
    message = "the index is gone: " + "x" * 40 + "…"  # cut at 60 characters
    assert result.lines[1] == (
        f"104 of 300 cases errored: RuntimeError: boom (100, first: c0); ValueError: {message} "
        f"(4, first: c1) · oloproof inspect {run_id} --failures"
    )


def judge_that_cannot_say_fail(default: Callable[[RecordedRequest], Reply]) -> Callable[..., Reply]:
    def reply(request: RecordedRequest) -> Reply:
        answer = default(request)
        return nonsense() if '"fail"' in answer.text else answer

    return reply


def test_missing_judge_verdicts_count_against_the_judge_metric(tmp_path: Path) -> None:
    env = {"JUDGE_GATE_KEY": "sk-test"}
    with serving_judge_gate(tmp_path) as (root, server):
        (root / "policy.yaml").write_text(
            (root / "policy.yaml").read_text().replace("min: 0.60", "min: 0.65")
        )
        calibrate_judge_gate(root, env)
        assert callable(server.default)
        server.default = judge_that_cannot_say_fail(server.default)
        result = oloproof("run", cwd=root, env=env)
    assert result.code == 3, result.out + result.err  # was 0: 11 / 11 cleared 0.65
    assert "│ grounded │ groundedness │ INSUFFICIENT_EVIDENCE │ missing_cases_decide │" in (
        result.lines
    )
    low = floor_pct(binomtest(11, 12).proportion_ci(0.95, "exact").low)  # 61.5%
    metric = next(line for line in result.lines if line.startswith("│ groundedness │ 100.0%"))
    assert f"[{low}, 100.0%]" in metric and "11 / 11 observed · 1 missing" in metric
    corrected = next(line for line in result.lines if "judged pass" in line)
    assert "11 / 11 judged pass · 1 missing · sensitivity 19/20 · specificity 20/20" in corrected
    # Counted as a judged fail, the missing verdict gives the lower bound of 11 of 12 judged
    # passes, the one the judge_gate example prints when the judge answers every case (it
    # printed [84.2%, 100.0%] when the unanswered case left the denominator).
    assert "│ 100.0%    │ [62.3%, 100.0%] │" in corrected
    assert (
        "grounded: 1 missing case decides it: on the observed cases alone it would be PASS "
        "(interval_above_threshold)" in result.lines
    )
