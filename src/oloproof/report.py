"""Plain-data reports for the CLI, ``--json`` and the viewer: nothing here prints.

Run states, printed as ``[DECISION_STATE/EXECUTION_STATE]``:

    DECIDED      a policy was applied and the gate decided
    UNDECIDED    the run has a policy but no decision: it stopped on bad input, or ended
                 before a decision was written; no gate is shown
    NO_POLICY    the run has no policy: metrics only, exit 0
    COMPLETE     every case ran and none errored
    PARTIAL      every case ran, but some errored (their judgments are missing), or with
                 ``--repeats`` some repeats did
    INTERRUPTED  the run stopped before every case ran (Ctrl-C, a crash); `--resume` finishes it
    RUNNING      a live process is writing the run now (it has no end yet)
    STOPPED      a malformed artifact, an unrecordable output or a failed write stopped the run

Every interval in a report counts the metric's missing cases against it (``MetricRow``); the
interval on the observed cases alone is kept beside it, and ``errors`` says why cases errored
(``repeat_errors`` why repeats did). A slice row counts its own missing cases, and every planned
case that never ran too: such a case left no slice value, so any row may hold it.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from oloproof.bodies import Map, RunCache, RunEndBody, execution_body, not_run, planned_cases
from oloproof.call_totals import CallTotals
from oloproof.display import (
    first_few,
    fmt_mean_interval,
    fmt_percent_interval,
    fmt_points_interval,
    fmt_share,
    plural,
    printable,
)
from oloproof.idtext import id_problem
from oloproof.metrics import MetricTally, RunTally
from oloproof.pairing import EVALUATOR_CHANGED, NO_PAIR_REASONS, compared_on_nothing
from oloproof.redaction import redact_text
from oloproof.results import (
    MISSING_DECIDES,
    NO_OBSERVED_CASES,
    SUBSET_OF_CASES,
    Interval,
    stands_on_nothing,
)
from oloproof.stats import BETTING, CLOPPER_PEARSON

if TYPE_CHECKING:
    from ledger import Ledger
    from oloproof.calibration import Calibration
    from oloproof.repeats import RepeatCounts

DEFAULT_LEVEL = 0.95

EXIT_STOPPED = 2
"""What ``oloproof run`` exited with for a run that bad input stopped."""
EXIT_UNDECIDED = 3
"""A run with a policy and no decision blocks: nothing shows the release is safe."""

NOT_RUN = "not_run"
"""The missing reason of planned cases that never ran (an interrupted run)."""

_MESSAGE_LIMIT = 200  # characters of an error's first line that group errors together
ERROR_KINDS_SHOWN = 2
"""How many kinds of error the errored-cases line names before it says how many more."""
ERROR_MESSAGE = 60
"""Characters of an error message the errored-cases line shows."""


@dataclass(frozen=True)
class MetricRow:
    """One metric's estimate, interval and evidence counts.

    ``estimate`` is over the observed cases. ``lower``/``upper`` is the interval rules decide
    on: every missing case counted as failing for the lower bound and as passing for the upper,
    and for a graded metric at whichever value bounds it widest, the method included
    (``MetricTally.bounded_interval``; the plain interval when nothing is missing).
    ``observed_lower``/``observed_upper`` is the interval of the observed cases alone.
    ``missing`` includes planned cases that never ran (reason ``not_run``).
    """

    criterion: str
    proportion: bool
    estimate: float | None
    lower: float | None
    upper: float | None
    successes: int
    observed: int
    missing: int
    excluded: int
    excluded_reasons: dict[str, int] = field(default_factory=dict)
    missing_reasons: dict[str, int] = field(default_factory=dict)
    observed_lower: float | None = None
    observed_upper: float | None = None
    missing_repeats: int = 0
    """In a repeated run: repeats of observed cases without a verdict (counted against)."""
    method: str | None = None
    """How ``lower``/``upper`` were made (``stats``: ``clopper-pearson``, ``betting``, or
    both joined by ``+`` when each bound came from another), None without an interval. A
    graded metric shown as a proportion (its observed values all 0 or 1) may read ``betting``
    with missing cases: a value of theirs between 0 and 1 would be read by that method."""


@dataclass(frozen=True)
class ErrorGroup:
    """Cases that errored the same way: error type, first line of the message, how many, and
    the first of them in the dataset's order."""

    type: str
    message: str
    count: int
    first: str


@dataclass(frozen=True)
class SliceRow:
    slice: str
    value: str
    metric: MetricRow
    supported: bool


@dataclass(frozen=True)
class RuleRow:
    rule_id: str
    metric: str
    outcome: str
    reason: str
    detail: dict[str, Any]


@dataclass(frozen=True)
class CorrectedRow:
    """A pass/fail judge metric corrected for the judge's measured errors (Rogan-Gladen).

    ``estimate`` None: the correction is undefined (nothing observed, or a calibration without
    human passes or fails, or a judge no better than chance); the interval is then [0, 1].
    ``calibration`` is the address of the calibration used; ``sensitivity`` and
    ``specificity`` its ``[k, n]`` counts, ``unanswered`` its examples the judge gave no verdict
    on (each counts against the interval in both rates, as it does against the gate).
    """

    criterion: str
    estimate: float | None
    lower: float
    upper: float
    level: float
    method: str
    successes: int
    observed: int
    calibration: str
    sensitivity: list[int]
    specificity: list[int]
    missing: int = 0
    unanswered: int = 0


@dataclass(frozen=True)
class JudgeUsageRow:
    """One LLM judge's calls, tokens and cost in one run.

    ``calls``, the tokens and ``cost`` are this run's own calls (``cost`` None unless both
    prices per token are configured); ``failed`` counts judgments whose call failed;
    ``reused`` counts judgments taken from the judgment cache, whose tokens were spent (and
    reported) by the run that first made them. ``calls_without_usage`` counts replies that
    reported no token counts.
    """

    criterion: str
    provider: str
    model: str
    calls: int
    failed: int
    reused: int
    input_tokens: int
    output_tokens: int
    cost: float | None
    calls_without_usage: int


