"""Compare two runs case by case and record the comparison as an event.

Requirements (``docs/comparing-runs.md``, ``docs/comparison-rules.md``):

1. Cases are paired by case id. A case is *paired* when both runs hold it, neither errored, and
   its input and its expected values are the same in both (``oloproof.pairing``). Every other
   case is reported as not paired, with its reason, and counts as missing for every compared
   metric. (A comparison recorded at schema 2 did not require the expected values to match,
   and is re-derived as it was made.)
1a. A case a run planned but neither run holds a result for (an interrupted run, or one still
   running) is missing too, for every compared metric, with neither side known (``not_run``):
   a comparison never pairs the halves two runs happened to reach and calls them the whole.
   Its id is not in the ledger, so it is counted (``not_run``) and listed by that number
   beside the unpaired cases, not named. Two runs of the same file one of whose plans holds
   the other's (the same selection, the whole file, or two ``--limit`` of the same filters:
   ``Selection.nested_with``) miss exactly the cases of the larger plan that neither holds,
   so a case one run holds is never counted again as not run; runs that planned cases
   neither plan is known to hold may not share any, so each run's own unfinished cases
   count. (A comparison recorded at schema 5 counted each run's whenever the two plans
   differed, and is re-derived so: ``counts_unrun_once``.)
2. Within the paired cases, a metric's verdict pair is *missing* when either verdict is absent
   or missing, *excluded* when either is excluded (missing wins over excluded), and otherwise
   observed: d = candidate - baseline with pass = 1, fail = 0 and a value as itself.
2a. An exclusion one run's output decided (``repeats.CASE_EXCLUSIONS`` lists those the case
   decides) while the other run observed the metric is *missing*, not excluded: a candidate
   that stops recording what a metric reads (no retrieval, no citations) must not drop the
   cases it would fail from the comparison. (A comparison recorded at schema 7 excluded such a
   pair, and is re-derived so: ``output_exclusions_missing``.)
2b. A case not paired because it errored (in one run or both) is excluded, not missing, for a
   metric that excludes it by its labels or expected values alone (its verdict in either run
   is one of ``repeats.CASE_EXCLUSIONS``; the two runs hold the same expected values, or the
   case is not paired for that instead): no answer could have made it count. (A comparison
   recorded at schema 7 counted it missing: ``errored_case_exclusions``.)
3. Each metric both runs have gets the paired betting interval of statistics.md C; a metric
   only one run has is listed as not compared. Nothing is ever compared silently.
3a. Missing counts against the candidate: the interval the row shows and the rules decide on
   has, for its lower bound, every missing pair at its worst for the candidate (an unknown
   candidate value 0, an unknown baseline value 1) and, for its upper bound, at its best
   (candidate 1, baseline 0); a value one run did observe is kept (except for a changed input
   or changed expected values, where neither side's verdict answers the other's question).
   The paired-only interval is kept beside it. A rule whose outcome the missing pairs changed
   says ``missing_cases_decide``.
3b. A paired case of a repeated run some of whose repeats have no verdict is never compared on
   its judged repeats alone: the bounded interval takes its value with those repeats failing
   (candidate) or passing (baseline) for the lower bound, and the other way round for the upper
   (``oloproof.repeats.bounds``, as the run's own gate counts them); it stays paired, and the
   estimate and the paired-only interval read its judged repeats. Such a case is not 0/1 data:
   no ``b``, ``c`` or planning while one is paired. (A comparison recorded at schema 3 read it
   as its judged repeats' mean, and is re-derived so: ``counts_missing_repeats``.)
3c. A repeat that its output alone excluded (it recorded no citations, say:
   ``repeats.combine`` leaves it out of its case) counts as a repeat without a verdict, as 3b
   counts it, in a paired case both runs observed and in the side one run observed of a
   missing pair (``repeats.with_excluded_repeats``): a pair one run's output excluded is
   missing (2a), and a repeat must not drop what its case could not. (A comparison
   recorded at schema 8 left such repeats out, and is re-derived so:
   ``repeat_exclusions_missing``.)
3d. A paired case whose judgments in both runs are those of an earlier paired case (the same
   input and the expected values its evaluators read, so the same executions and verdicts) is
   counted (``repeated_pairs``, only when some are) and said under the comparison: every
   interval counts it as one more independent pair, though it holds nothing the first did not.
   It is said, not refused (a sample drawn with replacement holds such cases). (A comparison
   recorded at schema 9 did not count them, and is re-derived so: ``counts_repeated_pairs``.)
4. Slice differences are exploratory: computed for every slice of the candidate run, recorded,
   never gated.
5. Comparison rules (non-inferiority, superiority, equivalence by a margin in points) are decided
   on the unrounded interval; an undecided non-inferiority rule on a pass/fail metric carries the
   planning projection of statistics.md D when there are discordant pairs and no missing pair
   or repeat (more paired cases cannot answer the missing ones).
5a. A gate with nothing under it (no case paired, or a rule that read no pair:
   ``pairing.compared_on_nothing``) blocks whatever ``block_on`` says, as a release gate with
   nothing under it does: letting INSUFFICIENT_EVIDENCE through is a choice about thin
   evidence, not a way to pass a candidate that showed none. (A comparison recorded at schema
   4 let ``block_on`` pass it, and is re-derived so: ``no_evidence_blocks``.)
6. The comparison is one ``oloproof.comparison`` event whose body holds everything needed to
   print it again; this module builds and records it and returns plain data. It never prints.
"""

from __future__ import annotations

