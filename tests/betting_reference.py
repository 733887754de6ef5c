"""The betting confidence interval of statistics.md B and C, written out from the spec as an
independent reference for tests: never Oloproof's own arithmetic."""

from __future__ import annotations

import math
from collections.abc import Sequence

from scipy.optimize import brentq


def _log_capital(xs: Sequence[float], m: float, sign: int) -> float:
    """log of (1/19) sum_k prod_i [1 +- f_k (x_i - m)/(m or 1 - m)], the 19 bets f_k = k/20."""
    logs = []
    for k in range(1, 20):
        f = k / 20
        total = 0.0
        for x in xs:
            term = 1 + f * (x - m) / m if sign > 0 else 1 - f * (x - m) / (1 - m)
            if term <= 0:
                total = -math.inf
                break
            total += math.log(term)
        logs.append(total)
    top = max(logs)
    return top + math.log(sum(math.exp(v - top) for v in logs) / 19)


def betting(xs: Sequence[float], level: float = 0.95) -> tuple[float, float]:
    """statistics.md B: the bounds where K+(L) = 2/alpha and K-(U) = 2/alpha."""
    threshold = math.log(2 / (1 - level))
    mean, eps = sum(xs) / len(xs), 1e-12

    def above(m: float) -> float:
        return _log_capital(xs, m, +1) - threshold

    def below(m: float) -> float:
        return _log_capital(xs, m, -1) - threshold

    lower = 0.0 if above(eps) < 0 else brentq(above, eps, max(mean, 2 * eps), xtol=1e-13)
    upper = (
        1.0 if below(1 - eps) < 0 else brentq(below, min(mean, 1 - 2 * eps), 1 - eps, xtol=1e-13)
    )
    return lower, upper


def paired(ds: Sequence[float], level: float = 0.95) -> tuple[float, float]:
    """statistics.md C: the betting interval of (d + 1)/2, mapped back to [-1, 1]."""
    lower, upper = betting([(d + 1) / 2 for d in ds], level)
    return 2 * lower - 1, 2 * upper - 1