@dataclass(frozen=True)
class RunReport:
    """Everything ``oloproof run`` prints about a run."""

    run_id: str
    address: str
    system: dict[str, Any]
    decision_state: str
    execution_state: str
    gate_label: str | None
    exit_code: int
    rules: list[RuleRow]
    metrics: list[MetricRow]
    slices: list[SliceRow]
    min_slice_support: int
    cache: dict[str, list[int]]
    stages: dict[str, list[int]] | None
    cases: int
    planned_cases: int
    errored: int
    stop_reason: str | None
    level: float
    corrected: list[CorrectedRow] = field(default_factory=list)
    judges: list[JudgeUsageRow] = field(default_factory=list)
    errors: list[ErrorGroup] = field(default_factory=list)
    # Occurrences of configured secrets replaced in what the run stored; None for a run
    # recorded before redaction was counted.
    redacted: int | None = None
    subset: dict[str, Any] | None = None
    """What chose the run's cases when it ran a subset (``oloproof.subset``), else None."""
    repeats: int = 1
    block_on: list[str] | None = None
    """The outcomes the run's policy blocks on (None without a policy)."""
    repeats_errored: int = 0
    """With ``--repeats``: how many of the ``cases`` x ``repeats`` executions errored."""
    repeat_errors: list[ErrorGroup] = field(default_factory=list)
    """Why they errored, grouped as ``errors`` groups errored cases."""
    unseen: list[str] = field(default_factory=list)
    """What the system's code fingerprints could not see (``unseen_state``)."""
    uncounted: int = 0
    """Cases a go of the run wrote and then ended without an end record (killed): ``cache``
    and ``judges`` leave them out."""
    decided_on: int | None = None
    """The cases the gate shown was decided on, when the run holds more (a ``--resume`` that
    ended before deciding again: killed); else None. Also set for a run shown undecided because
    the gate recorded no longer stands for those cases (``outgrown_gate_stands``)."""
    import_unfinished: bool = False
    """The run came by an ``oloproof ledger import`` cut short (``oloproof.latest``): importing
    the archive again finishes it, not ``--resume``."""
    diagnosis_of: str | None = None
    """The run whose diagnosis made this child run: its cases and intervention are the
    diagnosis's, so no ``--resume`` finishes it; a new diagnosis of that run does."""
    model_calls: CallTotals | None = None
    """What the system's own model calls cost the run (``oloproof.call_totals``); None when
    it made and reused none, or was recorded before they were counted."""
    repeated_cases: int = 0
    """Cases answered that repeat an earlier case's input and the expected values its
    evaluators read (``RunTally.repeated``): each interval counts them as independent."""

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    def to_dataframe(self, table: str = "metrics") -> Any:
        """One of the report's tables as a pandas DataFrame (pandas must be installed).

        ``metrics``: a row per metric (the columns of ``MetricRow``); ``rules``: a row per
        rule; ``slices``: a row per slice value and metric (``slice``, ``value``,
        ``supported`` and the metric's columns).
        """
        try:
            import pandas as pd
        except ImportError:
            raise ImportError("RunReport.to_dataframe needs pandas: pip install pandas") from None
        if table == "metrics":
            return pd.DataFrame([asdict(m) for m in self.metrics])
        if table == "rules":
            return pd.DataFrame([asdict(r) for r in self.rules])
        if table == "slices":
            rows = [
                {"slice": s.slice, "value": s.value, "supported": s.supported, **asdict(s.metric)}
                for s in self.slices
            ]
            return pd.DataFrame(rows)
        raise ValueError(f"unknown table {table!r} (tables: metrics, rules, slices)")


def rule_note(rule_id: str, reason: str, detail: Mapping[str, Any]) -> str | None:
    """The line said under a run's rules for a rule whose outcome needs a word, else None: a
    rule that missing cases or repeats without a verdict decided (and what the observed cases
    alone give), or an observed_count rule a subset of the cases left undecided. The terminal
    report, the Markdown summary, JUnit and the viewer all say this one."""
    if reason == SUBSET_OF_CASES:
        return subset_rule_line(rule_id, detail)
    if reason != MISSING_DECIDES:
        return None
    missing, unjudged = int(detail.get("missing", 0)), int(detail.get("missing_repeats", 0))
    said = deciding_text(
        (missing, "case"), unjudged, "the observed cases alone", detail.get("observed_only")
    )
    return f"{rule_id}: {said}"


def repeated_cases_line(report: RunReport) -> str | None:
    """The line said under a run's metrics when cases repeat an earlier one
    (``repeated_cases``), else None. Such a case shares the earlier one's execution and
    verdicts, and every interval counts it as one more independent observation: 30 cases
    asking one question give [88.4%, 100.0%] from one answer. Repeats may be a sample drawn with
    replacement, so they are said, not refused. The terminal report, the Markdown summary and
    the viewer say this one; ``--json`` carries the count."""
    repeated = report.repeated_cases
    if not repeated:
        return None
    one = repeated == 1
    return (
        f"{repeated} of the {report.cases - report.errored} cases answered "
        f"{'repeats' if one else 'repeat'} an earlier case's input and the expected values its "
        f"evaluators read, and {'shares' if one else 'share'} its execution and verdicts; the "
        "intervals count each as an independent observation"
    )


def repeated_pairs_line(body: Mapping[str, Any]) -> str | None:
    """The line said under a comparison's pairing when paired cases repeat an earlier pair
    (its body's ``repeated_pairs``, ``compare`` 3d), else None: 200 paired cases asking one
    question give a narrow interval from one pair. The terminal, the Markdown summary and the
    viewer say this one."""
    repeated = int(body.get("repeated_pairs") or 0)
    if not repeated:
        return None
    one = repeated == 1
    return (
        f"{repeated} of the {body['paired_cases']} paired cases "
        f"{'repeats' if one else 'repeat'} an earlier pair's input and the expected values its "
        f"evaluators read in both runs, and {'shares' if one else 'share'} its executions and "
        "verdicts; the intervals count each as an independent pair"
    )