from array import array
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from ledger import Ledger
from oloproof import __version__
from oloproof import events as ev
from oloproof.bodies import not_run, planned_cases
from oloproof.calibration import judge_check, judge_identities, reply_models_in
from oloproof.callargs import path
from oloproof.config import ComparePolicy, CompareRule, Margin, load_compare_policy
from oloproof.errors import ConfigError
from oloproof.latest import index_disagreement
from oloproof.metrics import RecordedCases, pair_key, repeats_among, slice_value
from oloproof.pairing import (
    EVALUATOR_CHANGED,
    METRIC_NOT_COMPARED,
    NO_PAIRED_CASES,
    compared_on_nothing,
    expected_key,
    unpaired_reason,
)
from oloproof.policy import (
    JudgeStanding,
    RuleDecision,
    calibrations_relied_on,
    gate,
    refuse_rules_on_score_judges,
)
from oloproof.repeats import CASE_EXCLUSIONS, executions, with_excluded_repeats
from oloproof.repeats import bounds as repeat_bounds
from oloproof.results import Interval, with_observed_only
from oloproof.stats import (
    PLANNING_LIMIT,
    Outcome,
    decide_equivalence,
    decide_non_inferiority,
    decide_superiority,
    paired_binary_difference,
    paired_difference,
    planning_total,
)
from oloproof.store import load_event
from oloproof.stored_runs import StoredRun, check_run_indexes, load_run
from oloproof.subset import Selection
from oloproof.yamlfile import recorded_file

__all__ = [
    "DEFAULT_LEVEL",
    "UNPAIRED_REASONS",
    "Comparison",
    "build_comparison",
    "compare_runs",
    "load_comparison",
]

DEFAULT_LEVEL = 0.95
"""The confidence level of a comparison made without a policy."""

UNPAIRED_REASONS = (
    "input_differs",
    "expected_differs",
    "only_in_candidate",
    "only_in_baseline",
    "errored_in_candidate",
    "errored_in_baseline",
    "errored_in_both",
)
"""Why a case was not paired, in the order a comparison lists them."""

_DECIDERS: dict[str, Callable[[Interval, float], tuple[Outcome, str]]] = {
    "non_inferiority": decide_non_inferiority,
    "superiority": decide_superiority,
    "equivalence": decide_equivalence,
}


@dataclass(frozen=True)
class Comparison:
    """A recorded comparison: its event address and body (plain, CBOR- and JSON-able data)."""

    address: str
    body: Mapping[str, Any]

    @property
    def exit_code(self) -> int:
        """The gate's exit code (0 PASS, 1 a rule FAILed, 3 blocked), 0 without a policy."""
        gate_body = self.body.get("gate")
        return int(gate_body["exit_code"]) if gate_body else 0


# ------------------------------------------------------------------------------ entry points


def compare_runs(
    ledger: Ledger,
    candidate: str,
    baseline: str,
    *,
    policy_path: str | Path | None = None,
) -> Comparison:
    """Compare run ``candidate`` with run ``baseline`` (ids, refs or addresses) and record it.

    Raises ``UnknownIdError`` for a name that is not a run, ``ConfigError`` for a policy file
    that cannot be read or names a metric neither run has.
    """
    cand = load_run(ledger, candidate)
    base = load_run(ledger, baseline)
    for run in (cand, base):
        check_run_indexes(ledger, run)
    # Checked as a run's policy is: a loop of symbolic links raised RuntimeError here, and a
    # name the comparison cannot record stopped it on the codec's error naming no file.
    resolved = (
        None
        if policy_path is None
        else recorded_file(
            path(
                "policy_path",
                policy_path,
                "the path of a policy file",
                where="compare_runs()",
                optional=True,
            )
        )
    )
    policy = None if resolved is None else load_compare_policy(resolved)
    if policy is not None and resolved is not None:
        # Here, not where a comparison is derived: one recorded before this refusal is
        # re-derived (``verify``) by the rules it recorded.
        refuse_rules_on_score_judges(policy, _score_judges(cand, base), resolved)
    if cand.run_id == base.run_id:
        # Every pair would be equal and every rule read a difference of zero: its gate would
        # decide nothing about either run.
        raise ConfigError(
            f"{candidate!r} and {baseline!r} are the same run ({cand.run_id}); compare a "
            "candidate run with a different baseline run"
        )
    body = derive_comparison(ledger, cand, base, policy=policy, policy_path=resolved)
    refs = [cand.address, base.address, *calibrations_relied_on(body["decisions"])]
    address = ledger.put(ev.make(ev.COMPARISON, body, refs=refs))
    # Hand back the body as the ledger holds it, so what is printed now is what `inspect`
    # prints later.
    return Comparison(address, ledger.get(address).body)


def derive_comparison(
    ledger: Ledger,
    candidate: StoredRun,
    baseline: StoredRun,
    *,
    policy: ComparePolicy | None,
    policy_path: Path | None,
    results: tuple[int | None, int | None] = (None, None),
    like_for_like: bool = True,
    counts_missing_repeats: bool = True,
    counts_not_run: bool = True,
    counts_unrun_once: bool = True,
    no_evidence_blocks: bool = True,
    judge_beats_chance: bool = True,
    unobserved_before_judge: bool = True,
    output_exclusions_missing: bool = True,
    errored_case_exclusions: bool = True,
    repeat_exclusions_missing: bool = True,
    counts_repeated_pairs: bool = True,
) -> dict[str, Any]:
    """The comparison body of two stored runs, from their case results in the ledger: of each
    run, its first ``results`` case result entries (all it has, for ``None``), as a
    comparison that read that many is re-derived; ``like_for_like``,
    ``counts_missing_repeats``, ``counts_not_run``, ``counts_unrun_once``,
    ``no_evidence_blocks``, ``judge_beats_chance``, ``unobserved_before_judge``,
    ``output_exclusions_missing``, ``errored_case_exclusions`` and
    ``repeat_exclusions_missing`` and ``counts_repeated_pairs`` as a comparison recorded with
    them is re-derived (one recorded before planned cases that never ran were counted says
    none).

    Each candidate case finds its baseline case through the ``run_case`` index, and each
    baseline case is asked the same of the candidate: neither run is held in memory. A rule on
    a judge's metric relies on the judge's newest calibration in ``ledger``.
    """
    return _comparison(
        candidate,
        RecordedCases(ledger, candidate.run_id, results[0]),
        baseline,
        RecordedCases(ledger, baseline.run_id, results[1]),
        policy=policy,
        policy_path=policy_path,
        like_for_like=like_for_like,
        counts_missing_repeats=counts_missing_repeats,
        counts_not_run=counts_not_run,
        counts_unrun_once=counts_unrun_once,
        no_evidence_blocks=no_evidence_blocks,
        judge_beats_chance=judge_beats_chance,
        unobserved_before_judge=unobserved_before_judge,
        output_exclusions_missing=output_exclusions_missing,
        errored_case_exclusions=errored_case_exclusions,
        repeat_exclusions_missing=repeat_exclusions_missing,
        counts_repeated_pairs=counts_repeated_pairs,
        calibrations=ledger,
    )


