"""The corrected metric counts the calibration's unanswered examples, through the real CLI.

The judge answered 20 of the 40 labels (the other 20 calls failed). The gate held the 20
against it; the corrected interval was computed from the answered 10/10 and 10/10 as if the
gaps did not exist, narrower and higher than the labels show. Each unanswered example could
have been an agreement or a disagreement in either rate, so the interval is checked here
against the formula written out (numpy's seeded Beta draws, as docs/judges.md gives it)
and against every way the unanswered examples could have been answered.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from tests.support import failing_for, oloproof, serving_judge_gate

ENV = {"JUDGE_GATE_KEY": "sk-judge-gate-0123456789"}
LEVEL = 0.95
DRAWS = 10_000


def draws(rng: np.random.Generator, a: int, b: int) -> np.ndarray:
    """DRAWS of Beta(a, b), all at 0 when a is 0 and at 1 when b is 0 (drawn all the same, so
    every quantile reads the seed's stream alike)."""
    drawn = rng.beta(max(a, 1), max(b, 1), DRAWS)
    return drawn if a and b else np.full(DRAWS, 0.0 if a == 0 else 1.0)


def low(agreed: int, disagreed: int) -> tuple[int, int]:
    """Beta(a, d + 1): its alpha/2 quantile is the Clopper-Pearson lower bound."""
    return agreed, disagreed + 1


def high(agreed: int, disagreed: int) -> tuple[int, int]:
    """Beta(a + 1, d): its 1 - alpha/2 quantile is the Clopper-Pearson upper bound."""
    return agreed + 1, disagreed


def quantile(
    p: tuple[int, int], se: tuple[int, int], sp: tuple[int, int], q: float, bad: float
) -> float:
    """The q quantile of Rogan-Gladen over draws of p, Se and Sp, each from Beta(a, b) for its
    (a, b); a draw with Se + Sp <= 1 counts as ``bad``. Seed 0, as the report."""
    rng = np.random.default_rng(0)
    p_d, se_d, sp_d = draws(rng, *p), draws(rng, *se), draws(rng, *sp)
    youden = se_d + sp_d - 1.0
    rate = np.clip((p_d + sp_d - 1.0) / np.where(youden > 0, youden, 1.0), 0.0, 1.0)
    return float(np.quantile(np.where(youden > 0, rate, bad), q))


def interval(k: int, n: int, se: tuple[int, int], sp: tuple[int, int]) -> tuple[float, float]:
    """The interval of docs/judges.md: each bound from the Beta sides that move it outward,
    Se both ways for the lower bound and Sp both ways for the upper."""
    alpha = 1 - LEVEL
    lower = min(quantile(low(k, n - k), s, low(*sp), alpha / 2, 0.0) for s in (high(*se), low(*se)))
    upper = max(
        quantile(high(k, n - k), low(*se), s, 1 - alpha / 2, 1.0) for s in (high(*sp), low(*sp))
    )
    return lower, upper


def unanswered_interval(k: int, n: int, counts: dict[str, int], u: int) -> tuple[float, float]:
    """The interval with u unanswered examples counted against the judge (docs/judges.md)."""
    tp, fn, tn, fp = (counts[c] for c in ("true_pass", "false_fail", "true_fail", "false_pass"))
    alpha = 1 - LEVEL
    lower = min(
        quantile(low(k, n - k), high(tp + u, fn), low(tn, fp + u), alpha / 2, 0.0),
        quantile(low(k, n - k), low(tp, fn + u), low(tn, fp + u), alpha / 2, 0.0),
    )
    upper = max(
        quantile(high(k, n - k), low(tp, fn + u), high(tn + u, fp), 1 - alpha / 2, 1.0),
        quantile(high(k, n - k), low(tp, fn + u), low(tn, fp + u), 1 - alpha / 2, 1.0),
    )
    return lower, upper


@pytest.mark.parametrize("dropped_per_label", [1, 10])
def test_the_corrected_interval_counts_the_unanswered_examples_against_the_judge(
    tmp_path: Path, dropped_per_label: int
) -> None:
    with serving_judge_gate(tmp_path) as (root, server):
        config = root / "oloproof.yaml"
        config.write_text(config.read_text().replace("max_retries: 1", "max_retries: 0"))
        labels = [json.loads(line) for line in (root / "labels.jsonl").read_text().splitlines()]
        # As many human passes as human fails go unanswered: 1 of each, or 10 (half the labels).
        passes = [x for x in labels if x["label"]]
        fails = [x for x in labels if not x["label"]]
        dropped = passes[:dropped_per_label] + fails[:dropped_per_label]
        judge = server.default
        server.default = failing_for({x["output"]["answer"] for x in dropped}, judge)
        calibrated = oloproof(
            "calibrate",
            "--evaluator",
            "groundedness",
            "--labels",
            "labels.jsonl",
            "--json",
            cwd=root,
            env=ENV,
        )
        server.default = judge  # healthy again
        run = oloproof("run", cwd=root, env=ENV)
        as_json = oloproof("run", "--json", cwd=root, env=ENV)
    assert calibrated.code == 0, calibrated.err
    body = json.loads(calibrated.out)
    u = len(dropped)
    assert body["counts"]["missing"] == u == 2 * dropped_per_label
    assert body["missing_reasons"] == {"judge_http_error": u}

    report = json.loads(as_json.out)
    [row] = report["corrected"]
    k, n = row["successes"], row["observed"]
    assert row["missing"] == 0
    # Before: no "unanswered", and the interval of the answered examples alone.
    assert row["unanswered"] == u
    lower, upper = unanswered_interval(k, n, body["counts"], u)
    assert (row["lower"], row["upper"]) == (lower, upper)
    if dropped_per_label == 1:  # a few unanswered leave an interval that says something
        assert 0.5 < lower < upper
    counts = body["counts"]
    se = (counts["true_pass"], counts["false_fail"])
    sp = (counts["true_fail"], counts["false_pass"])
    alone = interval(k, n, se, sp)
    assert lower < alone[0]  # the answered examples alone claim more than the labels show
    # Whatever the judge would have said on the unanswered examples (their human labels are
    # known here), the interval holds the one that answer would have given.
    h = sum(x["label"] for x in dropped)
    for agreed_passes in range(0, h + 1, 2):
        for agreed_fails in range(0, u - h + 1, 2):
            done = interval(
                k,
                n,
                (se[0] + agreed_passes, se[1] + h - agreed_passes),
                (sp[0] + agreed_fails, sp[1] + u - h - agreed_fails),
            )
            assert lower <= done[0] and done[1] <= upper, (agreed_passes, agreed_fails)

    row_line = next(
        line for line in run.lines if line.startswith("│ groundedness │ ") and "judged pass" in line
    )
    assert (
        f"{k} / {n} judged pass · sensitivity {se[0]}/{sum(se)} · specificity {sp[0]}/{sum(sp)} "
        f"· {u} unanswered in the calibration" in row_line
    ), run.out
