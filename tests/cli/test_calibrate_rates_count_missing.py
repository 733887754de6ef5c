"""``oloproof calibrate`` prints each rate with the examples the judge gave no verdict on
(missing) counted against it, as a gate counts them: printed from the judged examples alone
(``sensitivity 100.0% [83.1%, 100.0%]  20 / 20``, with 2 missing a line below), the rates
looked better than what the gate then decided on (``sensitivity ≥ 80.0% (20/20, 2
unanswered)``). The bounds are checked against scipy, and against the gate's own line in the
run report. Without a missing example the lines are as they were."""

from __future__ import annotations

import json
import math
from pathlib import Path

from scipy.stats import binomtest
from tests.support import failing_for, oloproof, serving_judge_gate

ENV = {"JUDGE_GATE_KEY": "sk-judge-gate-0123456789"}


def percent_down(x: float) -> str:
    """A lower bound as the display rule prints it: rounded down to 0.1%."""
    return f"{math.floor(round(x * 1000, 6)) / 10:.1f}%"


def percent_up(x: float) -> str:
    return f"{math.ceil(round(x * 1000, 6)) / 10:.1f}%"


def rate_line(name: str, k: int, judged: int, missing: int, counted: str) -> str:
    """The line a rate of k of the judged examples, with ``missing`` more counted against it."""
    n = judged + missing
    ci = binomtest(k, n).proportion_ci(0.95, method="exact")
    estimate = f"{100 * k / n:.1f}%"
    return (
        f"  {name:<12} {estimate:>6} [{percent_down(ci.low)}, {percent_up(ci.high)}]  "
        f"{k} / {n}: the {missing} missing counted as {counted} ({k} / {judged} of those judged)"
    )


def test_the_printed_rates_count_the_missing_examples_as_the_gate_does(tmp_path: Path) -> None:
    with serving_judge_gate(tmp_path) as (root, server):
        config = root / "oloproof.yaml"
        config.write_text(config.read_text().replace("max_retries: 1", "max_retries: 0"))
        labels = [json.loads(line) for line in (root / "labels.jsonl").read_text().splitlines()]
        # One human pass and one human fail go unanswered.
        dropped = [next(x for x in labels if x["label"]), next(x for x in labels if not x["label"])]
        judge = server.default
        server.default = failing_for({x["output"]["answer"] for x in dropped}, judge)
        args = ("calibrate", "--evaluator", "groundedness", "--labels", "labels.jsonl")
        calibrated = oloproof(*args, cwd=root, env=ENV)
        server.default = judge  # healthy again
        run = oloproof("run", cwd=root, env=ENV)
    assert calibrated.code == 0, calibrated.err
    body = json.loads(oloproof("inspect", calibrated.lines[-1].split()[-1], "--json", cwd=root).out)
    counts = body["counts"]
    assert counts["missing"] == 2 and counts["excluded"] == 0
    tp, fn, tn, fp = (counts[c] for c in ("true_pass", "false_fail", "true_fail", "false_pass"))
    as_gate = "disagreements, as a gate does"
    assert calibrated.lines[2:5] == [
        rate_line("agreement", tp + tn, tp + tn + fp + fn, 2, "disagreements"),
        rate_line("sensitivity", tp, tp + fn, 2, as_gate),
        rate_line("specificity", tn, tn + fp, 2, as_gate),
    ]
    # The lower bounds printed are the gate's: its line under the rules says the same.
    sensitivity = binomtest(tp, tp + fn + 2).proportion_ci(0.95, method="exact").low
    specificity = binomtest(tn, tn + fp + 2).proportion_ci(0.95, method="exact").low
    (judge_line,) = [line for line in run.lines if line.startswith("Judge of grounded:")]
    assert f"sensitivity ≥ {percent_down(sensitivity)} ({tp}/{tp + fn}, 2 unanswered)" in judge_line
    assert f"specificity ≥ {percent_down(specificity)} ({tn}/{tn + fp}, 2 unanswered)" in judge_line


def test_without_a_missing_example_the_rates_are_printed_as_before(tmp_path: Path) -> None:
    with serving_judge_gate(tmp_path) as (root, _):
        args = ("calibrate", "--evaluator", "groundedness", "--labels", "labels.jsonl")
        calibrated = oloproof(*args, cwd=root, env=ENV)
    assert calibrated.code == 0, calibrated.err
    assert "missing" not in "\n".join(calibrated.lines[2:5])
    assert calibrated.lines[5].endswith("; 0 missing, 0 excluded")