def load_comparison(ledger: Ledger, text: str) -> Comparison:
    """The comparison recorded at an address, prefix or ref."""
    address, event = load_event(ledger, text, ev.COMPARISON, "a comparison")
    return Comparison(address, event.body)


def build_comparison(
    candidate: StoredRun,
    candidate_cases: Iterable[Mapping[str, Any]],
    baseline: StoredRun,
    baseline_cases: Iterable[Mapping[str, Any]],
    *,
    policy: ComparePolicy | None = None,
    policy_path: Path | None = None,
) -> dict[str, Any]:
    """The comparison body (pure): pairing, metric rows, slice rows, decisions and gate. With no
    ledger to find calibrations in, a rule on a judge's metric is MANUAL_REVIEW."""
    return _comparison(
        candidate,
        _HeldCases(candidate_cases),
        baseline,
        _HeldCases(baseline_cases),
        policy=policy,
        policy_path=policy_path,
        like_for_like=True,
        counts_missing_repeats=True,
        counts_not_run=True,
        counts_unrun_once=True,
        no_evidence_blocks=True,
        judge_beats_chance=True,
        unobserved_before_judge=True,
        output_exclusions_missing=True,
        errored_case_exclusions=True,
        repeat_exclusions_missing=True,
        counts_repeated_pairs=True,
        calibrations=None,
    )


def _comparison(
    candidate: StoredRun,
    candidate_cases: _Cases,
    baseline: StoredRun,
    baseline_cases: _Cases,
    *,
    policy: ComparePolicy | None,
    policy_path: Path | None,
    like_for_like: bool,
    counts_missing_repeats: bool,
    counts_not_run: bool,
    counts_unrun_once: bool,
    no_evidence_blocks: bool,
    judge_beats_chance: bool,
    unobserved_before_judge: bool,
    output_exclusions_missing: bool,
    errored_case_exclusions: bool,
    repeat_exclusions_missing: bool,
    counts_repeated_pairs: bool,
    calibrations: Ledger | None,
) -> dict[str, Any]:
    cand_metrics = [e["criterion"] for e in candidate.body["evaluators"]]
    base_metrics = [e["criterion"] for e in baseline.body["evaluators"]]
    compared = [m for m in cand_metrics if m in base_metrics]
    specs = _evaluator_specs(candidate.body), _evaluator_specs(baseline.body)
    _check_policy_metrics(policy, policy_path, specs)
    level = policy.confidence_level if policy is not None else DEFAULT_LEVEL
    slices = list(candidate.body.get("slices", []))
    pairing = _pair(
        candidate_cases,
        baseline_cases,
        compared,
        slices,
        like_for_like,
        counts_missing_repeats,
        (output_exclusions_missing, errored_case_exclusions, repeat_exclusions_missing),
    )
    _check_found_both_ways(candidate.run_id, baseline.run_id, pairing)
    unrun = _not_run(candidate.body, baseline.body, pairing, counts_unrun_once)
    unrun = unrun if counts_not_run else 0
    _add_not_run(pairing, unrun)
    repeated = repeats_among(pairing.judged) if counts_repeated_pairs else 0
    collected = pairing.metrics
    support = int(candidate.body.get("min_slice_support", 1))
    served: dict[str, set[str | None]] = {}
    if calibrations is not None and policy is not None:
        # The models the judges' replies named, in either run: a calibration made against
        # another does not count.
        judged = set(judge_identities(specs[0].values())) & {r.metric for r in policy.rules}
        for cases in (candidate_cases, baseline_cases):
            for criterion, models in reply_models_in(calibrations, cases, judged).items():
                served.setdefault(criterion, set()).update(models)
    judging = _Judging(
        specs, like_for_like, calibrations, judge_beats_chance, unobserved_before_judge, served
    )
    decisions = _decide(policy, collected, level, judging)
    return {
        "candidate": _run_ref(candidate, candidate_cases),
        "baseline": _run_ref(baseline, baseline_cases),
        "oloproof_version": __version__,
        "level": level,
        "policy": policy.model_dump(mode="json", exclude_none=True) if policy else None,
        "policy_path": str(policy_path) if policy_path is not None else None,
        "like_for_like": like_for_like,
        "counts_missing_repeats": counts_missing_repeats,
        "counts_unrun_once": counts_unrun_once,
        "no_evidence_blocks": no_evidence_blocks,
        "judge_beats_chance": judge_beats_chance,
        "unobserved_before_judge": unobserved_before_judge,
        "output_exclusions_missing": output_exclusions_missing,
        "errored_case_exclusions": errored_case_exclusions,
        "repeat_exclusions_missing": repeat_exclusions_missing,
        "counts_repeated_pairs": counts_repeated_pairs,
        "paired_cases": pairing.paired,
        # Only when some are, as not_run: most comparisons pair no case twice.
        **({"repeated_pairs": repeated} if repeated else {}),
        "unpaired": [
            {"reason": r, "count": len(ids), "case_ids": ids}
            for r, ids in pairing.unpaired.items()
            if ids
        ],
        # Only when some are: a comparison of finished runs keeps the shape it always had.
        **({"not_run": unrun} if unrun else {}),
        "metrics": [
            _metric_row(collected[m], level, specs[0].get(m) == specs[1].get(m)) for m in compared
        ],
        "not_compared": [
            *({"metric": m, "only_in": "candidate"} for m in cand_metrics if m not in compared),
            *({"metric": m, "only_in": "baseline"} for m in base_metrics if m not in compared),
        ],
        "min_slice_support": support,
        "slices": _slice_rows(slices, compared, pairing, level, support),
        "decisions": [_decision_body(d, r) for d, r in decisions],
        "gate": _gate_body(policy, [d for d, _ in decisions], pairing.paired, no_evidence_blocks),
    }


