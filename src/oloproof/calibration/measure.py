"""The pure measurement maths of a calibration: no ledger, no judge, no labels file.

``Rate`` is ``k`` of ``n`` with its Clopper-Pearson interval; ``Calibration`` holds a judge's
confusion counts against human labels (positive means *pass*) and derives its sensitivity,
specificity and agreement. ``requirement_check`` decides from those whether a judge may gate,
and ``corrected_rate`` corrects an observed pass rate for the measured errors (Rogan-Gladen),
with a Monte Carlo interval (numpy, loaded on the call).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from oloproof.results import Interval
from oloproof.stats import clopper_pearson

CORRECTED_METHOD = "rogan-gladen-clopper-pearson-mc"
"""``Interval.method`` of a corrected rate's interval."""

NOT_CALIBRATED = "judge_not_calibrated"
BELOW_REQUIREMENT = "judge_below_requirement"
NEAR_CHANCE = "judge_near_chance"


# --- the measurement ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Rate:
    """``k`` of ``n``, with its Clopper-Pearson interval (None when ``n`` is 0)."""

    k: int
    n: int
    interval: Interval | None

    @property
    def estimate(self) -> float | None:
        return self.k / self.n if self.n else None

    def lower_at(self, level: float, missing: int = 0) -> float:
        """The exact lower bound at ``level``; 0 when there is no observation.

        ``missing`` examples the judge gave no verdict on count as misses: the bound is that
        of k of n + missing (any of them could have been a disagreement).
        """
        return clopper_pearson(self.k, self.n + missing, level).lower if self.n else 0.0

    def to_body(self) -> dict[str, Any]:
        interval = self.interval
        return {
            "k": self.k,
            "n": self.n,
            "estimate": self.estimate,
            "lower": None if interval is None else interval.lower,
            "upper": None if interval is None else interval.upper,
            "method": None if interval is None else interval.method,
        }

    @staticmethod
    def of(k: int, n: int, level: float) -> Rate:
        return Rate(k, n, clopper_pearson(k, n, level) if n else None)


@dataclass(frozen=True)
class Calibration:
    """A judge measured against human labels, bound to the judge's exact identity."""

    identity: str
    judge: dict[str, Any]
    level: float
    true_pass: int
    false_fail: int
    false_pass: int
    true_fail: int
    missing: tuple[str, ...] = ()
    excluded: tuple[str, ...] = ()
    disagreements: tuple[str, ...] = ()
    labels: dict[str, Any] = field(default_factory=dict)
    missing_reasons: dict[str, int] = field(default_factory=dict)
    reply_models: tuple[str | None, ...] | None = None
    """The models the server said it ran (each reply's ``model``, None where a reply named
    none) in the replies counted, sorted; None in a calibration recorded before they were."""

    @property
    def sensitivity(self) -> Rate:
        """Of the examples people passed, the share the judge passed."""
        return Rate.of(self.true_pass, self.true_pass + self.false_fail, self.level)

    @property
    def specificity(self) -> Rate:
        """Of the examples people failed, the share the judge failed."""
        return Rate.of(self.true_fail, self.true_fail + self.false_pass, self.level)

    @property
    def agreement(self) -> Rate:
        """Of the examples the judge judged, the share where it agreed with people."""
        agreed = self.true_pass + self.true_fail
        return Rate.of(agreed, agreed + self.false_pass + self.false_fail, self.level)

    def to_body(self) -> dict[str, Any]:
        """Plain data for an ``oloproof.calibration`` event (indexed by ``identity``)."""
        return {
            "identity": self.identity,
            "judge": self.judge,
            "level": self.level,
            "labels": dict(self.labels),
            "counts": {
                "true_pass": self.true_pass,
                "false_fail": self.false_fail,
                "false_pass": self.false_pass,
                "true_fail": self.true_fail,
                "missing": len(self.missing),
                "excluded": len(self.excluded),
            },
            "agreement": self.agreement.to_body(),
            "sensitivity": self.sensitivity.to_body(),
            "specificity": self.specificity.to_body(),
            "disagreements": list(self.disagreements),
            "missing": list(self.missing),
            "missing_reasons": dict(self.missing_reasons),
            "excluded": list(self.excluded),
            **({} if self.reply_models is None else {"reply_models": list(self.reply_models)}),
        }

    @staticmethod
    def from_body(body: Mapping[str, Any]) -> Calibration:
        """The calibration an event body records (the inverse of ``to_body``)."""
        counts = body["counts"]
        models = body.get("reply_models")
        return Calibration(
            identity=body["identity"],
            judge=dict(body["judge"]),
            level=float(body["level"]),
            true_pass=int(counts["true_pass"]),
            false_fail=int(counts["false_fail"]),
            false_pass=int(counts["false_pass"]),
            true_fail=int(counts["true_fail"]),
            missing=tuple(body.get("missing", ())),
            excluded=tuple(body.get("excluded", ())),
            disagreements=tuple(body.get("disagreements", ())),
            labels=dict(body.get("labels", {})),
            missing_reasons=dict(body.get("missing_reasons", {})),
            reply_models=None if models is None else tuple(models),
        )