def level_line(level: float) -> str | None:
    """The line said beside a run's metrics when its intervals are at a ``level`` other than
    ``DEFAULT_LEVEL``, or None. An interval printed as ``[95.4%, 100.0%]`` is read as one at
    95%, and a rule it PASSes as shown at 95%: at 0.5 the same cases give that interval, and
    at 95% one that does not clear the rule. The terminal report and the Markdown summary say
    this one; the viewer's run page names the level above its metrics."""
    if level == DEFAULT_LEVEL:
        return None
    return (
        f"Intervals at {level * 100:g}% confidence (the policy's confidence_level: {level:g}), "
        f"not the usual {DEFAULT_LEVEL * 100:g}%"
    )


def evidence_line(report: RunReport) -> str | None:
    """The line said under a decided gate that stands on nothing (``stands_on_nothing``): a run
    none of whose cases was answered, or rules whose metric observed no case. It says why the
    gate blocks when nothing else would have (``block_on`` lets every rule's outcome through),
    and, for a gate an earlier release let pass (decision schema 3 and before), that
    ``block_on`` alone let it, so a green gate over no evidence is never read as a checked
    release. Under any other gate that passed with rules ``block_on`` let through, it names
    them (``let_through_text``). The terminal report, the Markdown summary, JUnit and the
    viewer all say this one."""
    if report.gate_label is None:
        return None
    later = _decided_before(report)
    answered = report.cases - report.errored
    if not stands_on_nothing((r.reason for r in report.rules), answered):
        let = let_through_text([(r.rule_id, r.outcome) for r in report.rules], report.gate_label)
        return let if later is None else (later if let is None else f"{let}. {later}")
    if answered == 0:
        why = {0: "no case ran", 1: "the 1 case errored"}.get(
            report.cases, f"all {report.cases} cases errored"
        )
        said = f"No case was answered: {why}, so no rule had a case to decide on"
    else:
        empty = [r.rule_id for r in report.rules if r.reason == NO_OBSERVED_CASES]
        said = _rules_said(empty, "observed no case")
    outcomes = [r.outcome for r in report.rules]
    why = _why_gate(said, report.gate_label == "PASS", outcomes, report.block_on or [])
    return why if later is None else f"{why}. {later}"


_LET_THROUGH_SAID = {
    "INSUFFICIENT_EVIDENCE": "{shown} did not show {} met",
    "MANUAL_REVIEW": "{} waits for a person's review",
}


def let_through_text(
    rules: Sequence[tuple[str, str]], gate_label: str, shown: str = "the run"
) -> str | None:
    """What a passed gate leaned on, when ``block_on`` let rules' outcomes other than PASS
    through (``rules``: each rule's id and outcome), else None: ``The gate passed only because
    block_on does not list INSUFFICIENT_EVIDENCE: the run did not show rule floor met``
    (``shown``: what decided the rules, the run or the comparison).

    Letting INSUFFICIENT_EVIDENCE through is the policy's documented choice, and the exit code
    stays 0; but a green gate over 3 cases answered of 30 reads as a release that was checked
    unless it says which rules it passed without."""
    if gate_label != "PASS":
        return None
    held: dict[str, list[str]] = {}
    for rule_id, outcome in rules:
        if outcome != "PASS":
            held.setdefault(outcome, []).append(rule_id)
    if not held:
        return None
    said = [
        _LET_THROUGH_SAID.get(outcome, "{} is " + outcome).format(
            f"rule {ids[0]}" if len(ids) == 1 else f"rules {', '.join(ids)}", shown=shown
        )
        for outcome, ids in held.items()
    ]
    return f"The gate passed only because block_on does not list {' or '.join(held)}: " + "; ".join(
        said
    )


def _decided_before(report: RunReport) -> str | None:
    """What to say of a gate decided on fewer cases than the run holds. Each case that
    finished since counts against the gate as missing, and a missing case widens every bound
    as far as any value of it could, so the gate is at least as strict as one decided on all of
    them; but its notes count other cases than the metrics beside it."""
    if report.decided_on is None:
        return None
    since = report.cases - report.decided_on
    return (
        f"The gate was decided on {report.decided_on} of the {report.cases} cases finished: "
        f"a --resume finished {since} more and ended before deciding again, so the gate counts "
        f"{'it' if since == 1 else 'them'} as missing (which cannot make it more lenient) and "
        "the metrics count all of them; resuming decides on every case"
    )


def outgrown_gate_stands(decision: Mapping[str, Any]) -> bool:
    """Whether the gate of ``decision``, recorded before a ``--resume`` wrote more cases and
    ended without deciding again, still stands for the cases the run holds now.

    Each case written since counts against it as missing, which widens every bound as far as
    any value of that case could: a rule's PASS and FAIL hold whatever the cases said, and a
    gate that blocked stays blocked. But a rule the missing cases left INSUFFICIENT_EVIDENCE
    may FAIL on them, so a gate that let one through (``block_on`` without it) does not stand:
    its reports show no gate (``withdrawn_gate_line``), and resuming decides again."""
    return bool(decision["gate"]["blocked"]) or all(
        rule["outcome"] != "INSUFFICIENT_EVIDENCE" for rule in decision["rules"]
    )


def withdrawn_gate_line(decided_on: int, cases: int) -> str:
    """``No gate: …`` of a run whose gate does not stand (``outgrown_gate_stands``)."""
    since = cases - decided_on
    return (
        f"No gate: the gate decided on {decided_on} of the {cases} cases finished let "
        "INSUFFICIENT_EVIDENCE through (block_on does not list it), and a --resume finished "
        f"{since} more and ended before deciding again: {'it' if since == 1 else 'they'} could "
        "make a rule FAIL; resuming decides on every case"
    )