def _run_ref(run: StoredRun, cases: _Cases) -> dict[str, Any]:
    return {"run_id": run.run_id, "address": run.address, "results": cases.results}


def _check_policy_metrics(
    policy: ComparePolicy | None,
    policy_path: Path | None,
    specs: tuple[Mapping[str, Any], Mapping[str, Any]],
) -> None:
    """A rule on a metric neither run measures is a typo, and ``judge:`` minimums on a metric
    no judge gives can never be met: refuse both (exit 2)."""
    if policy is None:
        return
    known = set(specs[0]) | set(specs[1])
    judged = {*judge_identities(specs[0].values()), *judge_identities(specs[1].values())}

    def where(*keys: Any) -> str | None:
        # The file and the key's line, as the file's other errors say them; a policy given as
        # recorded (``verify``) knows no lines, and one given with no path no file.
        return policy.location(*keys, path=policy_path) if policy_path is not None else None

    for index, rule in enumerate(policy.rules):
        if rule.metric not in known:
            names = ", ".join(sorted(known)) or "none"
            raise ConfigError(
                f"rules.{index}.metric: rule {rule.id!r} reads metric {rule.metric!r}, which "
                f"neither run measures (metrics: {names})",
                where=where("rules", index, "metric"),
            )
        if rule.judge is not None and rule.metric not in judged:
            raise ConfigError(
                f"rules.{index}.judge: rule {rule.id!r} sets judge: minimums, but its metric "
                f"{rule.metric!r} is not an LLM judge's",
                where=where("rules", index, "judge"),
                hint="judge: belongs to rules on a groundedness, citation support, answer or "
                "rubric judge's metric",
            )


def _score_judges(*runs: StoredRun) -> set[str]:
    """The metrics a judge that gives scores (a graded judge's) measures in any of ``runs``."""
    found: set[str] = set()
    for run in runs:
        kinds = {e["criterion"]: e["kind"] for e in run.body["evaluators"]}
        judges = judge_identities(_evaluator_specs(run.body).values())
        found.update(c for c in judges if kinds.get(c) == "mean")
    return found


def _evaluator_specs(run_body: Mapping[str, Any]) -> dict[str, Any]:
    return {e["criterion"]: e.get("spec") for e in run_body["evaluators"]}


# ----------------------------------------------------------------------------------- pairing


_Body = Mapping[str, Any]


class _Cases(Protocol):
    """One run's case results: in its line order, and one by case id; ``results`` says how
    many case result entries they are read from."""

    results: int

    def __iter__(self) -> Iterator[_Body]: ...

    def get(self, case_id: str) -> _Body | None: ...

    def __contains__(self, case_id: str) -> bool: ...


class _HeldCases:
    """Case results given as an iterable (``build_comparison``), held by case id."""

    def __init__(self, bodies: Iterable[_Body]) -> None:
        self.results = 0
        self._bodies: dict[str, _Body] = {}
        for body in bodies:
            self.results += 1
            self._bodies[body["case_id"]] = _compared(body)

    def __iter__(self) -> Iterator[_Body]:
        return iter(self._bodies.values())

    def get(self, case_id: str) -> _Body | None:
        return self._bodies.get(case_id)

    def __contains__(self, case_id: str) -> bool:
        return case_id in self._bodies


class _Values:
    """Pairs of values (candidate, baseline) in two arrays of doubles, 16 bytes a pair: what a
    comparison keeps of a case, so that its memory stays small at a million cases."""

    __slots__ = ("base", "cand")

    def __init__(self, cand: Iterable[float] = (), base: Iterable[float] = ()) -> None:
        self.cand, self.base = array("d", cand), array("d", base)

    def add(self, cand: float, base: float) -> None:
        self.cand.append(cand)
        self.base.append(base)

    def extend(self, cand: float, base: float, times: int) -> None:
        """The pair (cand, base) ``times`` times over."""
        self.cand.extend(array("d", [cand]) * times)
        self.base.extend(array("d", [base]) * times)

    def __len__(self) -> int:
        return len(self.cand)

    def __add__(self, other: _Values) -> _Values:
        return _Values(self.cand + other.cand, self.base + other.base)


@dataclass
class _MetricPairs:
    """One metric's pairs and the rest.

    ``values`` are the pairs known whole. ``partial`` are the paired cases some of whose
    repeats have no verdict, at the mean of their judged repeats: what the estimate and the
    paired-only interval read, never the bounded one. ``worst`` and ``best`` hold every pair not
    known whole (each missing pair, then each partial one) at its worst and at its best for the
    candidate: what the bounded interval adds to ``values``. ``missing_repeats`` counts the
    repeats without a verdict of the partial pairs, by run.
    """

    metric: str
    values: _Values = field(default_factory=_Values)
    partial: _Values = field(default_factory=_Values)
    missing: Counter[str] = field(default_factory=Counter)
    excluded: Counter[str] = field(default_factory=Counter)
    missing_pairs: int = 0
    missing_repeats: Counter[str] = field(default_factory=Counter)
    # Unpaired cases, by reason, that this metric excludes rather than misses (2b).
    unpaired_excluded: Counter[str] = field(default_factory=Counter)
    worst: _Values = field(default_factory=_Values)
    best: _Values = field(default_factory=_Values)

    def add_bounded(
        self, cand: tuple[float, float], base: tuple[float, float], times: int = 1
    ) -> None:
        """A pair whose sides are known only within (lowest, highest), ``times`` times over."""
        self.worst.extend(cand[0], base[1], times)
        self.best.extend(cand[1], base[0], times)


