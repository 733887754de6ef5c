"""oloproof.stats and oloproof.display at their edges, against references written out here from
the formulas of statistics.md (never from Oloproof's own arithmetic).

- Clopper-Pearson: closed forms where the binomial tail is one term (k = 0, 1, n - 1, n, any n
  up to 10^6), and scipy's ``beta.ppf`` / ``binomtest`` for every k of small n.
- The betting interval (B) and the paired one (C): K+ and K- evaluated value by value with
  ``math.fsum`` and solved by plain bisection on m, on the awkward inputs: n = 1 and 2, all 0,
  all 1, values of 1e-300 and 5e-324, many ties, a million cases.
- Planning (D): the first N whose K+ at the margin's point exceeds 2/alpha, with b_N and c_N
  rounded in exact fractions.
- Missing cases: the bounded interval against every completion of the missing cases, and
  a graded metric's (or a pass rate over repeats) against the brute-force extremes over a
  grid of values for them, each read by the method its values choose.
- Display: a bound is never printed inside the value the rules compared.

Every random input comes from a fixed seed.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import random
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from decimal import Decimal
from fractions import Fraction
from typing import Any

import pytest
from scipy.stats import beta, binomtest
from tests.betting_reference import betting as betting_reference

from oloproof.display import fmt_mean_interval, fmt_percent_interval, fmt_percent_lower
from oloproof.metrics import MetricTally
from oloproof.results import Interval
from oloproof.stats import (
    betting_interval,
    betting_interval_counts,
    bounded_mean_counts,
    bounded_proportion,
    clopper_pearson,
    decide_max,
    decide_min,
    paired_binary_difference,
    paired_difference,
    planning_total,
    widest,
)

LEVELS = (0.5, 0.8, 0.9, 0.95, 0.99, 0.999)

# ----------------------------------------------------------------------- Clopper-Pearson (A)


def _closed_forms(n: int, level: float) -> dict[tuple[int, str], float]:
    """Bounds whose binomial tail is a single term, solved by hand (h = alpha / 2):
    P(X >= 1) = 1 - (1 - p)^n, P(X >= n) = p^n, P(X <= 0) = (1 - p)^n, P(X <= n-1) = 1 - p^n."""
    h = (1 - level) / 2
    return {
        (1, "lower"): -math.expm1(math.log1p(-h) / n),
        (n, "lower"): math.exp(math.log(h) / n),
        (0, "upper"): -math.expm1(math.log(h) / n),
        (n - 1, "upper"): math.exp(math.log1p(-h) / n),
    }


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("n", [1, 2, 3, 13, 1000, 10**6])
def test_clopper_pearson_edges_match_closed_forms(n: int, level: float) -> None:
    for (k, side), expected in _closed_forms(n, level).items():
        if 0 <= k <= n:
            got = getattr(clopper_pearson(k, n, level), side)
            assert got == pytest.approx(expected, rel=1e-13), (k, n, level, side)


@pytest.mark.parametrize("n", [1, 2, 3, 13, 15, 40])
def test_clopper_pearson_every_k_matches_scipy(n: int) -> None:
    for k, level in itertools.product(range(n + 1), LEVELS):
        ours = clopper_pearson(k, n, level)
        alpha = 1 - level
        lower = 0.0 if k == 0 else beta.ppf(alpha / 2, k, n - k + 1)
        upper = 1.0 if k == n else beta.ppf(1 - alpha / 2, k + 1, n - k)
        assert (ours.lower, ours.upper) == pytest.approx((lower, upper), rel=1e-13, abs=0.0)
        theirs = binomtest(k, n).proportion_ci(level, method="exact")
        assert (ours.lower, ours.upper) == pytest.approx((theirs.low, theirs.high), abs=1e-10)


def test_all_pass_and_all_fail_end_exactly_at_the_edge() -> None:
    for n, level in itertools.product([1, 2, 13, 10**6], LEVELS):
        assert clopper_pearson(0, n, level).lower == 0.0
        assert clopper_pearson(n, n, level).upper == 1.0


# ------------------------------------------------------------------- betting interval (B, C)


def _log_capital(groups: list[tuple[float, int]], m: float, above: bool) -> float:
    """log K+(m) (``above``) or log K-(m) of statistics.md B, one factor per distinct value."""
    logs = []
    for j in range(1, 20):
        f = j / 20
        terms = []
        for x, count in groups:
            factor = 1 + f * (x - m) / m if above else 1 - f * (x - m) / (1 - m)
            terms.append(count * math.log(factor))
        logs.append(math.fsum(terms))
    top = max(logs)
    return top + math.log(math.fsum(math.exp(v - top) for v in logs) / 19)


def _edge(rejected: Callable[[float], bool], outside: float, inside: float) -> float:
    """The boundary between ``outside`` (rejected) and ``inside`` (not), by plain bisection."""
    for _ in range(400):
        mid = (outside + inside) / 2
        if mid in (outside, inside):
            break
        outside, inside = (mid, inside) if rejected(mid) else (outside, mid)
    return outside


def _betting(counts: Mapping[float, int], level: float) -> tuple[float, float]:
    """statistics.md B: L where K+(L) = 2/alpha and U where K-(U) = 2/alpha; an end stays at 0
    (or 1) when K+ (K-) never reaches 2/alpha inside (0, 1)."""
    groups = sorted((x, c) for x, c in counts.items() if c)
    mean = math.fsum(x * c for x, c in groups) / sum(c for _, c in groups)
    threshold = math.log(2 / (1 - level))
    lower, upper = 0.0, 1.0
    near_zero, near_one = 1e-300, 1 - 2**-53
    if mean > near_zero and _log_capital(groups, near_zero, True) >= threshold:
        lower = _edge(lambda m: _log_capital(groups, m, True) >= threshold, near_zero, mean)
    if mean < near_one and _log_capital(groups, near_one, False) >= threshold:
        upper = _edge(lambda m: _log_capital(groups, m, False) >= threshold, near_one, mean)
    return lower, upper


def _edge_datasets() -> list[Counter[float]]:
    rng = random.Random(20260101)
    sets = [
        Counter({v: n for v in values})
        for n in (1, 2, 3)
        for values in (
            [0.0],
            [1.0],
            [0.5],
            [1e-300],
            [5e-324],
            [1 - 2**-53],
            [0.0, 1.0],
            [1e-300, 1.0],
            [0.3, 0.7],
        )
    ]
    pool = [0.0, 1.0, 0.5, 1 / 3, 1e-300, 5e-324, 1e-10, 1 - 1e-10, 1 / math.log2(3)]
    for _ in range(60):
        n = rng.choice([1, 2, 3, 5, 13, 40])
        sets.append(Counter(rng.choice([*pool, rng.random()]) for _ in range(n)))
    sets += [
        Counter({1.0: 600_000, 0.0: 400_000}),
        Counter({0.5: 10**6}),
        Counter({1 / math.log2(3): 333_333, 1.0: 333_333, 0.0: 333_334}),
        Counter({1e-300: 10**6}),
        Counter({1.0: 10**6 - 1, 0.0: 1}),
    ]
    return sets


@pytest.mark.parametrize("level", [0.5, 0.8, 0.95, 0.999])
def test_betting_matches_the_formula_on_edge_inputs(level: float) -> None:
    for counts in _edge_datasets():
        iv = betting_interval_counts(counts, level)
        lower, upper = _betting(counts, level)
        assert iv.lower == pytest.approx(lower, abs=1e-11), (dict(counts), level)
        assert iv.upper == pytest.approx(upper, abs=1e-11), (dict(counts), level)
        mean = math.fsum(x * c for x, c in counts.items()) / sum(counts.values())
        assert iv.lower <= mean <= iv.upper


def test_betting_of_a_list_is_the_betting_of_its_counts() -> None:
    for counts in _edge_datasets()[:40]:
        xs = list(counts.elements())
        assert betting_interval(xs) == betting_interval_counts(counts)


def _paired_cases(n: int) -> dict[str, tuple[list[float], list[float]]]:
    return {
        "all zero": ([0.5] * n, [0.5] * n),
        "all +1": ([1.0] * n, [0.0] * n),
        "all -1": ([0.0] * n, [1.0] * n),
        "one +1": ([1.0] + [1.0] * (n - 1), [0.0] + [1.0] * (n - 1)),
        "one -1": ([0.0] + [0.0] * (n - 1), [1.0] + [0.0] * (n - 1)),
        "one tiny": ([1e-300] + [0.0] * (n - 1), [0.0] * n),
    }


@pytest.mark.parametrize("level", [0.5, 0.95, 0.999])
@pytest.mark.parametrize("n", [1, 2, 3, 13, 1000])
def test_paired_matches_the_formula_on_edge_differences(n: int, level: float) -> None:
    for name, (cand, base) in _paired_cases(n).items():
        estimate, iv = paired_difference(cand, base, level)
        ys = Counter(min(1.0, max(0.0, (c - b + 1) / 2)) for c, b in zip(cand, base, strict=True))
        lower, upper = _betting(ys, level)
        assert estimate == pytest.approx(math.fsum(cand) / n - math.fsum(base) / n, abs=1e-15)
        assert iv.lower == pytest.approx(2 * lower - 1, abs=2e-11), name
        assert iv.upper == pytest.approx(2 * upper - 1, abs=2e-11), name
    # All +1: y is 1 everywhere, so the upper end is exactly +1 (and -1 for all -1).
    assert paired_binary_difference(n, n, 0, level)[1].upper == 1.0
    assert paired_binary_difference(n, 0, n, level)[1].lower == -1.0
    zero = paired_binary_difference(n, 0, 0, level)[1]
    assert zero.lower == pytest.approx(-zero.upper, abs=1e-12)


# --------------------------------------------------------------------------------- planning (D)


def _round_half_up(value: Fraction) -> int:
    return math.floor(value + Fraction(1, 2))


def _planning(n: int, b: int, c: int, margin: float, level: float, limit: int) -> int | None:
    """statistics.md D: the first N > n at which the held discordance puts L above -margin,
    i.e. (K+ falling in m) K+ at m0 = (1 - margin) / 2 on y is above 2/alpha."""
    if b + c == 0:
        return None
    threshold, m0 = math.log(2 / (1 - level)), (1 - margin) / 2
    for total in range(n + 1, limit + 1):
        b_n = _round_half_up(Fraction(total * b, n))
        c_n = _round_half_up(Fraction(total * c, n))
        b_n -= max(0, b_n + c_n - total)  # docs/statistics.md: b_N gives way by one
        groups = [(1.0, b_n), (0.0, c_n), (0.5, total - b_n - c_n)]
        groups = [(y, k) for y, k in groups if k]
        mean = (b_n + (total - b_n - c_n) / 2) / total
        if m0 < mean and _log_capital(groups, m0, True) > threshold:
            return total
    return limit + 1


def test_planning_matches_the_formula() -> None:
    rng = random.Random(77)
    configs = [(15, 1, 0, 0.05, 0.95), (15, 1, 0, 0.02, 0.95), (2, 1, 1, 0.05, 0.95)]
    configs += [(1, 1, 0, 0.0, 0.95), (1, 0, 1, 0.5, 0.95), (3, 3, 0, 0.0, 0.999)]
    for _ in range(60):
        n = rng.randint(1, 40)
        b = rng.randint(0, n)
        c = rng.randint(0, n - b)
        margin = rng.choice([0.0, 0.01, 0.02, 0.05, 0.1, 0.3, 0.9])
        configs.append((n, b, c, margin, rng.choice(LEVELS)))
    for n, b, c, margin, level in configs:
        expected = _planning(n, b, c, margin, level, 300)
        assert planning_total(n, b, c, margin, level, limit=300) == expected, (n, b, c, margin)
    assert planning_total(15, 1, 0, 0.05) == 53
    assert planning_total(15, 1, 0, 0.02) == 83


# ---------------------------------------------------------------------------- missing cases


def test_bounded_proportion_is_the_hull_of_every_completion() -> None:
    for n, k, missing, level in itertools.product([1, 2, 5], range(6), [1, 2, 3], [0.5, 0.95]):
        if k > n:
            continue
        completions = [clopper_pearson(k + j, n + missing, level) for j in range(missing + 1)]
        bounded = bounded_proportion(k, n, missing, level)
        assert bounded.lower == min(iv.lower for iv in completions)
        assert bounded.upper == max(iv.upper for iv in completions)


def test_bounded_mean_holds_every_completion_on_a_grid() -> None:
    grid = [0.0, 1e-300, 0.25, 0.5, 1 - 1e-12, 1.0]
    for observed in ({0.5: 2, 1.0: 1}, {0.2: 1}, {1.0: 4, 0.7: 1}):
        bounded = bounded_mean_counts(observed, 2, 0.95)
        for filled in itertools.product(grid, repeat=2):
            counts = Counter(observed)
            counts.update(filled)
            complete = betting_interval_counts(counts, 0.95)
            assert bounded.lower <= complete.lower + 1e-15
            assert complete.upper <= bounded.upper + 1e-15


def _graded_tally(values: Mapping[float, int], missing: int) -> MetricTally:
    tally = MetricTally("recall_at_2", "mean")
    for value, count in values.items():
        for _ in range(count):
            tally.add({"s": "value", "v": value})
    for _ in range(missing):
        tally.add({"s": "missing", "r": "execution_errored"})
    return tally


def test_a_graded_metric_bounded_for_its_missing_case_holds_every_completion() -> None:
    # Was a strict xfail: twelve recalls of 1 and one case that raised were bounded with
    # Clopper-Pearson (12 of 13, lower 0.640), but an answer of 0.5 makes the run a mean, whose
    # betting interval starts at 0.632: the missing case read better than that answer would.
    bounded = _graded_tally({1.0: 12}, missing=1).bounded_interval(0.95)
    assert bounded is not None
    for answer in (0.0, 0.001, 0.5, 0.999, 1.0):
        complete = _graded_tally({1.0: 12, answer: 1} if answer != 1.0 else {1.0: 13}, 0)
        interval = complete.interval(0.95)
        assert interval is not None
        assert bounded.lower <= interval.lower, (answer, bounded, interval)


def _read(xs: Sequence[float], level: float = 0.95) -> tuple[float, float]:
    """The interval a run of values ``xs`` with none missing gets, by the method they choose
    (statistics.md A for values all 0 or 1, B otherwise): scipy's exact binomial interval, or
    the betting reference of tests/betting_reference.py."""
    if all(x in (0.0, 1.0) for x in xs):
        ci = binomtest(round(sum(xs)), len(xs)).proportion_ci(level, method="exact")
        return float(ci.low), float(ci.high)
    return betting_reference(xs, level)


def _extremes(observed: Sequence[float], choices: Sequence[Sequence[float]]) -> tuple[float, float]:
    """Brute force: the lowest lower bound and the highest upper bound of ``_read`` over every
    completion, one value from ``choices[i]`` for the i-th unknown case."""
    bounds = [_read([*observed, *filled]) for filled in itertools.product(*choices)]
    return min(low for low, _ in bounds), max(high for _, high in bounds)


def _expand(counts: Mapping[float, int]) -> list[float]:
    return [value for value, count in counts.items() for _ in range(count)]


# Any value from 0 to 1, as near 0 and 1 as 1e-9: the betting bounds of values all 0 or 1 are
# the limit of values that approach them, which no completion reaches.
ANY_VALUE = [0.0, 1e-9, 0.01, 0.25, 0.5, 0.75, 0.99, 1 - 1e-9, 1.0]


@pytest.mark.parametrize(
    ("observed", "missing"),
    [
        ({1.0: 12}, 1),  # the CLI probe: recall@2, case 13 raised
        ({1.0: 9, 0.0: 4}, 1),
        ({0.0: 5}, 1),
        ({1.0: 1}, 1),
        ({1.0: 3}, 2),
        ({1.0: 6, 0.0: 1}, 2),
        ({1.0: 10, 0.5: 2}, 1),  # a mean already: only the betting interval applies
    ],
)
def test_a_graded_metric_is_bounded_at_the_worst_value_its_missing_cases_could_have(
    observed: dict[float, int], missing: int
) -> None:
    bounded = _graded_tally(observed, missing).bounded_interval(0.95)
    assert bounded is not None
    low, high = _extremes(_expand(observed), [ANY_VALUE] * missing)
    # It holds every completion, and the grid comes within 1e-9 of its bounds.
    assert low - 1e-7 <= bounded.lower <= low + 1e-10
    assert high - 1e-10 <= bounded.upper <= high + 1e-7


def _repeated_tally(cases: Sequence[tuple[int, int]], missing: int, k: int) -> MetricTally:
    """A pass/fail metric over ``k`` repeats: one case per (passes, judged repeats), its other
    repeats without a verdict, and ``missing`` cases none of whose repeats has one."""
    tally = MetricTally("answer_correct", "pass_fail")
    for passes, judged in cases:
        summary: dict[str, Any] = {"s": "value", "v": passes / judged, "n": judged}
        if judged < k:
            summary["m"] = k - judged
        tally.add(summary, repeats=k)
    for _ in range(missing):
        tally.add({"s": "missing", "r": "execution_errored"}, repeats=k)
    return tally


@pytest.mark.parametrize(
    ("cases", "missing"),
    [
        ([(3, 3)] * 12, 1),  # as the CLI probe, with three repeats of a pass/fail metric
        ([(3, 3)] * 8 + [(0, 3)] * 3, 2),
        ([(3, 3)] * 11 + [(0, 2)], 0),  # a case whose third repeat has no verdict
        ([(3, 3)] * 11 + [(2, 2)], 0),
        ([(3, 3)] * 11 + [(1, 2)], 1),
        ([(3, 3)] * 5 + [(2, 3)], 1),  # a mean already
    ],
)
def test_a_pass_rate_over_repeats_is_bounded_at_the_worst_rate_its_missing_ones_could_have(
    cases: list[tuple[int, int]], missing: int
) -> None:
    k = 3
    bounded = _repeated_tally(cases, missing, k).bounded_interval(0.95)
    assert bounded is not None
    known = [p / k for p, judged in cases if judged == k]
    # A missing case passes 0..3 of its repeats (or 1 of 2, its third excluded by its output);
    # a case with unjudged repeats adds 0..m passes to its judged ones.
    rates = [0.0, 1 / 3, 0.5, 2 / 3, 1.0]
    choices = [[(p + j) / k for j in range(k - judged + 1)] for p, judged in cases if judged < k]
    low, high = _extremes(known, choices + [rates] * missing)
    assert bounded.lower == pytest.approx(low, abs=1e-9)
    assert bounded.upper == pytest.approx(high, abs=1e-9)


def test_widest_keeps_each_extreme_and_says_where_it_came_from() -> None:
    cp, bet = clopper_pearson(12, 13), betting_interval_counts({1.0: 12, 0.0: 1})
    assert widest([bet, cp], [bet, cp]) == Interval(bet.lower, bet.upper, 0.95, "betting")
    mixed = widest([bet], [cp, Interval(0.1, 0.5, 0.95, "betting")])
    assert (mixed.lower, mixed.upper, mixed.method) == (
        bet.lower,
        cp.upper,
        "betting+clopper-pearson",
    )
    tie = widest([bet], [Interval(0.0, 1.0, 0.95, "betting"), Interval(0.0, 1.0, 0.95, "x")])
    assert tie.method == "betting"  # of equal bounds, the first given
    with pytest.raises(ValueError, match="different levels"):
        widest([cp], [clopper_pearson(12, 13, 0.9)])
    with pytest.raises(ValueError, match="at least one"):
        widest([], [cp])


def test_the_report_and_the_rules_read_one_bound() -> None:
    """A rule asks for the bounded interval with the method left to the tally, the report's
    row with the method it shows the metric by: for a missing value's worst case, each way the
    values could be chooses its own method, so the two read the same bound."""
    for tally in (
        _graded_tally({1.0: 12}, missing=1),
        _repeated_tally([(3, 3)] * 11 + [(2, 2)], missing=1, k=3),
    ):
        bounds = {tally.bounded_interval(0.95, proportion=p) for p in (None, True, False)}
        assert len(bounds) == 1, bounds


def test_the_bounds_decisions_of_schema_4_read_are_kept_for_them() -> None:
    """``any_value`` False is how an earlier release bounded them (verify re-derives its
    decisions so): Clopper-Pearson with the missing cases at 0 and 1, above the worst case."""
    tally = _graded_tally({1.0: 12}, missing=1)
    before = dataclasses.replace(tally, any_value=False).bounded_interval(0.95)
    assert before == bounded_proportion(12, 12, 1, 0.95)
    now = tally.bounded_interval(0.95)
    assert now is not None and now.lower < before.lower  # 0.545 against 0.640
    assert now.lower == betting_interval_counts({1.0: 12, 0.0: 1}, 0.95).lower
    # With nothing missing, nothing changes.
    for observed in ({1.0: 12}, {1.0: 9, 0.0: 4}, {1.0: 10, 0.5: 2}):
        plain = _graded_tally(observed, 0)
        assert plain.bounded_interval(0.95) == plain.interval(0.95)
    assert _graded_tally({1.0: 12}, 0).bounded_interval(0.95) == clopper_pearson(12, 12)


# ---------------------------------------------------------------------------------- display


def _printed(text: str, scale: int) -> tuple[Decimal, Decimal]:
    low, high = text.strip("[]").split(", ")
    return Decimal(low.rstrip("%")) / scale, Decimal(high.rstrip("%")) / scale


def _near_steps() -> list[tuple[float, float]]:
    """(bound, threshold) pairs: a threshold on the 0.001 grid and a bound on it, a few floats
    off it, a relative 1e-16..1e-9 off it, or anywhere within two steps."""
    rng = random.Random(31337)
    pairs = []
    for _ in range(4000):
        threshold = float(f"0.{rng.randint(1, 999):03d}")
        bound = threshold
        shape = rng.randrange(3)
        if shape == 0:
            for _ in range(rng.randint(0, 3)):
                bound = math.nextafter(bound, rng.choice([0.0, 1.0]))
        elif shape == 1:
            bound = threshold * (1 + rng.choice([-1, 1]) * 10 ** rng.uniform(-16, -9))
        else:
            bound = threshold + rng.uniform(-0.002, 0.002)
        pairs.append((min(max(bound, 0.0), 1.0), threshold))
    return pairs


def test_a_printed_bound_agrees_with_the_rule_on_a_threshold_at_the_printed_step() -> None:
    for bound, threshold in _near_steps():
        iv = Interval(bound, bound, 0.95, "test")
        exact, step = Decimal(repr(bound)), Decimal(repr(threshold))
        for text, scale in ((fmt_percent_interval(iv), 100), (fmt_mean_interval(iv), 1)):
            low, high = _printed(text, scale)
            assert low <= exact <= high, (bound, text)  # outward: holds the computed bound
            assert (decide_min(iv, threshold)[0] == "PASS") == (low >= step), (bound, text)
            assert (decide_max(iv, threshold)[0] == "PASS") == (high <= step), (bound, text)


@pytest.mark.parametrize(
    ("level", "threshold", "printed", "outcome"),
    [
        (0.9, 0.05, "4.9%", "INSUFFICIENT_EVIDENCE"),  # L = 0.04999999999999999
        (0.8, 0.1, "9.9%", "INSUFFICIENT_EVIDENCE"),  # L = 0.09999999999999998
        (0.95, 0.025, "2.5%", "PASS"),  # L = 0.025000000000000022
    ],
)
def test_one_of_one_prints_its_lower_bound_as_the_rule_reads_it(
    level: float, threshold: float, printed: str, outcome: str
) -> None:
    # 1 of 1: L = alpha / 2, with alpha = 1 - level in binary (1 - 0.9 = 0.09999999999999998).
    iv = clopper_pearson(1, 1, level)
    assert iv.lower == (1 - level) / 2
    assert fmt_percent_lower(iv.lower) == printed
    assert fmt_percent_interval(iv) == f"[{printed}, 100.0%]"
    assert decide_min(iv, threshold)[0] == outcome