def comparison_evidence_line(body: Mapping[str, Any]) -> str | None:
    """The line said under a comparison's gate that stands on nothing
    (``pairing.compared_on_nothing``): no case was paired, or rules read no pair of their
    metric. Worded as a run's (``evidence_line``): it says why the gate blocks when nothing
    else would have (``block_on`` lets every rule's outcome through), and, for a gate an
    earlier release let pass (comparison schema 4 and before), that ``block_on`` alone let
    it. Under any other gate that passed with rules ``block_on`` let through, it names them
    (``let_through_text``). The terminal output, ``inspect``, the Markdown summary, JUnit and
    the viewer all say this one; ``body`` is the comparison's, as read."""
    decisions: Sequence[Mapping[str, Any]] = body["decisions"]
    paired = int(body["paired_cases"])
    if body.get("gate") is None:
        return None
    if not compared_on_nothing((d["reason"] for d in decisions), paired):
        label = "BLOCK" if body["gate"]["blocked"] else "PASS"
        rules = [(str(d["id"]), str(d["outcome"])) for d in decisions]
        return let_through_text(rules, label, "the comparison")
    if paired == 0:
        said = f"No case was paired: {_unpaired_text(body)}, so no rule had a pair to decide on"
    else:
        unobserved = [str(d["id"]) for d in decisions if d["reason"] in NO_PAIR_REASONS]
        changed = [str(d["id"]) for d in decisions if d["reason"] == EVALUATOR_CHANGED]
        parts = [_rules_said(unobserved, "observed no pair")] if unobserved else []
        if changed:
            why = "compared a metric the two runs judged with different evaluators"
            parts.append(_rules_said(changed, why))
        said = "; ".join(parts)
    outcomes = [str(d["outcome"]) for d in decisions]
    block_on = (body.get("policy") or {}).get("block_on") or []
    return _why_gate(said, not body["gate"]["blocked"], outcomes, block_on)


def _why_gate(said: str, passed: bool, outcomes: Sequence[str], block_on: Sequence[str]) -> str:
    """``said`` (a gate with nothing under it) and, for a release or comparison gate, what
    made it pass (an earlier release let ``block_on`` pass it) or block (that alone, when
    ``block_on`` lists none of the rules' ``outcomes``)."""
    if passed:
        let_through = dict.fromkeys(o for o in outcomes if o != "PASS")
        return (
            f"{said}; the gate passed only because block_on does not list "
            f"{' or '.join(let_through)}, which an earlier release allowed"
        )
    if not any(o in block_on for o in outcomes):
        return f"{said}; that alone blocks the gate, whatever block_on lists"
    return said


def _rules_said(ids: Sequence[str], why: str) -> str:
    """``Rule a {why}, so nothing decided it``, or ``Rules a, b {why}, ... them``."""
    if len(ids) == 1:
        return f"Rule {ids[0]} {why}, so nothing decided it"
    return f"Rules {', '.join(ids)} {why}, so nothing decided them"


SHOWN_IDS = 5
"""How many case ids a ``not paired`` line names before it says how many more."""


def unpaired_lines(body: Mapping[str, Any], ids: bool = True) -> list[str]:
    """The comparison's ``not paired`` lines, one per reason (``not paired 2: errored in
    candidate (q0, q1)``), as ``compare`` and the viewer print them; without ``ids``, by number
    alone (a summary that long ids would make too long for a comment). The planned cases no
    run executed count as missing for every metric (``not_run``), so they get one too, by
    number only: a case that never ran left no id in the ledger."""
    lines = []
    for unpaired in body["unpaired"]:
        reason = str(unpaired["reason"]).replace("_", " ")
        line = f"not paired {unpaired['count']}: {reason}"
        if ids:
            line += f" ({first_few(unpaired['case_ids'], SHOWN_IDS, printable)})"
        lines.append(line)
    unrun = int(body.get("not_run", 0))
    if unrun:
        lines.append(
            f"not paired {unrun}: not run (planned but never executed; the ledger holds no id)"
        )
    return lines


def _unpaired_text(body: Mapping[str, Any]) -> str:
    """Why a comparison paired no case, as its ``not paired`` lines count them:
    ``5 errored in candidate``, ``3 only in candidate, 2 only in baseline and 1 not run``."""
    said = [f"{u['count']} {str(u['reason']).replace('_', ' ')}" for u in body["unpaired"]]
    if body.get("not_run"):
        said.append(f"{body['not_run']} not run")
    if not said:
        return "neither run holds a case"
    return " and ".join([", ".join(said[:-1]), said[-1]]) if len(said) > 1 else said[0]


def comparison_rule_note(decision: Mapping[str, Any]) -> str | None:
    """For a comparison rule that missing pairs or repeats without a verdict decided, what
    decided it and what the paired cases alone give; None for any other rule."""
    detail = decision["detail"]
    observed = detail.get("observed_only")
    if decision["reason"] != MISSING_DECIDES or not isinstance(observed, Mapping):
        return None
    missing, unjudged = int(detail.get("missing", 0)), int(detail.get("missing_repeats", 0))
    alone = f"the {detail['paired']} paired alone"
    return deciding_text((missing, "pair"), unjudged, alone, observed)


def planning_text(decision: Mapping[str, Any]) -> str | None:
    """A comparison rule's planning projection (its ``detail["planning"]``), as ``compare``
    and the viewer say it; None for a rule without one. The discordance is printed from the
    rule's b, c and paired count, never as 0% or 100% for a share that is neither.

    The projection searches only for a total that would show the rule non-inferior
    (statistics.md D), so past its limit the line says that is what it did not find: a
    difference held that is worse than the margin would instead decide a FAIL, often within a
    few dozen more pairs, and the line says so whenever the difference seen is worse."""
    detail = decision["detail"]
    planning = detail.get("planning")
    if planning is None:
        return None
    if planning["beyond_limit"]:
        said = (
            f"more than {planning['limit']:,} paired cases would be needed to show it "
            "non-inferior, if the difference holds"
        )
        seen = Fraction(int(detail["b"]) - int(detail["c"]), int(detail["paired"]))
        if seen < -Fraction(repr(float(decision["margin_points"]))) / 100:
            said += (
                "; the difference seen is worse than the margin, so more cases would rather "
                "decide it as a FAIL"
            )
        return said
    more = int(planning["more"])
    # Not the stored whole percent (``discordance_percent``): it reads 0% for 1 pair of 251.
    discordance = fmt_share(int(detail["b"]) + int(detail["c"]), int(detail["paired"]))
    return (
        f"about {more} more paired {plural(more, 'case')} would decide it, if the difference "
        f"holds ({planning['total']} in total at {discordance} discordance)"
    )


