"""Confidence intervals, paired differences, planning and the rules decided on them.

Every printed interval comes from one of three methods (see ``docs/statistics.md``):

- :func:`clopper_pearson`: the exact binomial interval for a pass/fail metric
  (Clopper & Pearson 1934).
- :func:`betting_interval`: a betting confidence interval for the mean of values in [0, 1]
  (Waudby-Smith & Ramdas 2024), with a diversified-Kelly capital process of 19 constant bets.
- :func:`paired_difference` / :func:`paired_binary_difference`: the same betting interval on
  paired differences d = candidate - baseline, mapped into [0, 1] and back.

:func:`planning_total` says how many paired cases would decide a non-inferiority rule if the
observed discordance held, and the ``decide_*`` functions turn an interval into
``PASS``/``FAIL``/``INSUFFICIENT_EVIDENCE`` with a reason code.

Missing cases (errored, timed out, not run, no verdict) count against every decision:
:func:`bounded_proportion` and :func:`bounded_mean_counts` widen an interval to hold whatever
the missing cases would have been, by counting each as a fail (0) for the lower bound and as a
pass (1) for the upper. Both bounds are monotone in every value, so the result is exactly the
union of the intervals of all possible completions; with nothing missing it is the plain one.
Where the missing values also choose the method (a graded metric whose observed values are all
0 or 1), :func:`widest` joins the extremes of each method a completion could be read with.

All intervals are at ``level`` (default 0.95, alpha = 1 - level) and are returned as
:class:`~oloproof.results.Interval` with ``method`` set to one of :data:`CLOPPER_PEARSON`,
:data:`BETTING` or :data:`PAIRED_BETTING` (or two joined by ``+``, from :func:`widest`).
Differences are in fraction units (0.05 is five points); :mod:`oloproof.display` does the x100
and the rounding.

numpy and scipy are imported inside the functions that need them, so importing this module
stays cheap (``oloproof --help`` never pays for scipy). Within :func:`remembered`, the two
intervals that need scipy (Clopper-Pearson and the betting interval) are also served from, and
added to, a table of bounds computed before for the same inputs: a run stores the table of
its report with its end record, so reading the report back (``oloproof inspect``) neither
imports scipy (half a second) nor searches for a root again. ``oloproof verify`` recomputes
every stored entry.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, Literal

from oloproof.results import Interval

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    FloatArray = NDArray[np.float64]

__all__ = [
    "BETTING",
    "CLOPPER_PEARSON",
    "N_BETS",
    "PAIRED_BETTING",
    "PLANNING_LIMIT",
    "Outcome",
    "betting_interval",
    "betting_interval_counts",
    "bounded_mean_counts",
    "bounded_proportion",
    "clopper_pearson",
    "decide_equivalence",
    "decide_max",
    "decide_min",
    "decide_non_inferiority",
    "decide_superiority",
    "paired_binary_difference",
    "paired_difference",
    "planning_total",
    "remembered",
    "widest",
]

Outcome = Literal["PASS", "FAIL", "INSUFFICIENT_EVIDENCE"]

CLOPPER_PEARSON = "clopper-pearson"
BETTING = "betting"
PAIRED_BETTING = "paired-betting"

N_BETS = 19
"""D: the capital process averages D constant bets f_k = k / (D + 1), k = 1..D."""

PLANNING_LIMIT = 100_000
"""Default bound on the total number of pairs :func:`planning_total` searches."""

# The smallest mean the lower-bound search considers; below it the bound is reported as 0.
_SMALLEST_MEAN = 1e-300
# brentq tolerance on log(m): a relative error of ~1e-13 in the bound.
_LOG_M_XTOL = 1e-13
# planning: re-check with the full interval when log K+ is this close to the threshold.
_PLANNING_TIE = 1e-6


# ------------------------------------------------------------------ intervals computed before

_Key = tuple[Any, ...]
_MEMO: ContextVar[dict[_Key, tuple[float, float]] | None] = ContextVar("intervals", default=None)


@contextmanager
def remembered(entries: Iterable[Sequence[Any]] = ()) -> Iterator[list[list[Any]]]:
    """Serve :func:`clopper_pearson` and the betting interval from ``entries`` where they hold
    the same inputs, and gather every interval given within, as entries to store.

    An entry is ``["clopper-pearson", k, n, level, lower, upper]`` or ``["betting",
    [[value, count], ...], level, lower, upper]`` (values ascending). The yielded list is
    filled when the block ends. Entries of another shape are ignored, never trusted.
    """
    memo = dict(parsed for parsed in map(_parse, entries) if parsed is not None)
    token = _MEMO.set(memo)
    gathered: list[list[Any]] = []
    try:
        yield gathered
    finally:
        _MEMO.reset(token)
        gathered.extend(_entry(key, bounds) for key, bounds in memo.items())


def stored_entry_differences(entry: Sequence[Any]) -> str | None:
    """What is wrong with one stored entry (its bounds recomputed), or None when it holds."""
    parsed = _parse(entry)
    if parsed is None:
        return f"not an interval entry: {list(entry)!r}"
    key, stored = parsed
    derived = _compute(key)
    if stored != derived:
        return f"{key[0]} {list(entry[1:-2])!r}: stored {stored}, recomputed {derived}"
    return None


def _parse(entry: Sequence[Any]) -> tuple[_Key, tuple[float, float]] | None:
    """A stored entry's inputs (as the memo's key) and bounds; None for any other shape."""
    try:
        kind, *inputs, lower, upper = entry
        bounds = (float(lower), float(upper))
        if kind == CLOPPER_PEARSON and len(inputs) == 3:
            k, n, level = inputs
            return (kind, _count(k, "k"), _count(n, "n"), float(level)), bounds
        if kind == BETTING and len(inputs) == 2:
            pairs, level = inputs
            kept = tuple((float(v), _count(c, "count")) for v, c in pairs)
            return ((kind, kept, float(level)), bounds) if list(kept) == sorted(kept) else None
    except (TypeError, ValueError):
        pass
    return None


def _entry(key: _Key, bounds: tuple[float, float]) -> list[Any]:
    if key[0] == CLOPPER_PEARSON:
        return [*key, *bounds]
    return [key[0], [list(pair) for pair in key[1]], key[2], *bounds]


def _remembered(key: _Key) -> tuple[float, float]:
    memo = _MEMO.get()
    if memo is None:
        return _compute(key)
    found = memo.get(key)
    if found is None:
        found = memo[key] = _compute(key)
    return found


def _compute(key: _Key) -> tuple[float, float]:
    if key[0] == CLOPPER_PEARSON:
        return _clopper_pearson_bounds(*key[1:])
    import numpy as np

    values = np.array([v for v, _ in key[1]], dtype=np.float64)
    weights = np.array([float(c) for _, c in key[1]], dtype=np.float64)
    return _betting_bounds(values, weights, key[2])


# --------------------------------------------------------------------------- validation


def _check_level(level: float) -> float:
    level = float(level)
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must lie strictly between 0 and 1, got {level!r}")
    return level


def _count(value: int, name: str) -> int:
    if isinstance(value, bool):
        raise TypeError(f"{name} must be an integer count, got a bool")
    count = operator.index(value)
    if count < 0:
        raise ValueError(f"{name} must be >= 0, got {count}")
    return count


def _check_unit(values: Sequence[float], name: str) -> None:
    if not all(math.isfinite(v) and 0.0 <= v <= 1.0 for v in values):
        raise ValueError(f"every value of {name} must be a finite number in [0, 1]")


def _unit_array(xs: Sequence[float], name: str) -> FloatArray:
    import numpy as np

    arr = np.asarray(xs, dtype=np.float64)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be a flat sequence of numbers")
    if arr.size == 0:
        raise ValueError(f"{name} is empty: an interval needs at least one observation")
    if not np.all(np.isfinite(arr)) or np.any(arr < 0.0) or np.any(arr > 1.0):
        raise ValueError(f"every value of {name} must be a finite number in [0, 1]")
    return arr


def _check_margin(margin: float) -> float:
    margin = float(margin)
    if math.isnan(margin) or margin < 0.0:
        raise ValueError(f"a margin must be a number >= 0, got {margin!r}")
    return margin


def _check_bounds(interval: Interval) -> None:
    if math.isnan(interval.lower) or math.isnan(interval.upper):
        raise ValueError(f"cannot decide on an interval with a NaN bound: {interval!r}")


# ----------------------------------------------------------------------- Clopper-Pearson


def clopper_pearson(k: int, n: int, level: float = 0.95) -> Interval:
    """Exact (Clopper-Pearson) interval for a proportion: ``k`` passes out of ``n``.

    With alpha = 1 - level::

        L = Beta^-1(alpha/2;     k,     n - k + 1)    (L = 0 when k = 0)
        U = Beta^-1(1 - alpha/2; k + 1, n - k)        (U = 1 when k = n)

    the same interval as ``scipy.stats.binomtest(k, n).proportion_ci(level, method="exact")``,
    computed with ``scipy.special.betaincinv`` (cheaper to import and call than scipy.stats).

    Raises ``ValueError`` when ``n == 0`` (no observation, no interval: a rule over such a
    metric is INSUFFICIENT_EVIDENCE, decided by the caller), when ``k`` is outside
    ``0..n``, or when ``level`` is not strictly between 0 and 1.
    """
    k, n = _count(k, "k"), _count(n, "n")
    level = _check_level(level)
    if n == 0:
        raise ValueError("n is 0: an interval needs at least one observation")
    if k > n:
        raise ValueError(f"k must not exceed n, got k={k}, n={n}")
    lower, upper = _remembered((CLOPPER_PEARSON, k, n, level))
    return Interval(lower, upper, level, CLOPPER_PEARSON)


def _clopper_pearson_bounds(k: int, n: int, level: float) -> tuple[float, float]:
    from scipy.special import betaincinv

    alpha = 1.0 - level
    lower = 0.0 if k == 0 else float(betaincinv(k, n - k + 1, alpha / 2))
    upper = 1.0 if k == n else float(betaincinv(k + 1, n - k, 1 - alpha / 2))
    return lower, upper


# ------------------------------------------------------------------------ betting interval


def _bets() -> FloatArray:
    import numpy as np

    return np.arange(1, N_BETS + 1, dtype=np.float64) / (N_BETS + 1)


def _log_mean_exp(s: FloatArray) -> float:
    import numpy as np

    top = float(s.max())
    return top + math.log(float(np.exp(s - top).sum()) / s.size)


def _log_capital_above(values: FloatArray, counts: FloatArray, m: float) -> float:
    """log K+(m) = log( (1/D) sum_k prod_i [1 + f_k (x_i - m) / m] ), grouped by value.

    Each distinct value v_j with multiplicity c_j contributes c_j * log1p(f_k (v_j / m - 1)),
    so one evaluation costs O(D x distinct values). The factor is >= 1 - f_k > 0 for v >= 0.
    """
    import numpy as np

    terms = np.log1p(np.multiply.outer(_bets(), values / m - 1.0))
    return _log_mean_exp(terms @ counts)


def _lower_bound(values: FloatArray, counts: FloatArray, log_threshold: float) -> float:
    """The m in (0, mean] where K+(m) = 2/alpha, or 0 when K+ stays below 2/alpha.

    K+ decreases in m and K+(mean) <= 1 < 2/alpha (each log-product is <= its first-order
    term, which sums to 0 at the mean), so the root is bracketed by (0, mean]. The search runs
    on t = log m, from log(1e-300) to log(mean), with brentq. When every value is 0, or K+ is
    still below the threshold at m = 1e-300, nothing is rejected above 0 and the bound is 0.
    """
    from scipy.optimize import brentq

    mean = float(values @ counts) / float(counts.sum())
    if mean <= _SMALLEST_MEAN:
        return 0.0

    def excess(t: float) -> float:
        return _log_capital_above(values, counts, math.exp(t)) - log_threshold

    t_low, t_high = math.log(_SMALLEST_MEAN), math.log(mean)
    if excess(t_low) <= 0.0:
        return 0.0
    root = float(brentq(excess, t_low, t_high, xtol=_LOG_M_XTOL))
    return min(math.exp(root), mean)


def _betting_bounds(values: FloatArray, counts: FloatArray, level: float) -> tuple[float, float]:
    """(L, U) of the betting interval for distinct ``values`` in [0, 1] with ``counts``.

    U solves K-(U) = 2/alpha. Since K-(m) on x equals K+(1 - m) on 1 - x, U is computed as
    1 - (lower bound on the reflected values), so both ends share one root-finder and the
    interval for 1 - x is the mirror image of the interval for x.
    """
    log_threshold = math.log(2.0 / (1.0 - level))
    lower = _lower_bound(values, counts, log_threshold)
    upper = 1.0 - _lower_bound(1.0 - values, counts, log_threshold)
    return lower, upper


def _grouped(arr: FloatArray) -> tuple[FloatArray, FloatArray]:
    import numpy as np

    values, counts = np.unique(arr, return_counts=True)
    return values, counts.astype(np.float64)


def betting_interval(xs: Sequence[float], level: float = 0.95) -> Interval:
    """Betting confidence interval for the mean of values in [0, 1] (Waudby-Smith & Ramdas 2024).

    With D = 19 bets f_k = k/20 and alpha = 1 - level::

        K+(m) = (1/D) sum_k prod_i [1 + f_k (x_i - m) / m]        bets that the mean is above m
        K-(m) = (1/D) sum_k prod_i [1 - f_k (x_i - m) / (1 - m)]  bets that the mean is below m

    The interval is {m in (0, 1) : max(K+(m), K-(m)) < 2/alpha}: L solves K+(L) = 2/alpha
    and U solves K-(U) = 2/alpha, found exactly by brentq on log K (log-sum-exp over the bets),
    so nothing overflows at any n. Values are grouped by distinct value first, so the result
    does not depend on the order of ``xs`` and each evaluation costs O(D x distinct values).

    Edge cases: empty ``xs``, a value outside [0, 1] or not finite, or ``level`` outside (0, 1)
    raise ``ValueError``. All values 0 gives L = 0 (K+ never reaches 2/alpha); all values 1
    gives U = 1; any run gives L <= mean <= U.
    """
    level = _check_level(level)
    values, counts = _grouped(_unit_array(xs, "xs"))
    lower, upper = _betting_bounds(values, counts, level)
    return Interval(lower, upper, level, BETTING)


def betting_interval_counts(counts: Mapping[float, int], level: float = 0.95) -> Interval:
    """``betting_interval`` of values given as {value: how many times it was observed}.

    The same interval as expanding the counts into a list, without holding one value a case.
    """
    level = _check_level(level)
    kept = sorted((float(v), _count(c, "count")) for v, c in counts.items() if c > 0)
    if not kept:
        raise ValueError("betting interval of no values")
    _check_unit([v for v, _ in kept], "values")
    lower, upper = _remembered((BETTING, tuple(kept), level))
    return Interval(lower, upper, level, BETTING)


def _check_missing(missing: int) -> int:
    return _count(missing, "missing")


def bounded_proportion(k: int, n: int, missing: int, level: float = 0.95) -> Interval:
    """Clopper-Pearson for ``k`` passes of ``n`` observed, with ``missing`` cases unknown.

    Every missing case counts as a fail for the lower bound and as a pass for the upper::

        L = Clopper-Pearson lower of k       of n + missing
        U = Clopper-Pearson upper of k + missing of n + missing

    The lower bound rises with k and the upper bound too, so [L, U] is the union of the
    intervals of every way the missing cases could have come out: it holds the rate the run
    would show with every case answered, whatever made them missing. With ``missing`` 0 it is
    :func:`clopper_pearson` of k of n. Raises ``ValueError`` as that does (n + missing = 0 has
    no interval).
    """
    missing = _check_missing(missing)
    if missing == 0:
        return clopper_pearson(k, n, level)
    total = _count(n, "n") + missing
    lower = clopper_pearson(k, total, level).lower
    upper = clopper_pearson(_count(k, "k") + missing, total, level).upper
    return Interval(lower, upper, level, CLOPPER_PEARSON)


def bounded_mean_counts(counts: Mapping[float, int], missing: int, level: float = 0.95) -> Interval:
    """The betting interval of observed ``counts`` ({value: times}) with ``missing`` unknown.

    The lower bound is that of the observed values with every missing case set to 0, the
    upper bound that of the values with every missing case set to 1. K+ grows with each value
    and K- falls, so each bound is monotone in every value and [L, U] is the union of the
    intervals over every value in [0, 1] the missing cases could have had. With ``missing`` 0
    it is :func:`betting_interval_counts` of ``counts``.
    """
    missing = _check_missing(missing)
    if missing == 0:
        return betting_interval_counts(counts, level)
    low = {float(v): c for v, c in counts.items()}
    high = dict(low)
    low[0.0] = low.get(0.0, 0) + missing
    high[1.0] = high.get(1.0, 0) + missing
    lower = betting_interval_counts(low, level).lower
    upper = betting_interval_counts(high, level).upper
    return Interval(lower, upper, level, BETTING)


def widest(lowers: Sequence[Interval], uppers: Sequence[Interval]) -> Interval:
    """The lowest lower bound of ``lowers`` and the highest upper bound of ``uppers``.

    For a bound that must hold whichever of several intervals applies: a missing case of a
    graded metric whose observed values are all 0 or 1 decides by its value which method the
    metric's interval is (Clopper-Pearson for 0 or 1, betting for a value between), so its
    lower bound is the lower of the two methods' lowest. The method names where the bounds
    came from: one method, or ``lower's+upper's`` when they differ. Of equal bounds the first
    given wins. Raises ``ValueError`` when either sequence is empty or the levels differ.
    """
    if not lowers or not uppers:
        raise ValueError("widest needs at least one interval for each bound")
    levels = {iv.level for iv in (*lowers, *uppers)}
    if len(levels) != 1:
        raise ValueError(f"intervals at different levels cannot be joined: {sorted(levels)}")
    low = min(lowers, key=lambda iv: iv.lower)
    high = max(uppers, key=lambda iv: iv.upper)
    method = low.method if low.method == high.method else f"{low.method}+{high.method}"
    return Interval(low.lower, high.upper, low.level, method)


# ---------------------------------------------------------------------- paired differences


def _paired_interval(values: FloatArray, counts: FloatArray, level: float) -> Interval:
    """Betting interval on y = (d + 1) / 2, mapped back to [2L - 1, 2U - 1]."""
    lower, upper = _betting_bounds(values, counts, level)
    return Interval(2.0 * lower - 1.0, 2.0 * upper - 1.0, level, PAIRED_BETTING)


def paired_difference(
    candidate: Sequence[float], baseline: Sequence[float], level: float = 0.95
) -> tuple[float, Interval]:
    """Mean paired difference candidate - baseline and its betting interval.

    ``candidate[i]`` and ``baseline[i]`` are the same case in two runs, each in [0, 1], so
    d_i = candidate_i - baseline_i lies in [-1, 1]. The interval is :func:`betting_interval`
    on y_i = (d_i + 1) / 2, reported as [2L - 1, 2U - 1]; the estimate is mean(d_i). Both are
    in difference units (fractions: 0.067 is 6.7 points). Swapping the runs mirrors the
    interval: [L, U] becomes [-U, -L].

    Raises ``ValueError`` for empty input, sequences of different lengths, values outside
    [0, 1] and ``level`` outside (0, 1).
    """
    import numpy as np

    level = _check_level(level)
    cand = _unit_array(candidate, "candidate")
    base = _unit_array(baseline, "baseline")
    if cand.shape != base.shape:
        raise ValueError(
            f"candidate and baseline must pair up case by case: {cand.size} != {base.size}"
        )
    diffs = cand - base
    estimate = math.fsum(diffs.tolist()) / diffs.size
    values, counts = _grouped(np.clip((diffs + 1.0) / 2.0, 0.0, 1.0))
    return estimate, _paired_interval(values, counts, level)


def _binary_groups(n: int, b: int, c: int) -> tuple[FloatArray, FloatArray]:
    """Distinct y values (0, 0.5, 1) and their counts (c, n - b - c, b), zero counts dropped."""
    import numpy as np

    pairs = [(0.0, c), (0.5, n - b - c), (1.0, b)]
    kept = [(v, k) for v, k in pairs if k > 0]
    return (
        np.array([v for v, _ in kept], dtype=np.float64),
        np.array([k for _, k in kept], dtype=np.float64),
    )


def _check_pairs(n: int, b: int, c: int) -> tuple[int, int, int]:
    n, b, c = _count(n, "n"), _count(b, "b"), _count(c, "c")
    if n == 0:
        raise ValueError("n is 0: a paired interval needs at least one pair")
    if b + c > n:
        raise ValueError(f"b + c must not exceed n, got b={b}, c={c}, n={n}")
    return n, b, c


def paired_binary_difference(n: int, b: int, c: int, level: float = 0.95) -> tuple[float, Interval]:
    """:func:`paired_difference` for a pass/fail metric, from counts alone.

    Of ``n`` pairs, ``b`` went fail -> pass (d = +1, y = 1), ``c`` went pass -> fail
    (d = -1, y = 0) and the rest agree (d = 0, y = 0.5). The estimate is (b - c) / n and the
    interval is identical to :func:`paired_difference` on the same pairs, at a cost that does
    not depend on n. Raises ``ValueError`` when n = 0, b + c > n, or a count is negative.
    """
    level = _check_level(level)
    n, b, c = _check_pairs(n, b, c)
    values, counts = _binary_groups(n, b, c)
    return (b - c) / n, _paired_interval(values, counts, level)


# --------------------------------------------------------------------------------- planning


def _held_discordance(ns: FloatArray, n: int, b: int, c: int) -> tuple[FloatArray, ...]:
    """b_N, c_N and the concordant rest for each total N in ``ns`` (integers as floats).

    b_N = round(N b / n) and c_N = round(N c / n), rounding halves up, in exact integer
    arithmetic. When every observed pair is discordant and both round up, b_N + c_N would be
    N + 1; b_N then gives way by one (the conservative choice for a non-inferiority claim).
    """
    import numpy as np

    totals = ns.astype(np.int64)
    b_n = (2 * totals * b + n) // (2 * n)
    c_n = (2 * totals * c + n) // (2 * n)
    b_n = np.minimum(b_n, totals - c_n)
    rest = totals - b_n - c_n
    return b_n.astype(np.float64), c_n.astype(np.float64), rest.astype(np.float64)


def _log_capital_rows(
    counts: tuple[FloatArray, ...], m0: float, log_threshold: float
) -> FloatArray:
    """log K+(m0) - log(2/alpha) on y for each row of counts (of y = 1, 0, 0.5)."""
    import numpy as np

    logs = np.log1p(np.multiply.outer(np.array([1.0, 0.0, 0.5]) / m0 - 1.0, _bets()))
    s = np.column_stack(counts) @ logs
    top = s.max(axis=1, keepdims=True)
    log_k = top[:, 0] + np.log(np.exp(s - top).mean(axis=1))
    excess: FloatArray = log_k - log_threshold
    return excess


def _decides(n_total: int, b_n: int, c_n: int, margin: float, level: float) -> bool:
    return paired_binary_difference(n_total, b_n, c_n, level)[1].lower > -margin


def planning_total(
    n: int,
    b: int,
    c: int,
    margin: float,
    level: float = 0.95,
    limit: int = PLANNING_LIMIT,
) -> int | None:
    """Smallest total N > n whose paired interval would clear a non-inferiority ``margin``.

    The observed discordance is held: on N pairs, b_N = round(N b / n) improve and
    c_N = round(N c / n) regress (halves round up; see :func:`_held_discordance`), the rest
    agree. N is the smallest total with :func:`paired_binary_difference` lower bound
    > -margin (``margin`` a fraction, 0.05 for 5 points). "About N - n more paired cases
    would decide it."

    Returns ``None`` when b + c = 0: with no discordant pair the data say nothing about how
    often the runs disagree, so no total can be projected. Returns ``limit + 1`` when no
    N <= ``limit`` decides (print "more than {limit}"), including when n >= limit. Never
    raises for an undecidable rule; raises ``ValueError`` for invalid counts, a margin outside
    [0, 1), or ``level`` outside (0, 1). If the rule is already decided at n, the answer is
    still the first N > n that decides.

    The lower bound L_y of the interval on y exceeds m0 = (1 - margin) / 2 exactly when
    K+(m0) > 2/alpha (K+ decreases in m), so each candidate N costs one closed-form
    evaluation of K+ at a fixed m0 over three distinct values; candidates are scanned
    linearly (no monotonicity in N is assumed: rounding makes b_N/N wobble) in vectorised
    blocks, and the first hit is confirmed with the full interval.
    """
    import numpy as np

    level = _check_level(level)
    n, b, c = _check_pairs(n, b, c)
    margin = _check_margin(margin)
    if margin >= 1.0:
        raise ValueError(f"a planning margin must be below 1 (100 points), got {margin!r}")
    limit = _count(limit, "limit")
    if b + c == 0:
        return None
    m0 = (1.0 - margin) / 2.0
    log_threshold = math.log(2.0 / (1.0 - level))
    start, block = n + 1, 1024
    while start <= limit:
        ns = np.arange(start, min(start + block, limit + 1), dtype=np.float64)
        counts = _held_discordance(ns, n, b, c)
        excess = _log_capital_rows(counts, m0, log_threshold)
        for i in np.flatnonzero(excess > -_PLANNING_TIE):
            b_n, c_n = int(counts[0][i]), int(counts[1][i])
            if _decides(int(ns[i]), b_n, c_n, margin, level):
                return int(ns[i])
        start += ns.size
        block = min(block * 2, 65_536)
    return limit + 1


# -------------------------------------------------------------------------------- decisions


def _decide(
    interval: Interval,
    passes: Callable[[float, float], bool],
    fails: Callable[[float, float], bool],
    codes: tuple[str, str, str],
) -> tuple[Outcome, str]:
    _check_bounds(interval)
    if passes(interval.lower, interval.upper):
        return "PASS", codes[0]
    if fails(interval.lower, interval.upper):
        return "FAIL", codes[1]
    return "INSUFFICIENT_EVIDENCE", codes[2]


def decide_min(interval: Interval, threshold: float) -> tuple[Outcome, str]:
    """A ``min: x`` rule: PASS when L >= x, FAIL when U < x, else INSUFFICIENT_EVIDENCE.

    Reason codes: ``interval_above_threshold`` (touching counts: L == x passes),
    ``interval_below_threshold``, ``interval_overlaps_threshold``. Uses unrounded bounds;
    a NaN bound or threshold raises ``ValueError``.
    """
    x = _check_threshold(threshold)
    return _decide(
        interval,
        lambda lo, _: lo >= x,
        lambda _, hi: hi < x,
        ("interval_above_threshold", "interval_below_threshold", "interval_overlaps_threshold"),
    )


def decide_max(interval: Interval, threshold: float) -> tuple[Outcome, str]:
    """A ``max: x`` rule, the mirror of :func:`decide_min`: PASS when U <= x, FAIL when L > x.

    Reason codes: ``interval_below_threshold`` (PASS, U == x passes),
    ``interval_above_threshold`` (FAIL), ``interval_overlaps_threshold``.
    """
    x = _check_threshold(threshold)
    return _decide(
        interval,
        lambda _, hi: hi <= x,
        lambda lo, _: lo > x,
        ("interval_below_threshold", "interval_above_threshold", "interval_overlaps_threshold"),
    )


_MARGIN_CODES = ("interval_above_margin", "interval_below_margin", "interval_overlaps_margin")


def decide_non_inferiority(interval: Interval, margin: float) -> tuple[Outcome, str]:
    """Candidate no worse than baseline by more than ``margin`` (>= 0, a fraction).

    On the paired difference interval [L, U]: PASS when L > -m (``interval_above_margin``),
    FAIL when U < -m (``interval_below_margin``), else INSUFFICIENT_EVIDENCE
    (``interval_overlaps_margin``). A bound exactly at -m decides nothing.
    """
    m = _check_margin(margin)
    return _decide(interval, lambda lo, _: lo > -m, lambda _, hi: hi < -m, _MARGIN_CODES)


def decide_superiority(interval: Interval, margin: float = 0.0) -> tuple[Outcome, str]:
    """Candidate better than baseline by more than ``margin`` (>= 0; 0 means "better").

    Non-inferiority with the margin on the other side of zero: PASS when L > +m
    (``interval_above_margin``), FAIL when U < +m (``interval_below_margin``), else
    INSUFFICIENT_EVIDENCE (``interval_overlaps_margin``). As for non-inferiority, a bound
    exactly at the margin decides nothing.
    """
    m = _check_margin(margin)
    return _decide(interval, lambda lo, _: lo > m, lambda _, hi: hi < m, _MARGIN_CODES)


def decide_equivalence(interval: Interval, margin: float) -> tuple[Outcome, str]:
    """Candidate within ``margin`` (>= 0) of baseline in either direction.

    PASS when -m < L and U < m (``interval_within_margins``); FAIL when the interval lies
    entirely outside, U < -m or L > m (``interval_outside_margins``); else
    INSUFFICIENT_EVIDENCE (``interval_overlaps_margin``). With m = 0 it can never PASS.
    """
    m = _check_margin(margin)
    return _decide(
        interval,
        lambda lo, hi: -m < lo and hi < m,
        lambda lo, hi: hi < -m or lo > m,
        ("interval_within_margins", "interval_outside_margins", "interval_overlaps_margin"),
    )


def _check_threshold(threshold: float) -> float:
    x = float(threshold)
    if math.isnan(x):
        raise ValueError("a rule threshold must be a number, got NaN")
    return x
