"""Release rules decided on a run's metrics, and the gate they add up to (statistics.md E).

Missing cases count against every rule (docs/gates.md, "Missing cases count against the
release"): a rule is decided as if each missing case had come out the way that makes the rule
hardest to pass, and a rule that the missing cases decided says so (``missing_cases_decide``).
In a repeated run, a repeat without a verdict counts against its case the same way, and a rule
such repeats decided says so too.

An ``observed_count`` rule says the suite never fails (or fails at most k times): on a run of
part of the suite that ``--sample`` or ``--limit`` chose, no count can show that, and the rule is
at best INSUFFICIENT_EVIDENCE (``subset_of_cases``); failures beyond its limit still FAIL.
Interval rules read the run's cases as the sample they are, and decide as on any run.

An ``observed_count`` rule counts failed cases, so it reads only a pass/fail metric: a graded
one (a value from 0 to 1 per case) has no failed case, and a policy that counts one is refused
before a run starts (``refuse_graded_counts``). So is a rule on a judge that gives scores, which
no calibration can let decide (``refuse_rules_on_score_judges``).

A gate with nothing under it (no case of the run answered, or a rule whose metric observed no
case: ``results.stands_on_nothing``) blocks whatever ``block_on`` says: a policy may choose to
let INSUFFICIENT_EVIDENCE through, but a run that showed nothing is not a release that was
checked (decision schema 4; ``runner.decide_run`` re-derives older decisions without it).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from oloproof.config import ComparePolicy, CompareRule, Policy, Rule
from oloproof.errors import ConfigError
from oloproof.metrics import MetricTally
from oloproof.results import (
    MISSING_DECIDES,
    NO_OBSERVED_CASES,
    SUBSET_OF_CASES,
    DecisionOutcome,
    Interval,
    MetricKind,
    with_observed_only,
)
from oloproof.stats import decide_max, decide_min

# Exit codes shared by every command that gates.
EXIT_PASS = 0
EXIT_FAIL = 1
EXIT_BLOCKED = 3


@dataclass(frozen=True)
class JudgeStanding:
    """Whether the judge behind a rule's metric may decide it, and the evidence for that.

    ``outcome`` None: the judge's calibration clears the rule's requirements, and the rule goes
    on to decide on the metric. Otherwise the rule is decided as ``outcome`` with ``reason``
    (``MANUAL_REVIEW``: ``judge_not_calibrated``, ``judge_below_requirement`` or
    ``judge_near_chance``). ``detail``
    (the judge's identity, the address of the calibration relied on, its lower bounds) is
    recorded with the rule's decision either way.
    """

    outcome: DecisionOutcome | None
    reason: str | None
    detail: dict[str, Any] = field(default_factory=dict)


JudgeCheck = Callable[[Rule | CompareRule], JudgeStanding | None]
"""For a rule on a judge's metric, the judge's standing; None for a rule on any other metric."""


@dataclass(frozen=True)
class Subset:
    """A run of part of the suite, its cases chosen by ``--sample`` or ``--limit``: ``planned``
    of the ``total`` cases of its file (``oloproof.subset.Selection.left_out``)."""

    planned: int
    total: int


@dataclass(frozen=True)
class RuleDecision:
    """One rule's outcome and the evidence it was decided on."""

    rule_id: str
    metric: str
    outcome: DecisionOutcome
    reason: str
    detail: dict[str, Any] = field(default_factory=dict)

    def to_body(self) -> dict[str, Any]:
        return {
            "id": self.rule_id,
            "metric": self.metric,
            "outcome": self.outcome,
            "reason": self.reason,
            "detail": self.detail,
        }


@dataclass(frozen=True)
class Gate:
    """PASS or BLOCK, with the exit code it implies."""

    blocked: bool
    exit_code: int

    @property
    def label(self) -> str:
        return "BLOCK" if self.blocked else "PASS"


def refuse_graded_counts(policy: Policy, kinds: Mapping[str, MetricKind], path: Path) -> None:
    """Refuse an ``observed_count`` rule on a graded metric (``kinds``: each metric's kind), as a
    ``ConfigError`` naming the rule's file and line.

    Why: a count needs each case to have passed or failed. A graded case at 0.5 did neither,
    and any line the count drew (below 1, at 0) would be one the user never wrote, and one the
    failures lists would have to draw the same way. A floor on the mean, or a count on a
    pass/fail metric, says what is meant.
    """
    for index, rule in enumerate(policy.rules):
        if rule.kind != "observed_count" or kinds.get(rule.metric) != "mean":
            continue
        where = policy.location("rules", index, "kind", path=path)
        raise ConfigError(
            f"{where}: rule {rule.id!r} counts failures of {rule.metric}, but {rule.metric} is "
            "graded (a value from 0 to 1 per case) and no case of it simply fails; give its "
            "mean a floor (min: 0.8 asks for at least 0.8), or count the failures of a "
            "pass/fail metric (hit_rate fails a case with no relevant passage in the top k; a "
            "rubric judge with scale: pass_fail fails a case it rejects)"
        )


def refuse_rules_on_score_judges(
    policy: Policy | ComparePolicy, score_judges: Iterable[str], path: Path
) -> None:
    """Refuse a rule (a release rule, or a comparison's) on the metric of a judge that gives
    scores (a rubric judge with ``scale: score``; ``score_judges``: their criteria), as a
    ``ConfigError`` naming the rule's file and line.

    Why: a rule on a judge's metric decides only once that exact judge is calibrated, and
    calibration measures pass/fail judges alone. Such a rule would be MANUAL_REVIEW
    (``judge_not_calibrated``) on every run whatever the answers: blocking each one, or, with
    a ``block_on`` without it, never checked. As ``min: 1``, a rule no run could pass.
    """
    scored = set(score_judges)
    decided = "comparison" if isinstance(policy, ComparePolicy) else "run"
    rules: Sequence[Rule | CompareRule] = policy.rules
    for index, rule in enumerate(rules):
        if rule.metric not in scored:
            continue
        where = policy.location("rules", index, "metric", path=path)
        raise ConfigError(
            f"{where}: rule {rule.id!r} reads {rule.metric}, a rubric judge's score (scale: "
            "score), and a rule on a judge's metric decides only once the judge is calibrated, "
            f"which only a pass/fail judge can be: it would be MANUAL_REVIEW on every {decided}; "
            "put the rule on a rubric judge with scale: pass_fail, calibrated with oloproof "
            "calibrate"
        )


def refuse_counts_that_cannot_fail(
    policy: Policy,
    cases: int,
    judged: Callable[[int], Mapping[str, int]],
    path: Path,
    chosen: str,
) -> None:
    """Refuse an ``observed_count`` rule that allows as many failures as the run has cases
    (``cases``; ``chosen``: which cases those are, as a sentence's end), or as its metric can
    judge of them (``judged(limit)``: per criterion, the cases its evaluator does not exclude by
    their own expected values, whatever the system answers, counted at least to ``limit + 1``;
    asked only of a policy with such a rule, as it reads the cases), as a ``ConfigError``
    naming the rule's file and line.

    Why: such a rule passes however many cases fail (and on a subset, where a count is
    INSUFFICIENT_EVIDENCE, a ``block_on`` without it lets it through): a check that cannot
    fail, as ``min: 0`` is, which the policy file refuses. A metric that can judge no case is
    left alone: its rule observes nothing, and the gate blocks on that.
    """
    counts = [
        (index, rule, rule.max_failures)
        for index, rule in enumerate(policy.rules)
        if rule.kind == "observed_count" and rule.max_failures is not None
    ]
    counted = judged(max(limit for _, _, limit in counts)) if counts else {}
    for index, rule, limit in counts:
        can_judge = counted.get(rule.metric, cases)
        if limit < cases and (limit < can_judge or can_judge == 0):
            continue
        where = policy.location("rules", index, "max_failures", path=path)
        if limit < cases:
            raise ConfigError(
                f"{where}: rule {rule.id!r} allows {limit} failures of {rule.metric} "
                f"(max_failures: {limit}), and only {can_judge} of the run's {cases} cases"
                f"{chosen} can be judged on {rule.metric} (the others' expected values exclude "
                "them from it): however many fail, the rule passes; give max_failures below "
                f"{can_judge} (max_failures: 0 allows none)"
            )
        raise ConfigError(
            f"{where}: rule {rule.id!r} allows {limit} failures of {rule.metric} (max_failures: "
            f"{limit}), and the run has {cases} {'case' if cases == 1 else 'cases'}{chosen}: "
            "however many fail, the rule passes; give max_failures below the number of cases "
            "(max_failures: 0 allows none)"
        )


def decide_rule(
    rule: Rule,
    tally: MetricTally | None,
    level: float,
    judge_check: JudgeCheck | None = None,
    *,
    not_run: int = 0,
    subset: Subset | None = None,
    counts_missing_repeats: bool = True,
    unobserved_before_judge: bool = True,
    observed_as_judged: bool = True,
) -> RuleDecision:
    """Decide one rule. A metric with no observed cases is never a PASS: it is
    INSUFFICIENT_EVIDENCE (``no_observed_cases``), on which the gate blocks whatever
    ``block_on`` says (``results.stands_on_nothing``).

    With ``judge_check``, a rule on a judge's metric then asks whether the judge may decide
    at all: before the rule looks at the metric, the judge needs a calibration that clears the
    rule's ``judge`` minimums (else the rule is ``MANUAL_REVIEW``). The judge's standing is
    kept in the decision's ``detail["judge"]``. ``unobserved_before_judge`` False decides as
    decisions of schema 6 and before did: the judge's standing first, so that a metric its
    judge never answered was MANUAL_REVIEW, which ``block_on`` could let through.

    Missing cases (the tally's, plus ``not_run`` cases of the run that never ran) count
    against the rule: it is decided on the interval that counts each as failing for its lower
    bound and as passing for its upper bound, or for ``observed_count`` on failures + missing.
    So do a repeated run's repeats without a verdict: the bounded interval counts them, and a
    count counts each case that passed its judged repeats but has such repeats as a possible
    failure. When the outcome differs from the one the observed cases alone (on their judged
    repeats) give, the reason is ``missing_cases_decide``, and ``detail["observed_only"]``
    records the observed-only outcome; ``detail`` says how many cases (``missing``) and repeats
    (``missing_repeats``) were counted so.

    ``counts_missing_repeats`` False decides as decisions of schema 2 and before did: the
    interval still counts the repeats without a verdict, but the reason and the detail leave
    them out, and a count reads a case on its judged repeats alone.

    ``observed_as_judged`` False reads the observed cases alone as decisions of schema 7 and
    before did: by the betting interval whenever a case had repeats without a verdict, though
    its judged repeats made every case 0 or 1 (a proportion, ``MetricTally.is_proportion``).

    With ``subset`` (the run may have left cases out), an ``observed_count`` rule its observed
    failures do not FAIL is INSUFFICIENT_EVIDENCE (``subset_of_cases``).
    """
    standing = judge_check(rule) if judge_check is not None else None
    judged: dict[str, Any] = {"judge": dict(standing.detail)} if standing is not None else {}
    by_judge: RuleDecision | None = None  # when the judge's standing decides the rule
    if standing is not None and standing.outcome is not None:
        reason = standing.reason or "judge_not_calibrated"
        by_judge = RuleDecision(rule.id, rule.metric, standing.outcome, reason, judged)
    if tally is None or tally.observed == 0:
        if by_judge is not None and not unobserved_before_judge:
            return by_judge  # as decisions of schema 6 and before: the judge asked first
        return RuleDecision(
            rule.id, rule.metric, "INSUFFICIENT_EVIDENCE", NO_OBSERVED_CASES, judged
        )
    if by_judge is not None:
        return by_judge
    missing = tally.n_missing + not_run
    if rule.kind == "observed_count":
        return _decide_count(rule, tally, missing, judged, subset, counts_missing_repeats)
    unjudged = tally.missing_repeats if counts_missing_repeats else 0
    observed_iv = tally.interval(
        level, proportion=None if observed_as_judged or not tally.partial else False
    )
    bounded_iv = tally.bounded_interval(level, not_run=not_run)
    assert observed_iv is not None and bounded_iv is not None  # observed > 0
    outcome, reason = _decide_interval(rule, bounded_iv)
    detail: dict[str, Any] = {
        "lower": bounded_iv.lower,
        "upper": bounded_iv.upper,
        "level": level,
        "method": bounded_iv.method,
        **judged,
    }
    if missing or unjudged:
        # Only then: a decision with nothing missing keeps the shape it always had, so the
        # decisions of older ledgers still re-derive equal under `verify`.
        if missing:
            detail["missing"] = missing
        if unjudged:
            detail["missing_repeats"] = unjudged
        seen = _decide_interval(rule, observed_iv)
        reason = with_observed_only(detail, observed_iv, seen, (outcome, reason))
    return RuleDecision(rule.id, rule.metric, outcome, reason, detail)  # type: ignore[arg-type]


def _decide_interval(rule: Rule, interval: Interval) -> tuple[str, str]:
    outcomes: list[tuple[str, str]] = []
    if rule.min is not None:
        outcomes.append(decide_min(interval, rule.min))
    if rule.max is not None:
        outcomes.append(decide_max(interval, rule.max))
    return _combine(outcomes)


def _decide_count(
    rule: Rule,
    tally: MetricTally,
    missing: int,
    judged: dict[str, Any],
    subset: Subset | None,
    counts_missing_repeats: bool,
) -> RuleDecision:
    """``max_failures: k``: FAIL when the observed failures alone exceed k; else, on a
    ``subset``, INSUFFICIENT_EVIDENCE (the cases left out may hide a failure); else PASS only
    when failures + missing + unconfirmed passes <= k (each missing case, and each case that
    passed its judged repeats but has repeats without a verdict, may hide a failure), else
    INSUFFICIENT_EVIDENCE."""
    limit = rule.max_failures if rule.max_failures is not None else 0
    failures = tally.failures
    unconfirmed = tally.passes_unconfirmed if counts_missing_repeats else 0
    detail: dict[str, Any] = {
        "failures": failures,
        "observed": tally.observed,
        "max_failures": limit,
        **judged,
    }
    if missing:
        detail["missing"] = missing
    if unconfirmed:
        detail["passes_unconfirmed"] = unconfirmed
        detail["missing_repeats"] = tally.unconfirmed_repeats
    if failures > limit:
        return RuleDecision(rule.id, rule.metric, "FAIL", "observed_failures_exceed_limit", detail)
    if subset is not None:
        detail["subset"] = {"planned": subset.planned, "total": subset.total}
        return RuleDecision(rule.id, rule.metric, "INSUFFICIENT_EVIDENCE", SUBSET_OF_CASES, detail)
    if failures + missing + unconfirmed <= limit:
        return RuleDecision(rule.id, rule.metric, "PASS", "observed_failures_within_limit", detail)
    detail["observed_only"] = {"outcome": "PASS", "reason": "observed_failures_within_limit"}
    return RuleDecision(rule.id, rule.metric, "INSUFFICIENT_EVIDENCE", MISSING_DECIDES, detail)


def _combine(outcomes: Sequence[tuple[str, str]]) -> tuple[str, str]:
    for wanted in ("FAIL", "INSUFFICIENT_EVIDENCE"):
        for outcome in outcomes:
            if outcome[0] == wanted:
                return outcome
    return outcomes[0]


def decide_policy(
    policy: Policy,
    metrics: Mapping[str, MetricTally],
    judge_check: JudgeCheck | None = None,
    *,
    not_run: int = 0,
    subset: Subset | None = None,
    counts_missing_repeats: bool = True,
    unobserved_before_judge: bool = True,
    observed_as_judged: bool = True,
) -> list[RuleDecision]:
    """Every rule of ``policy`` decided on ``metrics``, in the policy's order.

    ``not_run``: planned cases of the run that never ran; they count as missing for every rule.
    ``subset``: the run may have left cases out; ``counts_missing_repeats``: whether the
    repeats without a verdict count in the reason and in a count; ``unobserved_before_judge``:
    whether a metric that observed nothing is decided so before its judge;
    ``observed_as_judged``: how the observed cases alone are read (``decide_rule``).
    """
    return [
        decide_rule(
            rule,
            metrics.get(rule.metric),
            policy.confidence_level,
            judge_check,
            not_run=not_run,
            subset=subset,
            counts_missing_repeats=counts_missing_repeats,
            unobserved_before_judge=unobserved_before_judge,
            observed_as_judged=observed_as_judged,
        )
        for rule in policy.rules
    ]


def calibrations_relied_on(decisions: Iterable[Mapping[str, Any]]) -> list[str]:
    """The addresses of the calibrations the decided rules (their bodies) relied on, in order:
    what a decision or comparison links, so that ``verify`` re-derives it from them.

    A rule whose judge has only a calibration by an older version of the judges' code names
    it (``older_code``) without relying on it, and one whose calibration saw another model
    (``other_model``) names that one; each is linked too, as what re-derives that name.
    """
    found: list[str] = []
    for rule in decisions:
        judge = rule["detail"].get("judge", {})
        named = (judge.get(key) or {} for key in ("older_code", "other_model"))
        for address in (judge.get("calibration"), *(n.get("calibration") for n in named)):
            if isinstance(address, str) and address not in found:
                found.append(address)
    return found


def gate(
    decisions: Sequence[RuleDecision], block_on: Sequence[str], *, unevidenced: bool = False
) -> Gate:
    """BLOCK with exit 1 when a blocking rule FAILed, exit 3 when it blocks without a FAIL.

    ``unevidenced`` (``results.stands_on_nothing``): the gate blocks (exit 3, unless a blocking
    rule FAILed) whatever ``block_on`` lists; letting INSUFFICIENT_EVIDENCE through is a choice
    about thin evidence, not a way to pass a run that gave none.
    """
    blocking = [d for d in decisions if d.outcome in block_on]
    if any(d.outcome == "FAIL" for d in blocking):
        return Gate(True, EXIT_FAIL)
    if blocking or unevidenced:
        return Gate(True, EXIT_BLOCKED)
    return Gate(False, EXIT_PASS)