def rule_margins(body: Mapping[str, Any], metric: str) -> list[float]:
    """The values (fractions) the comparison's rules on ``metric`` compare its interval's
    bounds with, as they decide (``stats.decide_*``): -m for non-inferiority, +m for
    superiority, both for equivalence. Printed beside them, a bound keeps its side of each
    (``display.fmt_points_interval``)."""
    margins: list[float] = []
    for decision in body.get("decisions") or []:
        if decision["metric"] == metric:
            m = float(decision["margin_points"]) / 100.0  # as CompareRule.test gives it
            test = decision["test"]
            margins += [-m, m] if test == "equivalence" else [m if test == "superiority" else -m]
    return margins


JUDGED_DIFFERENTLY = (
    "judged differently: the evaluator differs between the runs (its settings, or the version "
    "of its code)"
)
"""What a comparison says under a metric its two runs judged with different evaluators
(``same_evaluator`` false), in the terminal and in the Markdown summary alike: its difference
mixes the change to the system with the change to the measurement. The spec may differ only
in the version of Oloproof's code behind it, which a user would look for in vain in a file."""


def compared_apart_lines(body: Mapping[str, Any]) -> list[str]:
    """The lines of a comparison's metrics that were not compared alike: each judged
    differently (``metric: judged differently: …``), then each only one run measures
    (``not compared: metric (only in candidate)``)."""
    judged = [r["metric"] for r in body["metrics"] if not r["same_evaluator"]]
    return [
        *(f"{metric}: {JUDGED_DIFFERENTLY}" for metric in judged),
        *(f"not compared: {n['metric']} (only in {n['only_in']})" for n in body["not_compared"]),
    ]


def counted_text(row: Mapping[str, Any], margins: Sequence[float] = ()) -> str | None:
    """For a comparison's metric row with missing pairs or repeats without a verdict, how its
    interval counts them and what the paired cases alone give (beside the rules' ``margins``,
    as ``rule_margins`` gives them); None for any other row (or one with no paired case)."""
    diff = row["difference"]
    repeats: Mapping[str, int] = row.get("missing_repeats") or {}
    unjudged = sum(repeats.values())
    if diff is None or not (row["missing"] or unjudged):
        return None
    observed = fmt_points_interval(
        Interval(diff["observed_lower"], diff["observed_upper"], 0.0, ""), margins
    )
    counted = [f"the {row['missing']} missing"] if row["missing"] else []
    if unjudged:
        counted.append(f"the {unjudged} {plural(unjudged, 'repeat')} without a verdict")
    alone = f"the {row['paired']} paired alone"
    if unjudged:
        alone += ", on their judged repeats,"
    return (
        f"the interval counts {' and '.join(counted)} against the candidate (lower bound) and "
        f"for it (upper bound); {alone} give {observed}"
    )


def deciding_text(
    missing: tuple[int, str], unjudged: int, alone: str, observed: Mapping[str, Any] | None
) -> str:
    """What decided a ``missing_cases_decide`` rule, and what ``alone`` (the observed cases,
    or pairs) would have given: ``40 missing pairs and 200 repeats without a verdict decide it:
    on the 160 paired alone, on their judged repeats, it would be PASS (interval_above_margin)``.
    ``missing``: how many missing, and of what (``case``, ``pair``); ``unjudged``: repeats
    without a verdict; ``observed``: the decision's ``observed_only``."""
    count, noun = missing
    deciding = [f"{count} missing {plural(count, noun)}"] if count else []
    if unjudged:
        deciding.append(f"{unjudged} {plural(unjudged, 'repeat')} without a verdict")
        alone += ", on their judged repeats,"
    verb = "decides" if count + unjudged == 1 else "decide"
    seen = observed or {}
    return (
        f"{' and '.join(deciding)} {verb} it: on {alone} it would be {seen.get('outcome')} "
        f"({seen.get('reason')})"
    )


def subset_rule_line(rule_id: str, detail: Mapping[str, Any]) -> str:
    """Under the rules: an observed_count rule a subset of the cases left undecided
    (``subset_of_cases``), how many cases ran and why their count cannot decide it."""
    subset = detail["subset"]
    failures = int(detail["failures"])
    noun = "failure" if failures == 1 else "failures"
    return (
        f"{rule_id}: only {subset['planned']} of {subset['total']} cases ran; {failures} {noun} "
        f"among them cannot show that the suite stays within max_failures "
        f"{detail['max_failures']} (run without --sample or --limit to decide it)"
    )


def metric_row(
    tally: MetricTally,
    level: float,
    *,
    with_interval: bool = True,
    proportion: bool | None = None,
    not_run: int = 0,
) -> MetricRow:
    """One metric's row; ``proportion`` fixes how it is shown (a slice follows its run).

    ``not_run`` planned cases that never ran count as missing, with reason ``not_run``.
    """
    as_proportion = tally.is_proportion if proportion is None else proportion
    observed = tally.interval(level, proportion=as_proportion) if with_interval else None
    bounded = (
        tally.bounded_interval(level, proportion=as_proportion, not_run=not_run)
        if with_interval
        else None
    )
    reasons = dict(tally.missing)
    if not_run:
        reasons[NOT_RUN] = reasons.get(NOT_RUN, 0) + not_run
    return MetricRow(
        criterion=tally.criterion,
        proportion=as_proportion,
        estimate=tally.estimate,
        lower=bounded.lower if bounded else None,
        upper=bounded.upper if bounded else None,
        successes=tally.successes,
        observed=tally.observed,
        missing=tally.n_missing + not_run,
        excluded=tally.n_excluded,
        excluded_reasons=dict(sorted(tally.excluded.items())),
        missing_reasons=dict(sorted(reasons.items())),
        observed_lower=observed.lower if observed else None,
        observed_upper=observed.upper if observed else None,
        missing_repeats=tally.missing_repeats,
        method=bounded.method if bounded else None,
    )


