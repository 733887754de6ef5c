"""Missing cases count against every decision: the worst-case bounds, checked independently.

Each bound is checked two ways, never against the code itself: against an independent
reference (``scipy.stats.binomtest`` for Clopper-Pearson; the betting formula evaluated case by
case and solved by plain bisection), and against its meaning: the bounded interval must hold
the interval of *every* way the missing cases could have come out, and touch the extremes.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import binomtest

from oloproof.calibration import Calibration, corrected_rate, requirement_check
from oloproof.compare import build_comparison
from oloproof.config import ComparePolicy, Policy
from oloproof.metrics import MetricTally, RunTally
from oloproof.policy import decide_policy
from oloproof.results import MISSING_DECIDES
from oloproof.stats import (
    betting_interval_counts,
    bounded_mean_counts,
    bounded_proportion,
    clopper_pearson,
)
from oloproof.stored_runs import StoredRun

LEVEL = 0.95


def exact(k: int, n: int, level: float = LEVEL) -> tuple[float, float]:
    ci = binomtest(k, n).proportion_ci(confidence_level=level, method="exact")
    return float(ci.low), float(ci.high)


# ------------------------------------------------------- an independent betting reference


def _log_mean_exp(logs: Sequence[float]) -> float:
    top = max(logs)
    return top + math.log(math.fsum(math.exp(v - top) for v in logs) / len(logs))


def _log_k(xs: Sequence[float], m: float, sign: int) -> float:
    """log K+(m) (sign +1) or log K-(m) (sign -1), one factor per case, from the formula."""
    scale = m if sign > 0 else 1 - m
    return _log_mean_exp(
        [math.fsum(math.log(1 + sign * k / 20 * (x - m) / scale) for x in xs) for k in range(1, 20)]
    )


def _bisect(inside: Callable[[float], bool], inner: float, outer: float) -> float:
    for _ in range(200):
        mid = (inner + outer) / 2
        if mid in (inner, outer):
            break
        inner, outer = (mid, outer) if inside(mid) else (inner, mid)
    return (inner + outer) / 2


def reference_betting(xs: Sequence[float], level: float = LEVEL) -> tuple[float, float]:
    threshold = math.log(2 / (1 - level))
    mean = math.fsum(xs) / len(xs)
    edge = 1e-15
    if mean <= edge or _log_k(xs, edge, +1) < threshold:
        lower = 0.0
    else:
        lower = _bisect(lambda m: _log_k(xs, m, +1) < threshold, mean, edge)
    if mean >= 1 - edge or _log_k(xs, 1 - edge, -1) < threshold:
        upper = 1.0
    else:
        upper = _bisect(lambda m: _log_k(xs, m, -1) < threshold, mean, 1 - edge)
    return lower, upper


def reference_paired(pairs: Sequence[tuple[float, float]]) -> tuple[float, float]:
    """statistics.md C by hand: the reference betting interval on (d + 1) / 2, mapped back."""
    low, high = reference_betting([(c - b + 1) / 2 for c, b in pairs])
    return 2 * low - 1, 2 * high - 1


def expand(counts: Mapping[float, int]) -> list[float]:
    return [v for v, c in counts.items() for _ in range(c)]


# --------------------------------------------------------------------------- proportions


@settings(deadline=None, max_examples=150)
@given(st.integers(0, 60), st.integers(0, 40), st.data())
def test_bounded_proportion_is_clopper_pearson_with_missing_as_fail_then_pass(
    n: int, missing: int, data: st.DataObject
) -> None:
    if n + missing == 0:
        return
    k = data.draw(st.integers(0, n))
    bound = bounded_proportion(k, n, missing)
    assert bound.lower == pytest.approx(exact(k, n + missing)[0], abs=1e-12)
    assert bound.upper == pytest.approx(exact(k + missing, n + missing)[1], abs=1e-12)


@settings(deadline=None, max_examples=60)
@given(st.integers(1, 25), st.integers(1, 12), st.data())
def test_bounded_proportion_is_the_union_over_every_completion(
    n: int, missing: int, data: st.DataObject
) -> None:
    k = data.draw(st.integers(0, n))
    bound = bounded_proportion(k, n, missing)
    completions = [exact(k + j, n + missing) for j in range(missing + 1)]
    assert bound.lower == pytest.approx(min(low for low, _ in completions), abs=1e-12)
    assert bound.upper == pytest.approx(max(high for _, high in completions), abs=1e-12)
    observed = exact(k, n)
    assert bound.lower <= observed[0] + 1e-12 and observed[1] <= bound.upper + 1e-12


def test_no_missing_is_the_plain_interval() -> None:
    for k, n in ((9, 13), (12, 13), (13, 13), (11, 15), (14, 15)):
        assert bounded_proportion(k, n, 0) == clopper_pearson(k, n)
    counts = {1.0: 10, 1 / math.log2(3): 2, 0.0: 1}
    assert bounded_mean_counts(counts, 0) == betting_interval_counts(counts)


def test_the_issue_example_numbers() -> None:
    """200 passes observed, 100 errored: scipy says 61.02% for 200 of 300."""
    bound = bounded_proportion(200, 200, 100)
    assert bound.lower == pytest.approx(0.6102075870600207, abs=1e-12)
    assert bound.upper == 1.0
    assert clopper_pearson(200, 200).lower == pytest.approx(exact(200, 200)[0])  # 98.2%


# --------------------------------------------------------------------------------- means

GRADES = st.sampled_from([0.0, 0.2, 0.5, 0.63, 0.9, 1.0])


@settings(deadline=None, max_examples=40)
@given(st.lists(GRADES, min_size=1, max_size=14), st.integers(1, 6))
def test_bounded_mean_matches_the_reference_with_missing_as_0_then_1(
    xs: list[float], missing: int
) -> None:
    bound = bounded_mean_counts(Counter(xs), missing)
    low = reference_betting(xs + [0.0] * missing)[0]
    high = reference_betting(xs + [1.0] * missing)[1]
    assert bound.lower == pytest.approx(low, abs=1e-7)
    assert bound.upper == pytest.approx(high, abs=1e-7)


@settings(deadline=None, max_examples=30)
@given(st.lists(GRADES, min_size=1, max_size=10), st.lists(GRADES, min_size=1, max_size=4))
def test_bounded_mean_holds_every_completion(xs: list[float], filled: list[float]) -> None:
    """Whatever values the missing cases would have had, their interval lies inside."""
    bound = bounded_mean_counts(Counter(xs), len(filled))
    low, high = reference_betting(xs + filled)
    assert bound.lower <= low + 1e-7 and high <= bound.upper + 1e-7


# ------------------------------------------------------------------------------- the rules


def tally(passed: int, failed: int, missing: int) -> MetricTally:
    t = MetricTally("answer_correct", "pass_fail", passed=passed, failed=failed)
    t.missing["execution_errored"] = missing
    return t


def policy(*rules: dict[str, Any]) -> Policy:
    return Policy.model_validate({"version": 1, "rules": list(rules)})


FLOOR = {"id": "floor", "metric": "answer_correct", "min": 0.9}


def test_a_floor_the_missing_cases_could_break_is_not_a_pass() -> None:
    (decision,) = decide_policy(policy(FLOOR), {"answer_correct": tally(200, 0, 100)})
    assert (decision.outcome, decision.reason) == ("INSUFFICIENT_EVIDENCE", MISSING_DECIDES)
    assert decision.detail["lower"] == pytest.approx(exact(200, 300)[0])
    assert decision.detail["missing"] == 100
    observed = decision.detail["observed_only"]
    assert (observed["outcome"], observed["reason"]) == ("PASS", "interval_above_threshold")
    assert observed["lower"] == pytest.approx(exact(200, 200)[0])


def test_missing_cases_that_do_not_change_the_outcome_keep_its_reason() -> None:
    (passed,) = decide_policy(policy(FLOOR), {"answer_correct": tally(1000, 0, 2)})
    assert (passed.outcome, passed.reason) == ("PASS", "interval_above_threshold")
    (failed,) = decide_policy(policy(FLOOR), {"answer_correct": tally(10, 90, 3)})
    assert (failed.outcome, failed.reason) == ("FAIL", "interval_below_threshold")


def test_a_fail_the_missing_cases_could_overturn_is_not_claimed() -> None:
    """0 of 10 observed with 290 missing: the missing could all pass; exit 3, not 1."""
    (decision,) = decide_policy(policy(FLOOR), {"answer_correct": tally(0, 10, 290)})
    assert (decision.outcome, decision.reason) == ("INSUFFICIENT_EVIDENCE", MISSING_DECIDES)
    assert decision.detail["observed_only"]["outcome"] == "FAIL"


def test_a_ceiling_counts_missing_cases_as_passing_for_its_upper_bound() -> None:
    rule = {"id": "ceiling", "metric": "answer_correct", "max": 0.2}
    (decision,) = decide_policy(policy(rule), {"answer_correct": tally(0, 200, 100)})
    assert (decision.outcome, decision.reason) == ("INSUFFICIENT_EVIDENCE", MISSING_DECIDES)
    assert decision.detail["upper"] == pytest.approx(exact(100, 300)[1])


@pytest.mark.parametrize(
    ("failed", "missing", "limit", "outcome", "reason"),
    [
        (0, 0, 0, "PASS", "observed_failures_within_limit"),
        (0, 1, 0, "INSUFFICIENT_EVIDENCE", MISSING_DECIDES),
        (1, 2, 3, "PASS", "observed_failures_within_limit"),
        (1, 3, 3, "INSUFFICIENT_EVIDENCE", MISSING_DECIDES),
        (4, 0, 3, "FAIL", "observed_failures_exceed_limit"),
        (4, 9, 3, "FAIL", "observed_failures_exceed_limit"),
    ],
)
def test_observed_count_counts_every_missing_case_as_a_possible_failure(
    failed: int, missing: int, limit: int, outcome: str, reason: str
) -> None:
    rule = {
        "id": "never",
        "metric": "answer_correct",
        "kind": "observed_count",
        "max_failures": limit,
    }
    (decision,) = decide_policy(policy(rule), {"answer_correct": tally(10, failed, missing)})
    assert (decision.outcome, decision.reason) == (outcome, reason)
    assert decision.detail.get("missing", 0) == missing


def test_cases_that_never_ran_count_against_the_rules() -> None:
    """An interrupted run: 50 of 300 planned cases ran, all passed."""
    run = RunTally({"answer_correct": "pass_fail"}, [])
    for i in range(50):
        run.add({"case_id": f"c{i}", "status": "ok", "verdicts": {"answer_correct": {"s": "pass"}}})
    rule = {"id": "floor", "metric": "answer_correct", "min": 0.5}
    (decision,) = decide_policy(policy(rule), run.metrics, not_run=250)
    assert (decision.outcome, decision.reason) == ("INSUFFICIENT_EVIDENCE", MISSING_DECIDES)
    assert decision.detail["lower"] == pytest.approx(exact(50, 300)[0])


def test_a_case_result_without_a_verdict_counts_as_missing() -> None:
    run = RunTally({"answer_correct": "pass_fail", "judge": "pass_fail"}, [])
    run.add({"case_id": "a", "status": "ok", "verdicts": {"answer_correct": {"s": "pass"}}})
    assert run.metrics["judge"].missing == Counter({"no_verdict": 1})


# -------------------------------------------------------------------------- comparisons


def result(case_id: str, verdict: Mapping[str, Any] | None, status: str = "ok") -> dict[str, Any]:
    return {
        "case_id": case_id,
        "input_key": f"key-{case_id}",
        "status": status,
        "verdicts": {"m": dict(verdict)} if verdict is not None else {},
        "metadata": {},
        "expected": {},
        "execution": None,
        "judgments": {},
    }


def stored(run_id: str) -> StoredRun:
    body = {
        "run_id": run_id,
        "evaluators": [{"criterion": "m", "kind": "mean", "spec": {"type": "t"}}],
        "slices": [],
        "min_slice_support": 1,
    }
    return StoredRun(run_id, "sha256:" + "0" * 64, body)


def summary(v: float | None) -> dict[str, Any]:
    if v is None:
        return {"s": "missing", "r": "judge_failed"}
    return {"s": "value", "v": v}


def compare(
    cand: list[dict[str, Any]], base: list[dict[str, Any]], margin: float = 5
) -> dict[str, Any]:
    rules = [{"id": "r", "metric": "m", "non_inferiority": {"margin": margin}}]
    pol = ComparePolicy.model_validate({"version": 1, "rules": rules})
    return build_comparison(stored("run_c"), cand, stored("run_b"), base, policy=pol)


def test_the_issue_comparison_is_not_a_pass() -> None:
    """300 cases; the candidate errored on the 100 the all-correct baseline got right."""
    base = [result(f"c{i}", {"s": "pass"}) for i in range(300)]
    cand = [
        result(f"c{i}", {"s": "missing", "r": "execution_errored"}, "errored")
        if i % 3 == 0
        else result(f"c{i}", {"s": "pass"})
        for i in range(300)
    ]
    body = compare(cand, base)
    (decision,) = body["decisions"]
    assert (decision["outcome"], decision["reason"]) == ("INSUFFICIENT_EVIDENCE", MISSING_DECIDES)
    assert decision["detail"]["observed_only"]["outcome"] == "PASS"
    diff = body["metrics"][0]["difference"]
    # Worst case: the 100 are candidate 0 against a baseline 1; best: both 1.
    low, _ = reference_paired([(1.0, 1.0)] * 200 + [(0.0, 1.0)] * 100)
    _, high = reference_paired([(1.0, 1.0)] * 300)
    assert diff["lower"] == pytest.approx(low, abs=1e-7)
    assert diff["upper"] == pytest.approx(high, abs=1e-7)
    assert diff["observed_lower"] == pytest.approx(reference_paired([(1.0, 1.0)] * 200)[0])
    assert decision["detail"]["planning"] is None


VALUES = st.sampled_from([None, 0.0, 0.5, 1.0])


@settings(deadline=None, max_examples=40)
@given(
    st.lists(st.tuples(VALUES, VALUES), min_size=2, max_size=9).filter(
        lambda ps: any(c is not None and b is not None for c, b in ps)
    ),
    st.data(),
)
def test_the_bounded_difference_holds_every_completion(
    pairs: list[tuple[float | None, float | None]], data: st.DataObject
) -> None:
    """None is a missing verdict on that side; any filling in of them stays inside."""
    cand = [result(f"c{i}", summary(c)) for i, (c, _) in enumerate(pairs)]
    base = [result(f"c{i}", summary(b)) for i, (_, b) in enumerate(pairs)]
    diff = compare(cand, base)["metrics"][0]["difference"]
    fill = st.sampled_from([0.0, 0.5, 1.0])
    filled = [
        (data.draw(fill) if c is None else c, data.draw(fill) if b is None else b) for c, b in pairs
    ]
    low, high = reference_paired(filled)
    assert diff["lower"] <= low + 1e-7 and high <= diff["upper"] + 1e-7
    worst = [(0.0 if c is None else c, 1.0 if b is None else b) for c, b in pairs]
    best = [(1.0 if c is None else c, 0.0 if b is None else b) for c, b in pairs]
    assert diff["lower"] == pytest.approx(reference_paired(worst)[0], abs=1e-7)
    assert diff["upper"] == pytest.approx(reference_paired(best)[1], abs=1e-7)


# A case's repeats: p a pass, f a fail, None a repeat without a verdict (it errored).
REPEATS = st.lists(st.sampled_from(["p", "f", None]), min_size=3, max_size=3).filter(
    lambda rs: any(r is not None for r in rs)
)


def repeated(repeats: Sequence[str | None]) -> dict[str, Any]:
    """The case-level summary ``oloproof.repeats.combine`` records for these repeats."""
    judged = [r for r in repeats if r is not None]
    combined: dict[str, Any] = {
        "s": "value",
        "v": judged.count("p") / len(judged),
        "n": len(judged),
    }
    if len(judged) < len(repeats):
        combined["m"] = len(repeats) - len(judged)
    return combined


@settings(deadline=None, max_examples=40)
@given(st.lists(st.tuples(REPEATS, REPEATS), min_size=2, max_size=8), st.data())
def test_the_bounded_difference_holds_every_completion_of_the_missing_repeats(
    cases: list[tuple[list[str | None], list[str | None]]], data: st.DataObject
) -> None:
    """A case whose repeats are not all judged is worth its passes over all its repeats,
    whatever its unjudged ones would have said: never the mean of its judged ones alone."""
    cand = [result(f"c{i}", repeated(c)) for i, (c, _) in enumerate(cases)]
    base = [result(f"c{i}", repeated(b)) for i, (_, b) in enumerate(cases)]
    diff = compare(cand, base)["metrics"][0]["difference"]

    def value(repeats: Sequence[str | None], fill: Callable[[], str]) -> float:
        return sum(1 for r in repeats if (fill() if r is None else r) == "p") / len(repeats)

    def draw() -> str:
        return data.draw(st.sampled_from(["p", "f"]))

    filled = [(value(c, draw), value(b, draw)) for c, b in cases]
    low, high = reference_paired(filled)
    assert diff["lower"] <= low + 1e-7 and high <= diff["upper"] + 1e-7
    worst = [(value(c, lambda: "f"), value(b, lambda: "p")) for c, b in cases]
    best = [(value(c, lambda: "p"), value(b, lambda: "f")) for c, b in cases]
    assert diff["lower"] == pytest.approx(reference_paired(worst)[0], abs=1e-7)
    assert diff["upper"] == pytest.approx(reference_paired(best)[1], abs=1e-7)


def test_a_case_only_one_run_has_counts_against_the_candidate() -> None:
    base = [result(f"c{i}", {"s": "pass"}) for i in range(40)]
    cand = base[:30]
    body = compare(cand, base, margin=10)
    row = body["metrics"][0]
    assert (row["paired"], row["missing"]) == (30, 10)
    low, _ = reference_paired([(1.0, 1.0)] * 30 + [(0.0, 1.0)] * 10)
    assert row["difference"]["lower"] == pytest.approx(low, abs=1e-7)
    assert body["decisions"][0]["outcome"] != "PASS"


def test_no_missing_pair_leaves_the_comparison_as_it_was() -> None:
    pairs = [(1.0, 1.0)] * 13
    cand = [result(f"c{i}", summary(c)) for i, (c, _) in enumerate(pairs)]
    base = [result(f"c{i}", summary(b)) for i, (_, b) in enumerate(pairs)]
    body = compare(cand, base)
    diff = body["metrics"][0]["difference"]
    assert "observed_lower" not in diff and "observed_upper" not in diff
    assert diff["lower"] == pytest.approx(-0.33523, abs=1e-5)  # statistics.md C: ±33.523
    # The decision keeps the shape older comparisons recorded, so they still verify.
    assert set(body["decisions"][0]["detail"]) == {
        "lower",
        "upper",
        "level",
        "method",
        "paired",
        "b",
        "c",
        "planning",
    }


def test_a_decision_with_nothing_missing_keeps_its_old_shape() -> None:
    (decision,) = decide_policy(policy(FLOOR), {"answer_correct": tally(200, 0, 0)})
    assert set(decision.detail) == {"lower", "upper", "level", "method"}
    assert decision.detail["lower"] == pytest.approx(exact(200, 200)[0])


# ------------------------------------------------------------------ judge correction


def calibration(tp: int, fn: int, fp: int, tn: int, missing: int = 0) -> Calibration:
    ids = tuple(f"m{i}" for i in range(missing))
    return Calibration("judge-key", {"type": "t"}, LEVEL, tp, fn, fp, tn, missing=ids)


@pytest.mark.parametrize(("k", "n", "missing"), [(40, 50, 10), (10, 12, 3), (0, 5, 5)])
def test_the_corrected_rate_holds_every_completion_of_the_missing(
    k: int, n: int, missing: int
) -> None:
    cal = calibration(18, 2, 1, 19)
    estimate, bound = corrected_rate(k, n, cal, missing=missing, seed=7)
    assert estimate == corrected_rate(k, n, cal, seed=7)[0]  # the estimate is the observed one
    completions = [corrected_rate(k + j, n + missing, cal, seed=7)[1] for j in range(missing + 1)]
    assert bound.lower == pytest.approx(min(c.lower for c in completions), abs=1e-12)
    assert bound.upper == pytest.approx(max(c.upper for c in completions), abs=1e-12)
    plain = corrected_rate(k, n, cal, seed=7)[1]
    assert bound.lower <= plain.lower and plain.upper <= bound.upper


def test_unanswered_calibration_examples_count_against_the_judge() -> None:
    """19/20 and 20/20 clear 0.70/0.80; with 5 unanswered examples, scipy says they do not."""
    clean = calibration(19, 1, 0, 20)
    assert requirement_check(clean, 0.70, 0.80) == (None, None)
    gappy = calibration(19, 1, 0, 20, missing=5)
    assert exact(20, 25)[0] < 0.80 <= exact(20, 20)[0]
    assert requirement_check(gappy, 0.70, 0.80) == ("MANUAL_REVIEW", "judge_below_requirement")
    assert gappy.specificity.lower_at(LEVEL, 5) == pytest.approx(exact(20, 25)[0])