@dataclass
class _Pairing:
    """What pairing two runs' cases keeps: the number paired, the ids of every unpaired case
    by reason, each compared metric's pairs, and the observed pairs of each candidate slice
    value and metric."""

    metrics: dict[str, _MetricPairs]
    paired: int = 0
    unpaired: dict[str, list[str]] = field(
        default_factory=lambda: {r: [] for r in UNPAIRED_REASONS}
    )
    slices: dict[str, dict[tuple[str, str], _Values]] = field(default_factory=dict)
    # How many candidate cases the baseline was found to hold, and baseline cases the
    # candidate: each asked of the other run by case id (``_check_found_both_ways``).
    in_baseline: int = 0
    in_candidate: int = 0
    # 64 bits of each paired case's judgment addresses in both runs (``metrics.pair_key``):
    # 8 bytes a pair, to count the pairs that repeat an earlier one (3d).
    judged: array[int] = field(default_factory=lambda: array("Q"))


def _pair(
    candidate: _Cases,
    baseline: _Cases,
    compared: Sequence[str],
    slices: Sequence[str],
    like_for_like: bool,
    repeats: bool,
    exclusions: tuple[bool, bool, bool],
) -> _Pairing:
    """Pair by case id (candidate order, then the baseline's own cases), one case at a time;
    ``exclusions``: whether a pair one run's output alone excluded is missing (2a), whether
    an errored case its labels exclude is excluded (2b), and whether a repeat its output alone
    excluded counts as one without a verdict (3c)."""
    output_exclusions, errored_exclusions, repeat_exclusions = exclusions
    widen = repeats and repeat_exclusions
    pairing = _Pairing({m: _MetricPairs(m) for m in compared})
    pairing.slices = {name: {} for name in slices}
    for held in candidate:
        case_id = held["case_id"]
        cand, found = _as_counted(held, widen), baseline.get(case_id)
        base = None if found is None else _as_counted(found, widen)
        pairing.in_baseline += base is not None
        reason = (
            "only_in_candidate"
            if base is None
            else unpaired_reason(cand, base, expected=like_for_like)
        )
        if reason is None:
            assert base is not None
            pairing.paired += 1
            # Bodies built by hand for ``build_comparison`` may hold no judgments: no key.
            judged = cand.get("judgments"), base.get("judgments")
            if judged[0] and judged[1]:
                pairing.judged.append(pair_key(judged[0].values(), judged[1].values()))
            _add_paired(pairing, cand, base, repeats, output_exclusions)
        else:
            pairing.unpaired[reason].append(case_id)
            _add_unpaired(pairing, reason, cand, base, repeats, errored_exclusions)
    for base in baseline:
        if base["case_id"] in candidate:
            pairing.in_candidate += 1
        else:
            pairing.unpaired["only_in_baseline"].append(base["case_id"])
            counted = _as_counted(base, widen)
            _add_unpaired(pairing, "only_in_baseline", None, counted, repeats, errored_exclusions)
    for pairs in pairing.metrics.values():
        unpaired = {r: len(ids) - pairs.unpaired_excluded[r] for r, ids in pairing.unpaired.items()}
        pairs.missing.update({r: n for r, n in unpaired.items() if n})
    return pairing


def _check_found_both_ways(cand_id: str, base_id: str, pairing: _Pairing) -> None:
    """Refuse a pairing whose two sides disagree on the cases both runs hold.

    A case is found in the other run through that run's ``run_case`` index, while each run's
    own cases are read through its ``run_cases`` index. A damaged page of the first hides a
    case the run holds, which would then read as held by one run only (paired cases and
    unpaired ones adding up to more than either run holds): so the count found each way
    must agree. ``check_run_indexes`` has checked the ``run_cases`` side already.
    """
    if pairing.in_baseline == pairing.in_candidate:
        return
    short, other = (
        (base_id, cand_id) if pairing.in_baseline < pairing.in_candidate else (cand_id, base_id)
    )
    missed = abs(pairing.in_baseline - pairing.in_candidate)
    raise index_disagreement(
        short, f"its index by case id misses {missed} of the cases run {other} holds too"
    )


def _not_run(cand_run: _Body, base_run: _Body, pairing: _Pairing, once: bool) -> int:
    """How many planned cases neither run holds a result for (1a): exactly those of the larger
    plan, when one run's plan holds the other's; else each run's unfinished cases, since the
    ones a run did not reach may be ones the other never planned. ``once`` false: the plans
    held each other only when they were the same (schema 5)."""
    if "dataset" not in cand_run or "dataset" not in base_run:
        return 0  # a run body made by hand (``build_comparison``'s callers) planned nothing
    unpaired = {r: len(ids) for r, ids in pairing.unpaired.items()}
    held = pairing.paired + sum(unpaired.values())
    nested = _nested(cand_run, base_run) if once else _plan(cand_run) == _plan(base_run)
    if nested:
        # Every case held by either run is one of the larger plan's, counted once already.
        return max(planned_cases(cand_run), planned_cases(base_run), held) - held
    cand_held = held - unpaired["only_in_baseline"]
    base_held = held - unpaired["only_in_candidate"]
    return not_run(cand_run, cand_held) + not_run(base_run, base_held)


def _plan(run_body: _Body) -> tuple[Any, ...]:
    """What chose a run's cases: its cases file's digest, its selection and how many."""
    return run_body["dataset"]["sha256"], run_body.get("subset"), planned_cases(run_body)