def error_groups(ledger: Ledger, errored: Sequence[tuple[int, str, str]]) -> list[ErrorGroup]:
    """Why cases errored: (line, case id, execution address) grouped by error type and the
    first line of its message, most common first (then by the first case's line, and a case's
    repeats in the order given, which is theirs: not by address, a hash of the record)."""
    groups: dict[tuple[str, str], list[Any]] = {}
    from ledger import LedgerError

    for line, case_id, execution in sorted(errored, key=lambda item: item[:2]):
        try:
            error: Map = execution_body(ledger.get(execution)).get("error") or {}
        except LedgerError:  # `verify` names a damaged event; the report still says it errored
            error = {"type": "error", "message": "its execution record cannot be read"}
        # Redacted before it is cut: a secret declared after the run was stored whole, and a
        # cut through it would leave a part the redaction of what is printed cannot find.
        message = redact_text(str(error.get("message", ""))).strip().splitlines()
        key = (str(error.get("type", "error")), message[0][:_MESSAGE_LIMIT] if message else "")
        entry = groups.setdefault(key, [0, case_id, line])
        entry[0] += 1
    ordered = sorted(groups.items(), key=lambda item: (-item[1][0], item[1][2]))
    return [ErrorGroup(t, m, count, first) for (t, m), (count, first, _) in ordered]


def errored_count(errored: int, of: int, noun: str = "cases") -> str:
    """``100 of 300 cases errored`` (``noun`` is ``repeats`` for a repeated run's repeats)."""
    return f"{errored} of {of} {noun} errored"


def errored_summary(of: int, groups: Sequence[ErrorGroup], noun: str = "cases") -> str:
    """``100 of 300 cases errored: RuntimeError: boom (first: c0)``: how many of ``of`` errored
    and why (``error_groups``); ``first`` names a case, for ``repeats`` too.

    The kinds of error are the most common first; past ``ERROR_KINDS_SHOWN`` the line says how
    many more, and each message is cut at ``ERROR_MESSAGE`` characters, so it stays one line.
    """
    parts = []
    for group in groups[:ERROR_KINDS_SHOWN]:
        message = printable(group.message)
        if len(message) > ERROR_MESSAGE:
            message = message[: ERROR_MESSAGE - 1] + "…"
        what = f"{printable(group.type)}: {message}" if message else printable(group.type)
        count = f"{group.count}, " if len(groups) > 1 else ""
        parts.append(f"{what} ({count}first: {printable(group.first)})")
    more = len(groups) - ERROR_KINDS_SHOWN
    if more > 0:
        parts.append(f"{more} more {'kind' if more == 1 else 'kinds'}")
    total = sum(g.count for g in groups)
    return f"{errored_count(total, of, noun)}: {'; '.join(parts)}"


def repeats_errored_summary(report: RunReport) -> str:
    """``60 of 90 repeats errored: RuntimeError: boom (first: c0)``, of a repeated run."""
    return errored_summary(report.cases * report.repeats, report.repeat_errors, "repeats")


def repeats_text(counts: RepeatCounts) -> str:
    """How a repeated case's repeats went, in a few words: ``2 of 3 repeats errored``, ``1 of 3
    repeats without a verdict``, both, or ``3 repeats, each judged``."""
    parts = []
    if counts.errored:
        parts.append(errored_count(counts.errored, counts.executed, "repeats"))
    if counts.without_verdict:
        parts.append(f"{counts.without_verdict} of {counts.executed} repeats without a verdict")
    return "; ".join(parts) or f"{counts.executed} repeats, each judged"


def observed_repeats_text(verdict: Mapping[str, Any]) -> str | None:
    """``2 of 3 repeats observed, 1 missing`` for a repeated case's combined verdict that leaves
    out repeats without a verdict; None for any other verdict."""
    if "m" not in verdict:
        return None
    observed, missing = int(verdict["n"]), int(verdict["m"])
    return f"{observed} of {observed + missing} repeats observed, {missing} missing"


def corrected_row(
    tally: MetricTally, calibration: Calibration, address: str, level: float, *, not_run: int = 0
) -> CorrectedRow:
    """``tally`` (a judge's pass/fail metric) corrected with ``calibration`` (at ``address``).

    Its missing cases (and ``not_run`` ones) count against the interval as they do for the
    metric itself (``corrected_rate``'s ``missing``), and so do the calibration's unanswered
    examples.
    """
    from oloproof.calibration import corrected_rate

    missing = tally.n_missing + not_run
    estimate, interval = corrected_rate(
        tally.successes, tally.observed, calibration, level, missing=missing
    )
    se, sp = calibration.sensitivity, calibration.specificity
    return CorrectedRow(
        criterion=tally.criterion,
        estimate=estimate,
        lower=interval.lower,
        upper=interval.upper,
        level=level,
        method=interval.method,
        successes=tally.successes,
        observed=tally.observed,
        calibration=address,
        sensitivity=[se.k, se.n],
        specificity=[sp.k, sp.n],
        missing=missing,
        unanswered=len(calibration.missing),
    )