def sorted_models(models: Iterable[str | None]) -> tuple[str | None, ...]:
    """The distinct model names ``models`` holds, sorted, None (a reply that named none)
    first."""
    return tuple(sorted(set(models), key=lambda m: (m is not None, m or "")))


# --- may the judge gate? -----------------------------------------------------------------------

RequirementOutcome = tuple[Literal["MANUAL_REVIEW"], str] | tuple[None, None]


def requirement_check(
    calibration: Calibration | None,
    min_sensitivity: float | None,
    min_specificity: float | None,
    level: float = 0.95,
    *,
    identity: str | None = None,
    beats_chance: bool = True,
) -> RequirementOutcome:
    """Whether a judge metric may decide a rule.

    ``("MANUAL_REVIEW", "judge_not_calibrated")`` without a calibration, or when ``identity``
    is given and the calibration was made for another judge; ``("MANUAL_REVIEW",
    "judge_below_requirement")`` when the calibration judged no human pass or no human fail
    (a rate never measured clears nothing), or when the Clopper-Pearson lower bound (at
    ``level``) of sensitivity or specificity is below its minimum; ``(None, None)`` when it
    clears. A minimum of None is no requirement on that rate.

    Examples the judge gave no verdict on count against both rates (``Rate.lower_at`` with
    ``missing``): each could have been a human pass the judge failed or a human fail it
    passed, so a judge cannot clear a minimum by failing to answer the hard examples.

    With ``beats_chance``, whatever the minimums (none included), ``("MANUAL_REVIEW",
    "judge_near_chance")`` unless the two lower bounds add up to more than 1: only then do the
    labels show, at ``level``, that the judge's verdicts follow the truth at all (sensitivity +
    specificity > 1; a judge that passes everything has 1). Each bound fails with probability at
    most (1 - level) / 2, so both hold together at ``level`` at least. A decision recorded
    before the check (decision schema 5, comparison schema 6) is re-derived without it.
    """
    if calibration is None or (identity is not None and identity != calibration.identity):
        return "MANUAL_REVIEW", NOT_CALIBRATED
    if calibration.sensitivity.n == 0 or calibration.specificity.n == 0:
        return "MANUAL_REVIEW", BELOW_REQUIREMENT
    missing = len(calibration.missing)
    for minimum, rate in (
        (min_sensitivity, calibration.sensitivity),
        (min_specificity, calibration.specificity),
    ):
        if minimum is not None and rate.lower_at(level, missing) < minimum:
            return "MANUAL_REVIEW", BELOW_REQUIREMENT
    if beats_chance and not shown_above_chance(calibration, level):
        return "MANUAL_REVIEW", NEAR_CHANCE
    return None, None


def shown_above_chance(calibration: Calibration, level: float) -> bool:
    """Whether the lower bounds of sensitivity and specificity at ``level`` (unanswered examples
    counted against both) add up to more than 1."""
    missing = len(calibration.missing)
    total = calibration.sensitivity.lower_at(level, missing)
    return total + calibration.specificity.lower_at(level, missing) > 1.0


# --- the corrected metric ----------------------------------------------------------------------