def _nested(cand_run: _Body, base_run: _Body) -> bool:
    """Whether one run planned only cases the other planned too: the same cases file, and
    selections one of which holds the other's (``Selection.nested_with``)."""
    if cand_run["dataset"]["sha256"] != base_run["dataset"]["sha256"]:
        return False
    chosen = Selection.from_body(cand_run.get("subset"))
    return chosen.nested_with(Selection.from_body(base_run.get("subset")))


def _add_not_run(pairing: _Pairing, count: int) -> None:
    """Cases neither run executed: missing pairs with neither side known."""
    if not count:
        return
    for out in pairing.metrics.values():
        out.missing_pairs += count
        out.add_bounded(_UNKNOWN, _UNKNOWN, count)
        out.missing["not_run"] += count


def _as_counted(body: _Body, widen: bool) -> _Body:
    """A case result with, when ``widen``, every repeat its output alone excluded counted as a
    repeat without a verdict (3c): what pairing reads of a repeated case, whether the pair is
    observed or missing (a side one run observed keeps only what its repeats show)."""
    executed = _executed(body)
    if not widen or executed == 1:
        return body
    verdicts = {m: with_excluded_repeats(v, executed) for m, v in body["verdicts"].items()}
    return {**body, "verdicts": verdicts}


def _add_paired(
    pairing: _Pairing, cand: _Body, base: _Body, repeats: bool, output_exclusions: bool
) -> None:
    for metric, out in pairing.metrics.items():
        cv, bv = cand["verdicts"].get(metric), base["verdicts"].get(metric)
        if cv is None or bv is None:
            out.missing["no_verdict"] += 1
            _add_missing(out, cand, base, metric, repeats)
        elif cv["s"] == "missing" or bv["s"] == "missing":
            source = cv if cv["s"] == "missing" else bv
            out.missing[source.get("r", "missing")] += 1
            _add_missing(out, cand, base, metric, repeats)
        elif output_exclusions and (one_side := _excluded_by_one_output(cv, bv)):
            out.missing[one_side] += 1
            _add_missing(out, cand, base, metric, repeats)
        elif cv["s"] == "excluded" or bv["s"] == "excluded":
            source = cv if cv["s"] == "excluded" else bv
            out.excluded[source.get("r", "excluded")] += 1
        else:
            x, y = _number(cv), _number(bv)
            unjudged = (_unjudged(cv), _unjudged(bv)) if repeats else (0, 0)
            if any(unjudged):
                # Its judged repeats alone would compare it on what happened to be judged.
                out.partial.add(x, y)
                out.add_bounded(_span(cv, repeats), _span(bv, repeats))
                out.missing_repeats.update(candidate=unjudged[0], baseline=unjudged[1])
            else:
                out.values.add(x, y)
            for name, groups in pairing.slices.items():
                key = (slice_value(name, cand), metric)
                groups.setdefault(key, _Values()).add(x, y)


def _excluded_by_one_output(cv: Mapping[str, Any], bv: Mapping[str, Any]) -> str | None:
    """The missing reason of a pair that one run's output alone excluded while the other run
    observed it (2a): the exclusion's reason and the run it is in (``no_citations_recorded in
    the candidate``); None for any other pair."""
    if (cv["s"] == "excluded") == (bv["s"] == "excluded"):
        return None
    side, summary = ("candidate", cv) if cv["s"] == "excluded" else ("baseline", bv)
    reason = summary.get("r", "excluded")
    return None if reason in CASE_EXCLUSIONS else f"{reason} in the {side}"


_NEITHER_SIDE = frozenset({"input_differs", "expected_differs"})
_UNKNOWN = (0.0, 1.0)


def _add_unpaired(
    pairing: _Pairing,
    reason: str,
    cand: _Body | None,
    base: _Body | None,
    repeats: bool,
    errored_exclusions: bool,
) -> None:
    for metric, out in pairing.metrics.items():
        if reason in _NEITHER_SIDE:  # neither verdict answers the other run's question
            out.missing_pairs += 1
            out.add_bounded(_UNKNOWN, _UNKNOWN)
        elif (
            errored_exclusions
            and reason in _ERRORED
            and (by_case := _case_exclusion(cand, base, metric))
        ):
            out.excluded[by_case] += 1
            out.unpaired_excluded[reason] += 1
        else:
            _add_missing(out, cand, base, metric, repeats)


_ERRORED = frozenset({"errored_in_candidate", "errored_in_baseline", "errored_in_both"})


def _case_exclusion(cand: _Body | None, base: _Body | None, metric: str) -> str | None:
    """The exclusion the case's labels or expected values decide for ``metric``, as either
    run's verdict gives it (2b); both runs hold the same expected values, so it is both's."""
    for body in (cand, base):
        summary = body["verdicts"].get(metric) if body is not None else None
        if summary is not None and summary["s"] == "excluded":
            reason = summary.get("r")
            if reason in CASE_EXCLUSIONS:
                return str(reason)
    return None


def _add_missing(
    out: _MetricPairs, cand: _Body | None, base: _Body | None, metric: str, repeats: bool
) -> None:
    """A missing pair: a side one run did observe keeps what it observed, the other may be
    anything."""
    out.missing_pairs += 1
    out.add_bounded(_side(cand, metric, repeats), _side(base, metric, repeats))


# What a comparison given case results as an iterable holds of each: not their expected values
# (gold passages among them; a key of them instead), addresses, cache notes and repeats (how
# many instead).
_COMPARED = ("case_id", "input_key", "status", "verdicts", "metadata", "labels")


def _compared(body: _Body) -> _Body:
    return {
        **{key: body[key] for key in _COMPARED if key in body},
        "expected_key": expected_key(body),
        "executed": _executed(body),
    }