def judge_usage_rows(run_body: Mapping[str, Any], end: RunEndBody | None) -> list[JudgeUsageRow]:
    """Per LLM judge of the run, the totals its latest run_end recorded (none without one)."""
    recorded = (end.get("judges") if end else None) or {}
    rows = []
    for entry in run_body["evaluators"]:
        totals = recorded.get(entry["criterion"])
        if totals is None:
            continue
        spec = entry["spec"]
        rows.append(
            JudgeUsageRow(
                criterion=entry["criterion"],
                provider=str(spec.get("provider", "")),
                model=str(spec.get("model", "")),
                calls=int(totals["calls"]),
                failed=int(totals["failed"]),
                reused=int(totals["reused"]),
                input_tokens=int(totals["input_tokens"]),
                output_tokens=int(totals["output_tokens"]),
                cost=None if totals["cost"] is None else float(totals["cost"]),
                calls_without_usage=int(totals["calls_without_usage"]),
            )
        )
    return rows


def execution_state(end: Mapping[str, Any] | None, errored: int, running: bool = False) -> str:
    """The execution state (this module's docstring) of a run whose latest run_end is ``end``
    (None without one), of whose cases and repeats ``errored`` errored, and which a live
    process is writing when ``running``. The report and ``oloproof runs`` both read it here, so
    a run never shows one state in its report and another in the list.

    A run a live process writes is RUNNING whether or not an earlier go of it ended: a
    ``--resume`` under way is writing it, and its recorded end is about to be superseded. (A
    complete run is never resumed: it stays what it is.)"""
    if running and (end is None or end["state"] != "complete"):
        return "RUNNING"
    if end is None:
        return "INTERRUPTED"
    if end["state"] == "stopped":
        return "STOPPED"
    if end["state"] != "complete":
        return "INTERRUPTED"
    return "PARTIAL" if errored else "COMPLETE"


def build_run_report(
    run_body: Mapping[str, Any],
    address: str,
    tally: RunTally,
    end: RunEndBody | None,
    decision: Mapping[str, Any] | None,
    corrected: Sequence[CorrectedRow] = (),
    errors: Sequence[ErrorGroup] = (),
    running: bool = False,
    repeat_errors: Sequence[ErrorGroup] = (),
) -> RunReport:
    """Assemble a run's report from its run event, tally, latest run_end and decision.

    ``corrected`` are the judge metrics corrected with their judges' calibrations (the caller
    finds those in the ledger; see ``corrected_row``); ``errors`` says why cases errored and
    ``repeat_errors`` why repeats did (``error_groups``). A stopped run shows no decision, even
    one an older version recorded, and a running run none until it ends.
    """
    state = execution_state(end, tally.errored + tally.repeats_errored, running)
    if state in ("STOPPED", "RUNNING"):
        # A running run's gate is decided when it ends; one an earlier go of it recorded
        # decided fewer cases than are being written now.
        decision = None
    policy = run_body.get("policy")
    level = float(policy["confidence_level"]) if policy else DEFAULT_LEVEL
    support = int(run_body["min_slice_support"])
    unrun = not_run(run_body, tally.cases)
    slices = []
    for (name, value), per_metric in sorted(tally.slice_tallies.items()):
        for tally_ in per_metric.values():
            supported = tally_.observed >= support
            slices.append(
                SliceRow(
                    name,
                    value,
                    metric_row(
                        tally_,
                        level,
                        with_interval=supported,
                        proportion=tally.metrics[tally_.criterion].is_proportion,
                        # A case that never ran left no slice value: any row may hold it.
                        not_run=unrun,
                    ),
                    supported,
                )
            )
    # A resume killed after writing cases leaves the last end, and the decision made with it,
    # counting fewer cases than the run holds. A resume still running counts its own at its end.
    outgrown = (
        state != "RUNNING"
        and end is not None
        and end["state"] != "complete"
        and tally.cases > end["cases"]
    )
    withdrawn = outgrown and decision is not None and not outgrown_gate_stands(decision)
    if withdrawn:
        decision = None
    rules = [
        RuleRow(r["id"], r["metric"], r["outcome"], r["reason"], dict(r["detail"]))
        for r in (decision["rules"] if decision else [])
    ]
    gate = decision["gate"] if decision else None
    decision_state, exit_code = gate_state(gate, policy, state)
    cache: RunCache = (
        end["cache"] if end else {"execution": [0, 0], "judgment": [0, 0], "stages": {}}
    )
    is_staged = run_body["system"].get("kind") == "rag"
    return RunReport(
        run_id=run_body["run_id"],
        address=address,
        system=dict(run_body["system"]),
        decision_state=decision_state,
        execution_state=state,
        gate_label=("BLOCK" if gate["blocked"] else "PASS") if gate else None,
        exit_code=exit_code,
        rules=rules,
        metrics=[metric_row(t, level, not_run=unrun) for t in tally.metrics.values()],
        slices=slices,
        min_slice_support=support,
        cache={"execution": list(cache["execution"]), "judgment": list(cache["judgment"])},
        stages=(
            {s: list(cache.get("stages", {}).get(s, [0, 0])) for s in ("retrieve", "generate")}
            if is_staged
            else None
        ),
        cases=tally.cases,
        planned_cases=planned_cases(run_body),
        errored=tally.errored,
        # A resume under way has not stopped: why an earlier go stopped is not its reason.
        stop_reason=end.get("reason") if end and state != "RUNNING" else None,
        level=level,
        corrected=list(corrected),
        judges=judge_usage_rows(run_body, end),
        model_calls=CallTotals.from_body(end["model_calls"])
        if end and "model_calls" in end
        else None,
        errors=list(errors),
        repeated_cases=tally.repeated,
        redacted=end.get("redacted") if end else None,
        # A run of the first ledger format recorded no fingerprints: nothing to say of them.
        unseen=unseen_state(run_body.get("fingerprints") or {}),
        subset=dict(run_body["subset"]) if run_body.get("subset") else None,
        repeats=int(run_body.get("repeats", 1)),
        block_on=list(policy.get("block_on") or []) if policy else None,
        repeats_errored=tally.repeats_errored,
        repeat_errors=list(repeat_errors),
        decided_on=(
            int(end["cases"])
            if (gate is not None or withdrawn) and end is not None and outgrown
            else None
        ),
        # A resume killed after writing cases, and not resumed since: its cases are uncounted
        # too, though no end record says so yet.
        uncounted=(int(end.get("uncounted", 0)) if end else 0)
        + (tally.cases - int(end["cases"]) if end is not None and outgrown else 0),
    )