def corrected_rate(
    observed_k: int,
    observed_n: int,
    calibration: Calibration,
    level: float = 0.95,
    *,
    missing: int = 0,
    draws: int = 10_000,
    seed: int = 0,
) -> tuple[float | None, Interval]:
    """The true pass rate, corrected for the judge's measured errors, with its interval.

    Point estimate (Rogan & Gladen 1978), with p the judge's observed pass rate k/n, Se and Sp
    the calibration's sensitivity and specificity::

        rate = (p + Sp - 1) / (Se + Sp - 1), clipped to [0, 1]

    None when it is undefined: no observation, a calibration without human passes or human
    fails, or Se + Sp <= 1 (a judge no better than chance). The interval is then [0, 1].

    Interval: Monte Carlo over the three proportions (independent: the suite and the two
    halves of the labels are disjoint samples). Each is drawn ``draws`` times from one of the
    two Beta distributions whose quantiles are its exact (Clopper-Pearson) bounds, for a
    agreeing of a + d: Beta(a, d + 1), whose alpha/2 quantile is the lower bound, and
    Beta(a + 1, d), whose 1 - alpha/2 quantile is the upper (0 and 1 when a or d is 0). Each
    draw gives a corrected rate, clipped to [0, 1]; a draw with Se + Sp <= 1 says nothing about
    the rate and counts as 0 for the lower quantile and 1 for the upper. The lower bound is the
    alpha/2 quantile with each proportion drawn from the side that lowers the rate: p and Sp
    from the lower, Se from the upper (the rate falls as Se rises) and, since a low Se can also
    make a draw unusable, from the lower too, whichever gives less; the upper bound mirrors it
    (p and Se from the sides that raise the rate, Sp from both). With a calibration without
    disagreement, each bound is then at least as far out as the Clopper-Pearson bound of p, so
    the correction never claims more than the metric's own interval: the Jeffreys posteriors
    (Beta(a + 1/2, d + 1/2)) used before gave narrower intervals than that, and a 95% interval
    covered as few as 87% of the true rates.
    Seeded (``numpy.random.default_rng(seed)``), so the same inputs give the same interval;
    ``method`` is ``rogan-gladen-clopper-pearson-mc``.

    ``missing`` cases of the run that the judge should have judged and did not count against
    the interval: the lower quantile is drawn with them as judged fails (p from k of n +
    missing), the upper with them as judged passes (k + missing of n + missing), each from the
    same seed. Every draw of the corrected rate rises with p, and the draws of p rise with k,
    so that is the widest the completions of the missing cases can make it. The point
    estimate stays the observed one.

    The calibration's unanswered examples (``calibration.missing``, u of them) count against it
    too, as the gate counts them: each could have been an agreement or a disagreement, in
    either rate. The lower bound draws Sp from its true fails of n + u, and Se from the upper
    side of its true passes + u of n + u or the lower side of its true passes of n + u; the
    upper bound draws Se from the lower side of its true passes of n + u, and Sp from the upper
    side of its true fails + u of n + u or the lower side of its true fails of n + u. Counting
    each unanswered example in both rates at once is beyond any completion of them, so a judge
    cannot narrow the interval by not answering.
    """
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must lie strictly between 0 and 1, got {level!r}")
    if not 0 <= observed_k <= observed_n:
        raise ValueError(f"need 0 <= k <= n, got k={observed_k}, n={observed_n}")
    if missing < 0:
        raise ValueError(f"missing must be >= 0, got {missing}")
    tp, fn = calibration.true_pass, calibration.false_fail
    tn, fp = calibration.true_fail, calibration.false_pass
    whole = Interval(0.0, 1.0, level, CORRECTED_METHOD)
    if observed_n == 0 or tp + fn == 0 or tn + fp == 0:
        return None, whole
    se_hat, sp_hat = tp / (tp + fn), tn / (tn + fp)
    youden = se_hat + sp_hat - 1.0
    if youden <= 0.0:
        return None, whole
    estimate = float(min(1.0, max(0.0, (observed_k / observed_n + sp_hat - 1.0) / youden)))

    u = len(calibration.missing)
    total, passes = observed_n + missing, observed_k + missing
    alpha = 1.0 - level
    mc = _MonteCarlo(draws, seed)
    p_low, p_high = _low(observed_k, total - observed_k), _high(passes, total - passes)
    lower = min(
        mc.quantile(p_low, se, _low(tn, fp + u), alpha / 2, unusable=0.0)
        for se in (_high(tp + u, fn), _low(tp, fn + u))
    )
    upper = max(
        mc.quantile(p_high, _low(tp, fn + u), sp, 1.0 - alpha / 2, unusable=1.0)
        for sp in (_high(tn + u, fp), _low(tn, fp + u))
    )
    return estimate, Interval(lower, upper, level, CORRECTED_METHOD)


def _low(agreed: int, disagreed: int) -> tuple[int, int]:
    """The Beta parameters whose alpha/2 quantile is the exact lower bound of a proportion."""
    return agreed, disagreed + 1


def _high(agreed: int, disagreed: int) -> tuple[int, int]:
    """The Beta parameters whose 1 - alpha/2 quantile is the exact upper bound of a
    proportion."""
    return agreed + 1, disagreed


@dataclass(frozen=True)
class _MonteCarlo:
    """Seeded draws of the corrected rate: every quantile starts from the same seed."""

    draws: int
    seed: int

    def quantile(
        self,
        p: tuple[int, int],
        se: tuple[int, int],
        sp: tuple[int, int],
        q: float,
        *,
        unusable: float,
    ) -> float:
        """The ``q`` quantile of the corrected rate with p, Se and Sp each drawn from Beta(a, b)
        for its ``(a, b)`` (all at 0 when a is 0, at 1 when b is 0), a draw with Se + Sp <= 1
        as ``unusable``."""
        import numpy as np

        rng = np.random.default_rng(self.seed)

        def beta(a: int, b: int) -> Any:
            # Drawn even when the bound itself is 0 or 1 (nothing to draw), so that every
            # quantile of one interval reads the same stream at the same place.
            drawn = rng.beta(max(a, 1), max(b, 1), self.draws)
            return drawn if a and b else np.full(self.draws, 0.0 if a == 0 else 1.0)

        p_draw, se_draw, sp_draw = beta(*p), beta(*se), beta(*sp)
        denominator = se_draw + sp_draw - 1.0
        usable = denominator > 0.0
        rate = np.clip((p_draw + sp_draw - 1.0) / np.where(usable, denominator, 1.0), 0.0, 1.0)
        return float(np.quantile(np.where(usable, rate, unusable), q))