def _executed(body: _Body) -> int:
    """How many times a case result's case was executed: its repeats (1 without)."""
    if "executed" in body:  # held by ``_compared``
        return int(body["executed"])
    return executions(body)


def _side(body: _Body | None, metric: str, repeats: bool) -> tuple[float, float]:
    """What one run's case result allows ``metric`` to be: (lowest, highest)."""
    summary = body["verdicts"].get(metric) if body is not None else None
    if summary is None or summary["s"] not in ("pass", "fail", "value"):
        return _UNKNOWN
    return _span(summary, repeats)


def _span(summary: Mapping[str, Any], repeats: bool) -> tuple[float, float]:
    """An observed verdict's value, or, for a case some of whose repeats have no verdict
    (when ``repeats`` says to count them), the value with those failing and with them passing
    (``oloproof.repeats.bounds``)."""
    if repeats and _unjudged(summary):
        return repeat_bounds(summary)
    value = _number(summary)
    return value, value


def _unjudged(summary: Mapping[str, Any]) -> int:
    """How many of a combined verdict's repeats have none (0 for a case executed once)."""
    return int(summary.get("m", 0))


def _number(summary: Mapping[str, Any]) -> float:
    status = summary["s"]
    if status == "pass":
        return 1.0
    if status == "fail":
        return 0.0
    return float(summary["v"])


# -------------------------------------------------------------------------------- differences


def _difference(pairs: _Values, level: float, *, whole: bool = True) -> dict[str, Any]:
    """Estimate, interval and (for 0/1 data) the discordant counts b and c of paired values.
    Values not ``whole`` (some stand for cases with repeats not judged) have no counts: a case
    whose value is not known is not known to be a discordant pair."""
    if whole and _binary(pairs.cand) and _binary(pairs.base):
        b = sum(1 for x, y in zip(pairs.cand, pairs.base, strict=True) if x > y)
        c = sum(1 for x, y in zip(pairs.cand, pairs.base, strict=True) if x < y)
        estimate, interval = paired_binary_difference(len(pairs), b, c, level)
        return {
            "estimate": estimate,
            "lower": interval.lower,
            "upper": interval.upper,
            "method": interval.method,
            "binary": True,
            "b": b,
            "c": c,
        }
    estimate, interval = paired_difference(pairs.cand, pairs.base, level)
    return {
        "estimate": estimate,
        "lower": interval.lower,
        "upper": interval.upper,
        "method": interval.method,
        "binary": False,
        "b": None,
        "c": None,
    }


def _binary(values: Iterable[float]) -> bool:
    return all(v in (0.0, 1.0) for v in values)


def _bounded(pairs: _MetricPairs, level: float) -> dict[str, Any] | None:
    """The difference with what is not known counted against the candidate (3a), or None
    without a paired case. ``lower``/``upper`` are the bounded interval; with missing pairs or
    repeats, ``observed_lower``/``observed_upper`` are the paired-only one, on the judged
    repeats (without, the two are one and the row keeps the shape older comparisons have);
    the estimate is the paired cases', b and c those of paired cases known whole."""
    observed = pairs.values + pairs.partial
    if not observed:
        return None
    out = _difference(observed, level, whole=not pairs.partial)
    if pairs.worst:
        out["observed_lower"], out["observed_upper"] = out["lower"], out["upper"]
        out["lower"] = _difference(pairs.values + pairs.worst, level)["lower"]
        out["upper"] = _difference(pairs.values + pairs.best, level)["upper"]
    return out


def _metric_row(pairs: _MetricPairs, level: float, same_evaluator: bool) -> dict[str, Any]:
    row = {
        "metric": pairs.metric,
        "paired": len(pairs.values) + len(pairs.partial),
        "missing": sum(pairs.missing.values()),
        "excluded": sum(pairs.excluded.values()),
        "missing_reasons": dict(sorted(pairs.missing.items())),
        "excluded_reasons": dict(sorted(pairs.excluded.items())),
        "same_evaluator": same_evaluator,
        "difference": _bounded(pairs, level),
    }
    if pairs.partial:
        # Only then: a row of cases all judged keeps the shape it always had.
        row["partial"] = len(pairs.partial)
        row["missing_repeats"] = _by_run(pairs.missing_repeats)
    return row


def _by_run(counts: Counter[str]) -> dict[str, int]:
    return {"candidate": counts["candidate"], "baseline": counts["baseline"]}


def _slice_rows(
    slices: Sequence[str],
    compared: Sequence[str],
    pairing: _Pairing,
    level: float,
    support: int,
) -> list[dict[str, Any]]:
    """One row per candidate slice x value (the candidate's) x compared metric with a pair."""
    rows: list[dict[str, Any]] = []
    for name in slices:
        groups = pairing.slices[name]
        for value in sorted({value for value, _ in groups}):
            for metric in compared:
                pairs = groups.get((value, metric))
                if pairs:
                    rows.append(_slice_row(name, value, metric, pairs, level, support))
    return rows


def _slice_row(
    name: str,
    value: str,
    metric: str,
    pairs: _Values,
    level: float,
    support: int,
) -> dict[str, Any]:
    supported = len(pairs) >= support
    if supported:
        diff = _difference(pairs, level)
        estimate, lower, upper = diff["estimate"], diff["lower"], diff["upper"]
    else:
        estimate = sum(x - y for x, y in zip(pairs.cand, pairs.base, strict=True)) / len(pairs)
        lower = upper = None
    return {
        "slice": name,
        "value": value,
        "metric": metric,
        "paired": len(pairs),
        "supported": supported,
        "estimate": estimate,
        "lower": lower,
        "upper": upper,
    }


# --------------------------------------------------------------------------------- decisions