def gate_state(
    gate: Mapping[str, Any] | None, policy: Mapping[str, Any] | None, state: str
) -> tuple[str, int]:
    """DECIDED, NO_POLICY or UNDECIDED, and the exit code that goes with it, for a run in
    execution ``state`` whose standing decision's gate is ``gate``: what its report and its
    row in ``oloproof runs`` both say."""
    if gate is not None:
        return "DECIDED", int(gate["exit_code"])
    if state == "STOPPED":
        return ("UNDECIDED" if policy else "NO_POLICY"), EXIT_STOPPED
    if policy:
        return "UNDECIDED", EXIT_UNDECIDED
    return "NO_POLICY", 0


def unseen_state(fingerprints: Mapping[str, Any]) -> list[str]:
    """What a system's code fingerprints (``System.fingerprints()``, as a run records them) list
    as read but not seen: a change to it reuses results made before it."""
    return sorted({u for record in fingerprints.values() for u in record.get("unseen", ())})


def usage_left_out_text(row: JudgeUsageRow) -> str | None:
    """What a judge's token and cost totals leave out: its replies that reported no token
    counts, said under its row, or the totals read as the whole spend; None when there are
    none."""
    unreported = row.calls_without_usage
    if not unreported:
        return None
    counted = "tokens" if row.cost is None else "tokens and cost"
    replies = "1 reply" if unreported == 1 else f"{unreported:,} replies"
    return (
        f"{row.criterion}: {replies} reported no token counts, so the {counted} above leave "
        "them out"
    )


def uncounted_text(cases: int) -> str:
    """What the cache counts and judge usage of a run leave out: the cases a go killed after
    writing them took its counts of (``RunReport.uncounted``); empty when none."""
    if not cases:
        return ""
    return f" (not counting the {cases} {plural(cases, 'case')} a go that was killed wrote)"


# --------------------------------------------------------------------------- slice rows


def slice_text(value: str) -> str:
    """A slice value as printed: as it is when every character shows as itself
    (``idtext.id_problem``) in composed form, else quoted and escaped (``ascii``), so two
    values that differ never print alike and none acts on the terminal. An empty value and one
    that starts with a quote are quoted too, so that no plain value reads as a quoted one."""
    plain = (
        value[:1] not in ("", "'", '"')
        and id_problem(value) is None
        and unicodedata.is_normalized("NFC", value)
    )
    return value if plain else ascii(value)


def slices_unrun_line(report: RunReport) -> str | None:
    """The line under a run's slice rows when planned cases never ran: each row counts them as
    missing (``build_run_report``), and the rows alone would not say why."""
    unrun = max(0, report.planned_cases - report.cases)
    if not unrun:
        return None
    return (
        f"{unrun} planned {plural(unrun, 'case')} did not run, and which slice values they hold "
        "is not known: each row counts them as missing"
    )


def left_out_of_slices(body: Mapping[str, Any]) -> str | None:
    """What the slice rows leave out, or None: a slice row reads its paired cases' judged
    repeats alone, so with missing cases or repeats it is not the whole slice, and says so.
    The counts are the most any metric has."""
    missing = max((int(row["missing"]) for row in body["metrics"]), default=0)
    unjudged = max(
        (sum((row.get("missing_repeats") or {}).values()) for row in body["metrics"]), default=0
    )
    said = []
    if missing:
        said.append(
            f"of the paired cases alone: {missing} {plural(missing, 'case')} missing from the "
            f"comparison {'is' if missing == 1 else 'are'} in none of them"
        )
    if unjudged:
        said.append(
            f"on the judged repeats alone: {unjudged} {plural(unjudged, 'repeat')} without a "
            f"verdict {'is' if unjudged == 1 else 'are'} in none of them"
        )
    return "; ".join(said) or None


def missing_metric_lines(row: MetricRow, level: float) -> list[str]:
    """Under the metrics table, for a metric with missing cases: why they are missing (most
    common reason first), how its interval counts them, and the usual remedy of each reason
    (the CLI's report and the viewer's run page)."""
    from oloproof.evaluators.judge_reply import REASON_HINTS

    ranked = sorted(row.missing_reasons.items(), key=lambda item: (-item[1], item[0]))
    split = ", ".join(f"{count} {reason}" for reason, count in ranked)
    low, high = ("failing", "passing") if row.proportion else ("0", "1")
    counted = f"counts them as {low} for the lower bound and {high} for the upper"
    # A proportion's bounds are Clopper-Pearson's and a mean's betting's; any other pairing is
    # a graded metric whose missing values choose the method too (MetricTally.bounded_interval).
    if row.method is not None and row.method != (CLOPPER_PEARSON if row.proportion else BETTING):
        counted = (
            "holds any value they could have had, from 0 to 1: one between makes it a betting "
            "interval, so each bound is the wider of that and Clopper-Pearson, with them at 0 "
            "for the lower bound and 1 for the upper"
        )
    # With no case observed there is no interval (the table shows none) to count them in.
    said = "with no case observed, there is no interval to count them in"
    if row.observed_lower is not None and row.observed_upper is not None:
        iv = Interval(row.observed_lower, row.observed_upper, level, "")
        observed = fmt_percent_interval(iv) if row.proportion else fmt_mean_interval(iv)
        said = f"the interval {counted}; the {row.observed} observed alone give {observed}"
    return [
        f"{row.criterion}: {row.missing} missing: {split}",
        f"  {said}",
        *(f"  {REASON_HINTS[r]}" for r, _ in ranked if r in REASON_HINTS),
    ]
