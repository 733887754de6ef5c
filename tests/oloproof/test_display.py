"""oloproof.display: the display rule, and every printed example of the statistics spec."""

from __future__ import annotations

import math
from collections.abc import Callable
from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from oloproof.display import (
    fmt_mean,
    fmt_mean_interval,
    fmt_percent,
    fmt_percent_interval,
    fmt_points,
    fmt_points_interval,
)
from oloproof.results import Interval
from oloproof.stats import betting_interval, clopper_pearson, paired_binary_difference


def _iv(lower: float, upper: float) -> Interval:
    return Interval(lower, upper, 0.95, "test")


@pytest.mark.parametrize(
    ("k", "n", "printed"),
    [
        (12, 13, "92.3% [63.9%, 99.9%]"),
        (13, 13, "100.0% [75.2%, 100.0%]"),
        (9, 13, "69.2% [38.5%, 91.0%]"),
        (11, 15, "73.3% [44.8%, 92.3%]"),
        (14, 15, "93.3% [68.0%, 99.9%]"),
    ],
)
def test_spec_pass_rate_examples(k: int, n: int, printed: str) -> None:
    iv = clopper_pearson(k, n)
    assert f"{fmt_percent(k / n)} {fmt_percent_interval(iv)}" == printed


def test_spec_mean_example() -> None:
    xs = [1.0] * 10 + [1 / math.log2(3)] * 2 + [0.0]
    iv = betting_interval(xs)
    assert f"{fmt_mean(math.fsum(xs) / len(xs))} {fmt_mean_interval(iv)}" == "0.866 [0.506, 0.990]"


@pytest.mark.parametrize(
    ("n", "b", "c", "printed"),
    [
        (13, 0, 0, "+0.0 points [-33.6, +33.6]"),
        (15, 1, 0, "+6.7 points [-26.5, +40.8]"),
        (13, 1, 0, "+7.7 points [-29.8, +45.5]"),
    ],
)
def test_spec_paired_examples(n: int, b: int, c: int, printed: str) -> None:
    estimate, iv = paired_binary_difference(n, b, c)
    assert f"{fmt_points(estimate)} {fmt_points_interval(iv)}" == printed


def test_exact_ends_print_exactly() -> None:
    assert fmt_percent_interval(_iv(0.0, 1.0)) == "[0.0%, 100.0%]"
    assert fmt_mean_interval(_iv(0.0, 1.0)) == "[0.000, 1.000]"
    assert fmt_points_interval(_iv(-1.0, 1.0)) == "[-100.0, +100.0]"
    assert fmt_points_interval(_iv(-0.0, 0.0)) == "[+0.0, +0.0]"
    assert fmt_percent(0.0) == "0.0%"
    assert fmt_percent(1.0) == "100.0%"


def test_a_bound_on_its_step_prints_on_it_and_one_off_it_never_inward() -> None:
    assert fmt_mean_interval(_iv(0.753, 0.753)) == "[0.753, 0.753]"
    assert fmt_percent_interval(_iv(0.1 + 0.2, 0.7 * 0.1 * 10)) == "[30.0%, 70.0%]"
    # One float off the step is off it: the rules compare 0.7529999999999999 as below 0.753,
    # so printing it as 0.753 would show a `min: 0.753` cleared that its decision says is not.
    assert fmt_mean_interval(_iv(0.7529999999999999, 0.7530000000000001)) == "[0.752, 0.754]"
    # A real distance below a step still rounds outward.
    assert fmt_mean_interval(_iv(0.753 - 1e-7, 0.753 + 1e-7)) == "[0.752, 0.754]"


@pytest.mark.parametrize(
    ("fmt", "value", "printed"),
    [
        (fmt_percent, 0.6925, "69.3%"),
        (fmt_percent, 0.6915, "69.2%"),
        (fmt_percent, 0.69249999, "69.2%"),
        (fmt_mean, 0.8665, "0.867"),
        (fmt_mean, 0.0005, "0.001"),
        (fmt_points, 0.0675, "+6.8 points"),
        (fmt_points, -0.0675, "-6.8 points"),
        (fmt_points, -0.031, "-3.1 points"),
        (fmt_points, -0.0004, "+0.0 points"),
        (fmt_points, -0.0005, "-0.1 points"),
        (fmt_points, 0.0, "+0.0 points"),
        (fmt_points, -0.0, "+0.0 points"),
    ],
)
def test_estimates_round_half_away_from_zero(
    fmt: Callable[[float], str], value: float, printed: str
) -> None:
    assert fmt(value) == printed


@pytest.mark.parametrize("fmt", [fmt_percent, fmt_mean, fmt_points])
@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf")])
def test_non_finite_values_are_refused(fmt: Callable[[float], str], value: float) -> None:
    with pytest.raises(ValueError):
        fmt(value)


def _parse_points(text: str) -> tuple[Decimal, Decimal]:
    low, high = text.strip("[]").split(", ")
    return Decimal(low) / 100, Decimal(high) / 100


@settings(max_examples=300)
@given(
    a=st.floats(-1.0, 1.0, allow_nan=False),
    b=st.floats(-1.0, 1.0, allow_nan=False),
)
def test_outward_rounding_contains_the_interval(a: float, b: float) -> None:
    lower, upper = min(a, b), max(a, b)
    shown_low, shown_high = _parse_points(fmt_points_interval(_iv(lower, upper)))
    slack = Decimal("1e-11")
    assert shown_low <= Decimal(lower) + slack
    assert shown_high >= Decimal(upper) - slack
    # Compared, not subtracted: a difference with a bound of 1e-80 would round in 28 digits.
    assert shown_low + Decimal("0.001") > Decimal(lower)
    assert shown_high - Decimal("0.001") < Decimal(upper)