@dataclass(frozen=True)
class _Judging:
    """What a rule must know of the metric's evaluators before it reads the metric: each run's
    evaluator specs by criterion, whether like must be compared with like (a comparison of
    schema 3), where the judges' calibrations are (None: nowhere), whether a judge must be
    shown better than chance (not before comparison schema 7), and whether a metric that read
    no pair is decided so before its judge is asked (not before schema 8)."""

    specs: tuple[Mapping[str, Any], Mapping[str, Any]]
    like_for_like: bool
    calibrations: Ledger | None
    beats_chance: bool
    unobserved_first: bool
    served: Mapping[str, set[str | None]]


def _decide(
    policy: ComparePolicy | None,
    collected: Mapping[str, _MetricPairs],
    level: float,
    judging: _Judging,
) -> list[tuple[RuleDecision, CompareRule]]:
    if policy is None:
        return []
    check = judge_check(
        judging.calibrations,
        judging.specs[0].values(),
        level,
        beats_chance=judging.beats_chance,
        served=judging.served,
    )
    decided: list[tuple[RuleDecision, CompareRule]] = []
    for rule in policy.rules:
        pairs = collected.get(rule.metric)
        if not judging.like_for_like or pairs is None:
            decided.append((_decide_rule(rule, pairs, level), rule))
        elif judging.specs[0].get(rule.metric) != judging.specs[1].get(rule.metric):
            # The difference would mix the change to the system with the change to the
            # measurement: no margin can be read from it.
            decision = RuleDecision(
                rule.id, rule.metric, "INSUFFICIENT_EVIDENCE", EVALUATOR_CHANGED
            )
            decided.append((decision, rule))
        else:
            decision = _decide_rule(rule, pairs, level, check(rule), judging.unobserved_first)
            decided.append((decision, rule))
    return decided


def _decide_rule(
    rule: CompareRule,
    pairs: _MetricPairs | None,
    level: float,
    standing: JudgeStanding | None = None,
    unobserved_first: bool = True,
) -> RuleDecision:
    """One rule; a metric one run lacks, or with no paired case, is never a PASS; nor is a
    judge's metric before its judge's calibration clears the rule (``standing``). With
    ``unobserved_first``, a metric with no paired case is INSUFFICIENT_EVIDENCE
    (``no_paired_cases``, on which the gate blocks) whatever its judge's standing."""
    test, margin = rule.test
    if pairs is None:
        return RuleDecision(rule.id, rule.metric, "INSUFFICIENT_EVIDENCE", METRIC_NOT_COMPARED)
    judged: dict[str, Any] = {"judge": dict(standing.detail)} if standing is not None else {}
    diff = _bounded(pairs, level)
    judge_first = diff is not None or not unobserved_first
    if standing is not None and standing.outcome is not None and judge_first:
        reason = standing.reason or "judge_not_calibrated"
        return RuleDecision(rule.id, rule.metric, standing.outcome, reason, judged)
    if diff is None:
        return RuleDecision(rule.id, rule.metric, "INSUFFICIENT_EVIDENCE", NO_PAIRED_CASES, judged)
    interval = Interval(diff["lower"], diff["upper"], level, diff["method"])
    outcome, reason = _DECIDERS[test](interval, margin)
    paired = len(pairs.values) + len(pairs.partial)
    detail: dict[str, Any] = {
        "lower": diff["lower"],
        "upper": diff["upper"],
        "level": level,
        "method": diff["method"],
        "paired": paired,
        "b": diff["b"],
        "c": diff["c"],
        "planning": None,
        **judged,
    }
    if pairs.worst:
        if pairs.missing_pairs:
            detail["missing"] = pairs.missing_pairs
        if pairs.partial:
            detail["missing_repeats"] = sum(pairs.missing_repeats.values())
        observed = Interval(diff["observed_lower"], diff["observed_upper"], level, diff["method"])
        reason = with_observed_only(
            detail, observed, _DECIDERS[test](observed, margin), (outcome, reason)
        )
    elif test == "non_inferiority" and outcome == "INSUFFICIENT_EVIDENCE" and diff["binary"]:
        detail["planning"] = _planning(paired, diff["b"], diff["c"], margin, level)
    return RuleDecision(rule.id, rule.metric, outcome, reason, detail)


def _planning(n: int, b: int, c: int, margin: float, level: float) -> dict[str, Any] | None:
    """How many paired cases would decide the rule if the observed discordance held.

    None without discordant pairs (the data say nothing about discordance) or with a margin
    of 100 points or more (every interval already clears it).
    """
    if b + c == 0 or margin >= 1.0:
        return None
    total = planning_total(n, b, c, margin, level, PLANNING_LIMIT)
    assert total is not None  # b + c > 0
    beyond = total > PLANNING_LIMIT
    return {
        "total": None if beyond else total,
        "more": None if beyond else total - n,
        "beyond_limit": beyond,
        "limit": PLANNING_LIMIT,
        # (b + c) / n as a whole percent, halves rounded up, in exact integer arithmetic. Kept
        # as recorded (verify re-derives it); the line prints the share from b, c and n
        # (``report.planning_text``), since a whole percent reads 0% for 1 pair in 251.
        "discordance_percent": (200 * (b + c) + n) // (2 * n),
    }


def _decision_body(decision: RuleDecision, rule: CompareRule) -> dict[str, Any]:
    test, _ = rule.test
    margin: Margin = getattr(rule, test)
    return {**decision.to_body(), "test": test, "margin_points": margin.margin}


def _gate_body(
    policy: ComparePolicy | None,
    decisions: Sequence[RuleDecision],
    paired: int,
    no_evidence_blocks: bool,
) -> dict[str, Any] | None:
    """The gate (5a): ``no_evidence_blocks`` shuts one with nothing under it whatever
    ``block_on`` lists; a comparison recorded before (schema 4) is re-derived without it."""
    if policy is None:
        return None
    unevidenced = compared_on_nothing((d.reason for d in decisions), paired)
    outcome = gate(decisions, policy.block_on, unevidenced=no_evidence_blocks and unevidenced)
    return {"blocked": outcome.blocked, "exit_code": outcome.exit_code}
