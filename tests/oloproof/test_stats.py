"""oloproof.stats against independent references: scipy, a brute-force betting interval."""

from __future__ import annotations

import math
import os
import subprocess
import sys
from collections.abc import Callable, Sequence
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import binomtest

from oloproof import stats
from oloproof.results import Interval
from oloproof.stats import (
    BETTING,
    CLOPPER_PEARSON,
    PAIRED_BETTING,
    betting_interval,
    clopper_pearson,
    decide_equivalence,
    decide_max,
    decide_min,
    decide_non_inferiority,
    decide_superiority,
    paired_binary_difference,
    paired_difference,
    planning_total,
)

# scipy is imported on the first call; Hypothesis's per-example deadline would trip on it.
slow_ok = settings(deadline=None, max_examples=60)

LEVELS = st.sampled_from([0.5, 0.8, 0.9, 0.95, 0.99, 0.999])
UNIT = st.one_of(
    st.sampled_from([0.0, 0.25, 0.5, 0.75, 1.0]),
    st.floats(min_value=0.0, max_value=1.0, allow_nan=False, allow_subnormal=False),
)


# ------------------------------------------------------------------ brute-force reference


def _log_mean_exp(logs: Sequence[float]) -> float:
    top = max(logs)
    return top + math.log(math.fsum(math.exp(v - top) for v in logs) / len(logs))


def _ref_log_k_plus(xs: Sequence[float], m: float) -> float:
    """log K+(m), one factor per case, straight from the formula."""
    return _log_mean_exp(
        [math.fsum(math.log(1 + k / 20 * (x - m) / m) for x in xs) for k in range(1, 20)]
    )


def _ref_log_k_minus(xs: Sequence[float], m: float) -> float:
    """log K-(m), one factor per case, straight from the formula (no reflection)."""
    return _log_mean_exp(
        [math.fsum(math.log(1 - k / 20 * (x - m) / (1 - m)) for x in xs) for k in range(1, 20)]
    )


def _bisect(inside: Callable[[float], bool], inner: float, outer: float) -> float:
    """The boundary between ``inner`` (inside the set) and ``outer``, by plain bisection."""
    for _ in range(200):
        mid = (inner + outer) / 2
        if mid in (inner, outer):
            break
        inner, outer = (mid, outer) if inside(mid) else (inner, mid)
    return (inner + outer) / 2


def _ref_betting(xs: Sequence[float], level: float) -> tuple[float, float]:
    threshold = math.log(2 / (1 - level))
    mean = math.fsum(xs) / len(xs)
    edge = 1e-15
    if mean <= edge or _ref_log_k_plus(xs, edge) < threshold:
        lower = 0.0
    else:
        lower = _bisect(lambda m: _ref_log_k_plus(xs, m) < threshold, mean, edge)
    if mean >= 1 - edge or _ref_log_k_minus(xs, 1 - edge) < threshold:
        upper = 1.0
    else:
        upper = _bisect(lambda m: _ref_log_k_minus(xs, m) < threshold, mean, 1 - edge)
    return lower, upper


# ------------------------------------------------------------------------- imports are lazy


