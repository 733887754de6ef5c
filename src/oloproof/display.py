"""How numbers and intervals are printed: pure string formatting, no numpy or scipy.

The display rule (``docs/statistics.md``):

- Every quantity is shown to 0.001 of a fraction: 0.1 for percentages and points, 0.001 for
  means.
- Point estimates round to the nearest step, halves away from zero (0.6925 -> ``69.3%``,
  -0.0675 -> ``-6.8 points``). A proportion or mean that is neither 0 nor 1 gets as many more
  decimals as keep it off both (0.9996 -> ``99.96%``, ``0.0004``): it never reads as none or all.
  A difference that is neither -1 nor 1 likewise (-0.99996 -> ``-99.996 points``).
- Lower bounds round down and upper bounds round up, so the printed interval always
  contains the computed one.
- Rounding works on the decimal value of the float (its shortest ``repr``), so the float
  0.753 is on its step and prints ``0.753`` whichever way it is rounded, and exact 0 and 1
  print ``0.0%`` and ``100.0%``. A point estimate within a relative 1e-12 of a half step
  counts as exactly on it (0.6924999999999999 prints ``69.3%``, as 0.6925 does). A bound gets
  no such allowance: a lower bound of 0.04999999999999999 is below 0.05, the rules compare it
  as below, and it prints ``4.9%``, never ``5.0%``.

Decisions never use these strings; they use the unrounded bounds. Because the shortest
``repr`` orders floats as they compare, a lower bound prints at or above a threshold written
to the printed precision exactly when ``L >= threshold``, and an upper bound at or below it
exactly when ``U <= threshold``: the printed interval never shows a ``min`` or ``max`` rule
cleared that its decision says is not. Comparison rules compare strictly with their margins, so
beside them a bound gets the decimals that keep it on its side (``fmt_points_interval``).
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable, Sequence
from decimal import (
    MAX_EMAX,
    MIN_EMIN,
    ROUND_CEILING,
    ROUND_FLOOR,
    ROUND_HALF_EVEN,
    ROUND_HALF_UP,
    Context,
    Decimal,
    DivisionByZero,
    InvalidOperation,
    Overflow,
    localcontext,
)
from typing import ParamSpec, TypeVar

from oloproof.results import Interval

__all__ = [
    "fmt_cost",
    "fmt_mean",
    "fmt_mean_interval",
    "fmt_means_apart",
    "fmt_percent",
    "fmt_percent_interval",
    "fmt_percent_lower",
    "fmt_points",
    "fmt_points_interval",
    "fmt_share",
    "fmt_written",
    "printable",
]

# Float noise sits in a value's last digits (a relative 1e-16): a point estimate that near a half
# step rounds as the half it stands for. Bounds are never moved inward: one below a step by any
# amount (910 of 1553: 0.56099999986..., or 1 of 1 at level 0.9: 0.04999999999999999) prints
# below it, or the interval printed would not hold the one the rules decided on.
_TOLERANCE = Decimal("1e-12")
_ONE = Decimal(1)
# The decimal context the rounding below works in. Python's own belongs to the process, and the
# user's code runs in this one: a system that set ``decimal.getcontext().prec = 2`` had the
# report print 69.0% for 9 of 13, and an interval narrower than the true one.
_CONTEXT = Context(
    prec=60,
    rounding=ROUND_HALF_EVEN,
    Emin=MIN_EMIN,
    Emax=MAX_EMAX,
    capitals=1,
    clamp=0,
    flags=[],
    traps=[InvalidOperation, DivisionByZero, Overflow],
)
P = ParamSpec("P")
R = TypeVar("R")


def _exact(f: Callable[P, R]) -> Callable[P, R]:
    """``f`` computed in ``_CONTEXT``, whatever context the thread has."""

    @functools.wraps(f)
    def in_context(*args: P.args, **kwargs: P.kwargs) -> R:
        with localcontext(_CONTEXT):
            return f(*args, **kwargs)

    return in_context


def _steps(x: float, places: int = 3) -> Decimal:
    """``x`` in steps of 10**-places (0.001), exactly as its shortest decimal representation
    reads."""
    x = float(x)
    if not math.isfinite(x):
        raise ValueError(f"cannot display a non-finite value: {x!r}")
    return Decimal(repr(x)).scaleb(places)


def _tolerance(v: Decimal) -> Decimal:
    return _TOLERANCE * max(_ONE, abs(v))


@_exact
def _nearest(x: float, places: int = 3) -> int:
    """Round to the nearest step of 10**-places, halves away from zero (a near-half counts as
    a half)."""
    v = _steps(x, places)
    half = (v * 2).to_integral_value(ROUND_HALF_EVEN) / 2
    if abs(v - half) <= _tolerance(v):
        v = half
    return int(v.to_integral_value(ROUND_HALF_UP))


@_exact
def _down(x: float) -> int:
    """Round down to a step: a lower bound, never above the value computed."""
    return int(_steps(x).to_integral_value(ROUND_FLOOR))


@_exact
def _up(x: float) -> int:
    """Round up to a step: an upper bound, never below the value computed."""
    return int(_steps(x).to_integral_value(ROUND_CEILING))


@_exact
def _tenths(steps: int) -> str:
    return f"{Decimal(steps).scaleb(-1):.1f}"


@_exact
def _signed(steps: int, places: int) -> str:
    """``steps`` of 10**-places with its sign: ``_signed(-4996, 3)`` is ``"-4.996"``."""
    sign = "-" if steps < 0 else "+"
    return sign + f"{Decimal(abs(steps)).scaleb(-places):.{places}f}"


@_exact
def _thousandths(steps: int) -> str:
    return f"{Decimal(steps).scaleb(-3):.3f}"


def first_few(texts: Sequence[str], shown: int, write: Callable[[str], str] = str) -> str:
    """The first ``shown`` of ``texts``, each as ``write`` writes it, then how many more."""
    more = f" and {len(texts) - shown} more" if len(texts) > shown else ""
    return ", ".join(write(text) for text in texts[:shown]) + more


def an_event(kind: str) -> str:
    """``an oloproof.run event``: an event type with its article."""
    return f"{'an' if kind[:1].lower() in 'aeiou' else 'a'} {kind} event"


def plural(count: int, word: str) -> str:
    """``word`` as it reads after ``count``: ``1 case``, ``2 cases``."""
    return word if count == 1 else word + "s"


def fmt_percent(x: float) -> str:
    """A proportion as a percentage to 0.1: ``0.6923`` -> ``"69.2%"``; one neither 0 nor 1
    never reads as either (``0.9996`` -> ``"99.96%"``, see ``_estimate``)."""
    return f"{_estimate(x, 2)}%"


def fmt_share(part: int, whole: int) -> str:
    """``part`` of ``whole`` as a percentage: whole, halves up (1 of 15 -> ``"7%"``), with as
    many decimals more as keep a share that is neither none nor all from reading as either
    (1 of 251 -> ``"0.4%"``, 199 of 200 -> ``"99.5%"``, never ``0%`` or ``100%``). Exact
    integer arithmetic; ``whole`` must be positive and ``part`` within 0..``whole``."""
    places = 0
    while True:
        scale = 100 * 10**places
        shown = (2 * scale * part + whole) // (2 * whole)  # halves up
        if part in (0, whole) or 0 < shown < scale:
            if not places:
                return f"{shown}%"
            units, decimals = divmod(shown, 10**places)
            return f"{units}.{decimals:0{places}d}%"
        places += 1


def fmt_cost(x: float) -> str:
    """A judge's cost to six significant digits, as large or small as it is: ``0.00035955``,
    ``3.5955e-07`` (never ``0.0000``, a priced judge shown as free)."""
    return format(x, ".6g")


@_exact
def fmt_written(x: float, places: int, scale: int = 0) -> str:
    """A number from the policy (a rule's threshold or margin) times 10**``scale``, with
    ``places`` decimals or as many more as it was written with, never rounded: a bound printed
    beside it then sits on the side of it that the rules compared it on. ``fmt_written(0.3, 1,
    2)`` is ``"30.0"`` (a proportion's ``min: 0.3``, in percent), ``fmt_written(0.25, 1)``
    ``"0.25"``."""
    value = _steps(x, scale)
    shown = max(places, -int(value.normalize().as_tuple().exponent))
    return f"{value:.{shown}f}"


def fmt_percent_lower(x: float) -> str:
    """A lower bound alone as a percentage, rounded down to 0.1: ``0.63970`` -> ``"63.9%"``."""
    return f"{_tenths(_down(x))}%"


def fmt_percent_interval(iv: Interval) -> str:
    """A proportion's interval, rounded outward: ``"[38.5%, 91.0%]"``."""
    return f"[{_tenths(_down(iv.lower))}%, {_tenths(_up(iv.upper))}%]"


def fmt_mean(x: float) -> str:
    """A mean (or one case's value) of a [0, 1] metric to 0.001: ``0.8663`` -> ``"0.866"``;
    one neither 0 nor 1 never reads as either (``0.9996`` -> ``"0.9996"``, see ``_estimate``)."""
    return _estimate(x, 0)


@_exact
def _estimate(x: float, shift: int, places: int = 3) -> str:
    """``x`` times 10**shift to the nearest 0.001 of a fraction, with as many more decimals
    as keep a value that is neither 0 nor 1 from reading as either, as ``fmt_share`` does: a
    case at 0.9996 is not a full score, and 2,499 passes of 2,500 are not all of them.
    ``places``: the fewest decimals of the fraction to print."""
    shown, places = _off_the_ends(x, zero_is_an_end=True, places=places)
    decimals = places - shift
    return f"{Decimal(shown).scaleb(-decimals):.{decimals}f}"


def _off_the_ends(x: float, zero_is_an_end: bool, places: int = 3) -> tuple[int, int]:
    """``x`` to the nearest step of 10**-places and those places: ``places``, or as many more
    as keep a value that is not 1 or -1 (nor 0, when ``zero_is_an_end``) from rounding onto
    one."""
    while True:
        shown, whole = _nearest(x, places), 10**places
        on_zero = (shown == 0) == (x == 0) or not zero_is_an_end
        if on_zero and (abs(shown) == whole) == (abs(x) == 1):
            return shown, places
        places += 1


@_exact
def fmt_means_apart(a: float, b: float) -> tuple[str, str]:
    """Two values of one case (a metric's, in two runs) as ``fmt_mean`` prints each, with as
    many more decimals as keep two that differ from printing alike: 0.69331 and 0.69339 print
    ``0.6933`` and ``0.6934``, never ``0.693 → 0.693`` beside ``improved``."""
    places = 3
    while True:
        shown = _estimate(a, 0, places), _estimate(b, 0, places)
        if a == b or shown[0] != shown[1]:
            return shown
        places += 1


def fmt_mean_interval(iv: Interval) -> str:
    """A mean's interval, rounded outward: ``"[0.506, 0.990]"``."""
    return f"[{_thousandths(_down(iv.lower))}, {_thousandths(_up(iv.upper))}]"


def fmt_points(d: float) -> str:
    """A difference of fractions in signed points (x100) to 0.1: ``0.0667`` -> ``"+6.7 points"``.

    Zero, including a negative difference that rounds to zero, prints ``"+0.0 points"``. One
    that is neither -1 nor 1 gets as many more decimals as keep it from reading as either
    (``-0.99996`` -> ``"-99.996 points"``): all of the cases did not go from pass to fail.
    """
    shown, places = _off_the_ends(d, zero_is_an_end=False)
    return f"{_signed(shown, places - 2)} points"


def fmt_points_interval(iv: Interval, margins: Sequence[float] = ()) -> str:
    """A difference's interval in signed points, rounded outward: ``"[-26.5, +40.8]"``.

    ``margins`` are the values (fractions: -0.05 for a 5-point non-inferiority margin) that
    the comparison rules on the metric compare its bounds with, strictly: a bound exactly on
    one decides nothing. A bound that rounding to 0.1 would put on or past one it is not on or
    past gets more decimals, still rounded outward, until it stands on its own side: -0.049959
    beside -0.05 prints ``-4.996``, not ``-5.0`` beside a PASS.
    """
    lower = _beside(iv.lower, ROUND_FLOOR, margins)
    upper = _beside(iv.upper, ROUND_CEILING, margins)
    return f"[{lower}, {upper}]"


@_exact
def _beside(x: float, rounding: str, margins: Sequence[float]) -> str:
    """``x`` in signed points rounded by ``rounding`` to 0.1, or to as many more decimals as
    put it on the side of each of ``margins`` that ``x`` is on (or on one, as ``x`` is). The
    shortest ``repr`` orders floats as they compare, so the sides are those the rules see."""
    value = _steps(x)  # tenths of a point
    lines = [_steps(m) for m in margins]
    places = 1
    while True:
        shown = value.to_integral_value(rounding)
        if all((shown > m) == (value > m) and (shown < m) == (value < m) for m in lines):
            return _signed(int(shown), places)
        value, lines, places = value.scaleb(1), [m.scaleb(1) for m in lines], places + 1


# The marks that reorder text as it is shown: embeddings and overrides, isolates, and the
# left-to-right, right-to-left and Arabic letter marks.
_REORDERING = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
# Characters a terminal acts on instead of showing: controls (a carriage return rewrites the
# line, an escape sequence moves the cursor or retitles the window) and those marks. Text from a
# case or a system never gets to do either.
_UNPRINTABLE = re.compile(f"[\x00-\x1f\x7f-\x9f\u2028\u2029{_REORDERING}]")
_REORDERS = re.compile(f"[{_REORDERING}]")


def _escape(found: re.Match[str]) -> str:
    return found[0].encode("unicode_escape").decode("ascii")


def printable(text: str) -> str:
    """``text`` (a case id, an error message) with each such character written as its escape
    (``\\r``, ``\\x1b``), so it prints on one line as it is."""
    return _UNPRINTABLE.sub(_escape, text)


def unreordered(text: str) -> str:
    """``text`` with each mark that reorders text written as its escape (``\\u202e``), for a
    renderer that has its own rule for controls (Markdown)."""
    return _REORDERS.sub(_escape, text)