def test_importing_stats_and_display_does_not_import_numpy_or_scipy() -> None:
    code = (
        "import sys, oloproof.stats, oloproof.display\n"
        "heavy = sorted(m for m in sys.modules if m.split('.')[0] in ('numpy', 'scipy'))\n"
        "assert not heavy, heavy\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    result = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr


# ------------------------------------------------------------------------- Clopper-Pearson


@slow_ok
@given(n=st.integers(1, 400), data=st.data(), level=LEVELS)
def test_clopper_pearson_matches_scipy_binomtest(n: int, data: st.DataObject, level: float) -> None:
    k = data.draw(st.integers(0, n))
    ours = clopper_pearson(k, n, level)
    theirs = binomtest(k, n).proportion_ci(confidence_level=level, method="exact")
    assert ours.lower == pytest.approx(theirs.low, abs=1e-9)
    assert ours.upper == pytest.approx(theirs.high, abs=1e-9)
    assert (ours.level, ours.method) == (level, CLOPPER_PEARSON)


@pytest.mark.parametrize(
    ("k", "n", "low_pct", "high_pct"),
    [
        (9, 13, 38.574, 90.908),
        (12, 13, 63.970, 99.805),
        (13, 13, 75.295, 100.0),
        (11, 15, 44.900, 92.213),
        (14, 15, 68.052, 99.831),
    ],
)
def test_clopper_pearson_spec_table(k: int, n: int, low_pct: float, high_pct: float) -> None:
    iv = clopper_pearson(k, n)
    assert 100 * iv.lower == pytest.approx(low_pct, abs=5e-4)
    assert 100 * iv.upper == pytest.approx(high_pct, abs=5e-4)


def test_clopper_pearson_ends_are_exact() -> None:
    assert clopper_pearson(0, 7).lower == 0.0
    assert clopper_pearson(7, 7).upper == 1.0


@pytest.mark.parametrize(
    ("k", "n", "level", "error"),
    [
        (0, 0, 0.95, ValueError),
        (4, 3, 0.95, ValueError),
        (-1, 3, 0.95, ValueError),
        (1, 3, 0.0, ValueError),
        (1, 3, 1.0, ValueError),
        (1, 3, float("nan"), ValueError),
        (True, 3, 0.95, TypeError),
        (1.0, 3, 0.95, TypeError),
    ],
)
def test_clopper_pearson_rejects_bad_input(k: int, n: int, level: float, error: type) -> None:
    with pytest.raises(error):
        clopper_pearson(k, n, level)


# ------------------------------------------------------------------------ betting interval


def test_betting_worked_example_ndcg() -> None:
    xs = [1.0] * 10 + [1 / math.log2(3)] * 2 + [0.0]
    iv = betting_interval(xs)
    assert iv.lower == pytest.approx(0.50638, abs=5e-6)
    assert iv.upper == pytest.approx(0.98954, abs=5e-6)
    assert (iv.level, iv.method) == (0.95, BETTING)


@slow_ok
@given(xs=st.lists(UNIT, min_size=1, max_size=25), level=LEVELS)
def test_betting_matches_brute_force(xs: list[float], level: float) -> None:
    iv = betting_interval(xs, level)
    lower, upper = _ref_betting(xs, level)
    assert iv.lower == pytest.approx(lower, abs=1e-9)
    assert iv.upper == pytest.approx(upper, abs=1e-9)


@slow_ok
@given(xs=st.lists(UNIT, min_size=1, max_size=40), data=st.data())
def test_betting_does_not_depend_on_order(xs: list[float], data: st.DataObject) -> None:
    shuffled = data.draw(st.permutations(xs))
    assert betting_interval(shuffled) == betting_interval(xs)


@slow_ok
@given(xs=st.lists(UNIT, min_size=1, max_size=40))
def test_betting_contains_mean_and_widens_with_level(xs: list[float]) -> None:
    mean = math.fsum(xs) / len(xs)
    narrow, wide = betting_interval(xs, 0.9), betting_interval(xs, 0.99)
    assert 0.0 <= wide.lower <= narrow.lower <= mean + 1e-12
    assert mean - 1e-12 <= narrow.upper <= wide.upper <= 1.0


@slow_ok
@given(xs=st.lists(UNIT, min_size=1, max_size=30))
def test_betting_reflection_mirrors(xs: list[float]) -> None:
    iv = betting_interval(xs)
    mirrored = betting_interval([1 - x for x in xs])
    assert mirrored.lower == pytest.approx(1 - iv.upper, abs=1e-9)
    assert mirrored.upper == pytest.approx(1 - iv.lower, abs=1e-9)


def test_betting_all_zero_and_all_one_reach_the_boundary() -> None:
    zeros, ones = betting_interval([0.0] * 8), betting_interval([1.0] * 8)
    assert zeros.lower == 0.0 and 0.0 < zeros.upper < 1.0
    assert ones.upper == 1.0 and 0.0 < ones.lower < 1.0
    assert zeros.upper == pytest.approx(1 - ones.lower, abs=1e-12)
    assert (zeros.lower, zeros.upper) == pytest.approx(_ref_betting([0.0] * 8, 0.95), abs=1e-9)


def test_betting_large_n_does_not_overflow() -> None:
    # One million 0/1 values: the products overflow a float unless the sums stay in log space.
    # Reference: the same formula with the 600,000 ones and 400,000 zeros multiplied out by hand.
    def log_k(m: float, ones: float, zeros: float) -> float:
        return _log_mean_exp(
            [
                ones * math.log1p(k / 20 * (1 - m) / m) + zeros * math.log1p(-k / 20)
                for k in range(1, 20)
            ]
        )

    threshold = math.log(40)
    iv = betting_interval([1.0] * 600_000 + [0.0] * 400_000)
    lower = _bisect(lambda m: log_k(m, 600_000, 400_000) < threshold, 0.6, 0.5)
    upper = 1 - _bisect(lambda m: log_k(m, 400_000, 600_000) < threshold, 0.4, 0.3)
    assert iv.lower == pytest.approx(lower, abs=1e-9)
    assert iv.upper == pytest.approx(upper, abs=1e-9)
    ones = betting_interval([1.0] * 1_000_000)
    assert ones.upper == 1.0 and 0.99999 < ones.lower < 1.0


@pytest.mark.parametrize(
    ("xs", "level"),
    [
        ([], 0.95),
        ([0.5, 1.1], 0.95),
        ([-0.1], 0.95),
        ([float("nan")], 0.95),
        ([float("inf")], 0.95),
        ([0.5], 0.0),
        ([0.5], 1.0),
        ([[0.5]], 0.95),
    ],
)
def test_betting_rejects_bad_input(xs: list[float], level: float) -> None:
    with pytest.raises(ValueError):
        betting_interval(xs, level)


# ----------------------------------------------------------------------- paired differences


@pytest.mark.parametrize(
    ("n", "b", "c", "estimate", "low_pts", "high_pts"),
    [
        (13, 0, 0, 0.0, -33.523, 33.523),
        (15, 1, 0, 1 / 15, -26.448, 40.787),
        (13, 1, 0, 1 / 13, -29.730, 45.467),
    ],
)
def test_paired_spec_table(
    n: int, b: int, c: int, estimate: float, low_pts: float, high_pts: float
) -> None:
    candidate = [1.0] * b + [0.0] * c + [1.0] * (n - b - c)
    baseline = [0.0] * b + [1.0] * c + [1.0] * (n - b - c)
    for est, iv in (paired_binary_difference(n, b, c), paired_difference(candidate, baseline)):
        assert est == pytest.approx(estimate, abs=1e-15)
        assert 100 * iv.lower == pytest.approx(low_pts, abs=5e-4)
        assert 100 * iv.upper == pytest.approx(high_pts, abs=5e-4)
        assert (iv.level, iv.method) == (0.95, PAIRED_BETTING)


@slow_ok
@given(n=st.integers(1, 60), data=st.data(), level=LEVELS)
def test_binary_fast_path_equals_general_path(n: int, data: st.DataObject, level: float) -> None:
    b = data.draw(st.integers(0, n))
    c = data.draw(st.integers(0, n - b))
    both_pass = data.draw(st.integers(0, n - b - c))
    both_fail = n - b - c - both_pass
    candidate = [1.0] * b + [0.0] * c + [1.0] * both_pass + [0.0] * both_fail
    baseline = [0.0] * b + [1.0] * c + [1.0] * both_pass + [0.0] * both_fail
    order = data.draw(st.permutations(range(n)))
    candidate = [candidate[i] for i in order]
    baseline = [baseline[i] for i in order]
    assert paired_binary_difference(n, b, c, level) == paired_difference(candidate, baseline, level)


@slow_ok
@given(pairs=st.lists(st.tuples(UNIT, UNIT), min_size=1, max_size=30))
def test_paired_swap_mirrors_interval(pairs: list[tuple[float, float]]) -> None:
    cand = [p[0] for p in pairs]
    base = [p[1] for p in pairs]
    est, iv = paired_difference(cand, base)
    est_swapped, swapped = paired_difference(base, cand)
    assert est_swapped == pytest.approx(-est, abs=1e-12)
    assert swapped.lower == pytest.approx(-iv.upper, abs=1e-9)
    assert swapped.upper == pytest.approx(-iv.lower, abs=1e-9)


@slow_ok
@given(pairs=st.lists(st.tuples(UNIT, UNIT), min_size=1, max_size=20))
def test_paired_is_betting_on_shifted_differences(pairs: list[tuple[float, float]]) -> None:
    ys = [min(1.0, max(0.0, (c - b + 1) / 2)) for c, b in pairs]
    lower, upper = _ref_betting(ys, 0.95)
    _, iv = paired_difference([p[0] for p in pairs], [p[1] for p in pairs])
    assert iv.lower == pytest.approx(2 * lower - 1, abs=2e-9)
    assert iv.upper == pytest.approx(2 * upper - 1, abs=2e-9)


@pytest.mark.parametrize(
    ("candidate", "baseline"),
    [([], []), ([0.5], [0.5, 0.5]), ([1.5], [0.5]), ([0.5], [float("nan")])],
)
def test_paired_rejects_bad_input(candidate: list[float], baseline: list[float]) -> None:
    with pytest.raises(ValueError):
        paired_difference(candidate, baseline)


@pytest.mark.parametrize(("n", "b", "c"), [(0, 0, 0), (5, 3, 3), (5, -1, 0)])
def test_paired_binary_rejects_bad_counts(n: int, b: int, c: int) -> None:
    with pytest.raises(ValueError):
        paired_binary_difference(n, b, c)


# --------------------------------------------------------------------------------- planning


def _naive_planning(n: int, b: int, c: int, margin: float, limit: int) -> int:
    for total in range(n + 1, limit + 1):
        b_n = (2 * total * b + n) // (2 * n)
        c_n = (2 * total * c + n) // (2 * n)
        b_n = min(b_n, total - c_n)
        if paired_binary_difference(total, b_n, c_n)[1].lower > -margin:
            return total
    return limit + 1


@pytest.mark.parametrize(("margin", "total"), [(0.05, 53), (0.02, 83)])
def test_planning_spec_numbers(margin: float, total: int) -> None:
    assert planning_total(15, 1, 0, margin) == total
    assert _naive_planning(15, 1, 0, margin, total) == total


def test_planning_none_without_discordant_pairs() -> None:
    assert planning_total(13, 0, 0, 0.05) is None
    assert planning_total(1, 0, 0, 0.0) is None


def test_planning_reports_past_the_limit() -> None:
    assert planning_total(15, 1, 0, 0.05, limit=52) == 53
    assert planning_total(15, 1, 0, 0.05, limit=53) == 53
    assert planning_total(15, 0, 3, 0.05) == stats.PLANNING_LIMIT + 1
    assert planning_total(200, 1, 0, 0.05, limit=100) == 101


@settings(deadline=None, max_examples=15)
@given(
    n=st.integers(1, 30),
    data=st.data(),
    margin=st.sampled_from([0.0, 0.05, 0.1, 0.3]),
)
def test_planning_matches_naive_scan(n: int, data: st.DataObject, margin: float) -> None:
    b = data.draw(st.integers(0, n))
    c = data.draw(st.integers(0, n - b))
    if b + c == 0:
        assert planning_total(n, b, c, margin, limit=150) is None
    else:
        assert planning_total(n, b, c, margin, limit=150) == _naive_planning(n, b, c, margin, 150)


def test_planning_holds_discordance_without_exceeding_n() -> None:
    import numpy as np

    b_n, c_n, rest = stats._held_discordance(np.array([3.0, 4.0, 5.0]), 2, 1, 1)
    assert b_n.tolist() == [1.0, 2.0, 2.0]
    assert c_n.tolist() == [2.0, 2.0, 3.0]
    assert rest.tolist() == [0.0, 0.0, 0.0]


@pytest.mark.parametrize("margin", [-0.01, 1.0, 5.0, float("nan")])
def test_planning_rejects_bad_margin(margin: float) -> None:
    with pytest.raises(ValueError):
        planning_total(15, 1, 0, margin)


# -------------------------------------------------------------------------------- decisions


def _iv(lower: float, upper: float) -> Interval:
    return Interval(lower, upper, 0.95, "test")


@pytest.mark.parametrize(
    ("lower", "upper", "expected"),
    [
        (0.80, 0.95, ("PASS", "interval_above_threshold")),
        (0.8000001, 0.95, ("PASS", "interval_above_threshold")),
        (0.7999999, 0.95, ("INSUFFICIENT_EVIDENCE", "interval_overlaps_threshold")),
        (0.60, 0.80, ("INSUFFICIENT_EVIDENCE", "interval_overlaps_threshold")),
        (0.60, 0.7999999, ("FAIL", "interval_below_threshold")),
    ],
)
def test_decide_min(lower: float, upper: float, expected: tuple[str, str]) -> None:
    assert decide_min(_iv(lower, upper), 0.8) == expected


@pytest.mark.parametrize(
    ("lower", "upper", "expected"),
    [
        (0.01, 0.10, ("PASS", "interval_below_threshold")),
        (0.01, 0.1000001, ("INSUFFICIENT_EVIDENCE", "interval_overlaps_threshold")),
        (0.10, 0.20, ("INSUFFICIENT_EVIDENCE", "interval_overlaps_threshold")),
        (0.1000001, 0.20, ("FAIL", "interval_above_threshold")),
    ],
)
def test_decide_max(lower: float, upper: float, expected: tuple[str, str]) -> None:
    assert decide_max(_iv(lower, upper), 0.1) == expected


@pytest.mark.parametrize(
    ("lower", "upper", "expected"),
    [
        (-0.0499, 0.2, ("PASS", "interval_above_margin")),
        (-0.05, 0.2, ("INSUFFICIENT_EVIDENCE", "interval_overlaps_margin")),
        (-0.3, -0.05, ("INSUFFICIENT_EVIDENCE", "interval_overlaps_margin")),
        (-0.3, -0.0501, ("FAIL", "interval_below_margin")),
    ],
)
def test_decide_non_inferiority(lower: float, upper: float, expected: tuple[str, str]) -> None:
    assert decide_non_inferiority(_iv(lower, upper), 0.05) == expected


@pytest.mark.parametrize(
    ("lower", "upper", "margin", "expected"),
    [
        (0.0001, 0.2, 0.0, ("PASS", "interval_above_margin")),
        (0.0, 0.2, 0.0, ("INSUFFICIENT_EVIDENCE", "interval_overlaps_margin")),
        (-0.2, 0.0, 0.0, ("INSUFFICIENT_EVIDENCE", "interval_overlaps_margin")),
        (-0.2, -0.0001, 0.0, ("FAIL", "interval_below_margin")),
        (0.0201, 0.2, 0.02, ("PASS", "interval_above_margin")),
        (0.01, 0.2, 0.02, ("INSUFFICIENT_EVIDENCE", "interval_overlaps_margin")),
        (-0.1, 0.0199, 0.02, ("FAIL", "interval_below_margin")),
    ],
)
def test_decide_superiority(
    lower: float, upper: float, margin: float, expected: tuple[str, str]
) -> None:
    assert decide_superiority(_iv(lower, upper), margin) == expected


@pytest.mark.parametrize(
    ("lower", "upper", "expected"),
    [
        (-0.0499, 0.0499, ("PASS", "interval_within_margins")),
        (-0.05, 0.01, ("INSUFFICIENT_EVIDENCE", "interval_overlaps_margin")),
        (-0.01, 0.05, ("INSUFFICIENT_EVIDENCE", "interval_overlaps_margin")),
        (-0.2, 0.2, ("INSUFFICIENT_EVIDENCE", "interval_overlaps_margin")),
        (0.05, 0.2, ("INSUFFICIENT_EVIDENCE", "interval_overlaps_margin")),
        (0.0501, 0.2, ("FAIL", "interval_outside_margins")),
        (-0.2, -0.0501, ("FAIL", "interval_outside_margins")),
    ],
)
def test_decide_equivalence(lower: float, upper: float, expected: tuple[str, str]) -> None:
    assert decide_equivalence(_iv(lower, upper), 0.05) == expected


def test_decide_on_real_intervals_uses_unrounded_bounds() -> None:
    # 13/13 prints [75.2%, 100.0%] but L = 0.75295, so a min of 0.7529 passes and 0.753 does not.
    iv = clopper_pearson(13, 13)
    assert decide_min(iv, 0.7529)[0] == "PASS"
    assert decide_min(iv, 0.753)[0] == "INSUFFICIENT_EVIDENCE"
    _, diff = paired_binary_difference(15, 1, 0)
    assert decide_non_inferiority(diff, 0.05) == (
        "INSUFFICIENT_EVIDENCE",
        "interval_overlaps_margin",
    )


def test_decide_rejects_nan_and_negative_margins() -> None:
    with pytest.raises(ValueError):
        decide_min(_iv(float("nan"), 0.5), 0.3)
    with pytest.raises(ValueError):
        decide_max(_iv(0.1, 0.5), float("nan"))
    for decide in (decide_non_inferiority, decide_superiority, decide_equivalence):
        with pytest.raises(ValueError):
            decide(_iv(-0.1, 0.1), -0.05)


# -- intervals computed before (stats.remembered) ---------------------------------------------


def test_remembered_gathers_each_interval_and_serves_it_back_without_computing() -> None:
    with stats.remembered() as gathered:
        cp = clopper_pearson(9, 13)
        bet = stats.betting_interval_counts({1.0: 4, 0.5: 3, 0.0: 2})
    expected = binomtest(9, 13).proportion_ci(0.95, method="exact")
    assert (cp.lower, cp.upper) == pytest.approx((expected.low, expected.high), abs=1e-12)
    assert sorted(gathered, key=str) == sorted(
        [
            ["clopper-pearson", 9, 13, 0.95, cp.lower, cp.upper],
            ["betting", [[0.0, 2], [0.5, 3], [1.0, 4]], 0.95, bet.lower, bet.upper],
        ],
        key=str,
    )
    assert all(stats.stored_entry_differences(entry) is None for entry in gathered)
    # Served, not recomputed: a stored entry's bounds are what comes back for its inputs...
    with stats.remembered([["clopper-pearson", 9, 13, 0.95, 0.25, 0.75]]):
        assert clopper_pearson(9, 13) == Interval(0.25, 0.75, 0.95, stats.CLOPPER_PEARSON)
        assert clopper_pearson(9, 14).lower != 0.25  # ...and only for its own inputs
    # ...which is why verify recomputes each one.
    assert stats.stored_entry_differences(["clopper-pearson", 9, 13, 0.95, 0.25, 0.75]) == (
        f"clopper-pearson [9, 13, 0.95]: stored (0.25, 0.75), recomputed {(cp.lower, cp.upper)}"
    )


@pytest.mark.parametrize(
    "entry",
    [
        ["clopper-pearson", 9, "13", 0.95, 0.25, 0.75],
        ["clopper-pearson", 9, 13, 0.25, 0.75],
        ["betting", [[1.0, 4], [0.0, 2]], 0.95, 0.25, 0.75],  # values not ascending
        ["betting", [[0.0, True]], 0.95, 0.25, 0.75],
        ["wilson", 9, 13, 0.95, 0.25, 0.75],
        "clopper-pearson",
    ],
)
def test_remembered_ignores_an_entry_of_another_shape(entry: Any) -> None:
    expected = binomtest(9, 13).proportion_ci(0.95, method="exact")
    with stats.remembered([entry]):
        assert clopper_pearson(9, 13).lower == pytest.approx(expected.low, abs=1e-12)
    assert stats.stored_entry_differences(entry) == f"not an interval entry: {list(entry)!r}"
