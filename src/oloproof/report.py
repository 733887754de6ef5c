"""Plain-data reports for the CLI, ``--json`` and the viewer: nothing here prints.

Run states, printed as ``[DECISION_STATE/EXECUTION_STATE]``:

    DECIDED      a policy was applied and the gate decided
    NO_POLICY    the run has no policy: metrics only, exit 0
    COMPLETE     every case ran and none errored
    PARTIAL      every case ran, but some errored (their judgments are missing)
    INTERRUPTED  the run stopped before every case ran (Ctrl-C, a crash); `--resume` finishes it
    STOPPED      a malformed artifact stopped the run; fix the system and run again
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from oloproof.metrics import MetricTally, RunTally

if TYPE_CHECKING:
    from oloproof.calibration import Calibration

DEFAULT_LEVEL = 0.95


@dataclass(frozen=True)
class MetricRow:
    """One metric's estimate, interval and evidence counts."""

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
    ``specificity`` its ``[k, n]`` counts.
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
    # Occurrences of configured secrets replaced in what the run stored; None for a run
    # recorded before redaction was counted.
    redacted: int | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def metric_row(
    tally: MetricTally,
    level: float,
    *,
    with_interval: bool = True,
    proportion: bool | None = None,
) -> MetricRow:
    """One metric's row; ``proportion`` fixes how it is shown (a slice follows its run)."""
    as_proportion = tally.is_proportion if proportion is None else proportion
    interval = tally.interval(level, proportion=as_proportion) if with_interval else None
    return MetricRow(
        criterion=tally.criterion,
        proportion=as_proportion,
        estimate=tally.estimate,
        lower=interval.lower if interval else None,
        upper=interval.upper if interval else None,
        successes=tally.successes,
        observed=tally.observed,
        missing=tally.n_missing,
        excluded=tally.n_excluded,
        excluded_reasons=dict(sorted(tally.excluded.items())),
        missing_reasons=dict(sorted(tally.missing.items())),
    )


def corrected_row(
    tally: MetricTally, calibration: Calibration, address: str, level: float
) -> CorrectedRow:
    """``tally`` (a judge's pass/fail metric) corrected with ``calibration`` (at ``address``)."""
    from oloproof.calibration import corrected_rate

    estimate, interval = corrected_rate(tally.successes, tally.observed, calibration, level)
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
    )


def judge_usage_rows(
    run_body: Mapping[str, Any], end: Mapping[str, Any] | None
) -> list[JudgeUsageRow]:
    """Per LLM judge of the run, the totals its latest run_end recorded (none without one)."""
    recorded: Mapping[str, Any] = (end or {}).get("judges") or {}
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


def execution_state(end: Mapping[str, Any] | None, tally: RunTally) -> str:
    if end is None or end["state"] == "interrupted":
        return "INTERRUPTED"
    if end["state"] == "stopped":
        return "STOPPED"
    return "PARTIAL" if tally.errored else "COMPLETE"


def build_run_report(
    run_body: Mapping[str, Any],
    address: str,
    tally: RunTally,
    end: Mapping[str, Any] | None,
    decision: Mapping[str, Any] | None,
    corrected: Sequence[CorrectedRow] = (),
) -> RunReport:
    """Assemble a run's report from its run event, tally, latest run_end and decision.

    ``corrected`` are the judge metrics corrected with their judges' calibrations (the caller
    finds those in the ledger; see ``corrected_row``).
    """
    policy = run_body.get("policy")
    level = float(policy["confidence_level"]) if policy else DEFAULT_LEVEL
    support = int(run_body["min_slice_support"])
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
                    ),
                    supported,
                )
            )
    rules = [
        RuleRow(r["id"], r["metric"], r["outcome"], r["reason"], dict(r["detail"]))
        for r in (decision["rules"] if decision else [])
    ]
    gate = decision["gate"] if decision else None
    cache: Mapping[str, Any] = (
        end["cache"] if end else {"execution": [0, 0], "judgment": [0, 0], "stages": {}}
    )
    is_staged = run_body["system"].get("kind") == "rag"
    return RunReport(
        run_id=run_body["run_id"],
        address=address,
        system=dict(run_body["system"]),
        decision_state="DECIDED" if gate is not None else "NO_POLICY",
        execution_state=execution_state(end, tally),
        gate_label=("BLOCK" if gate["blocked"] else "PASS") if gate else None,
        exit_code=int(gate["exit_code"]) if gate else 0,
        rules=rules,
        metrics=[metric_row(t, level) for t in tally.metrics.values()],
        slices=slices,
        min_slice_support=support,
        cache={"execution": list(cache["execution"]), "judgment": list(cache["judgment"])},
        stages=(
            {s: list(cache.get("stages", {}).get(s, [0, 0])) for s in ("retrieve", "generate")}
            if is_staged
            else None
        ),
        cases=tally.cases,
        planned_cases=int(run_body.get("planned_cases", run_body["dataset"]["cases"])),
        errored=tally.errored,
        stop_reason=end.get("reason") if end else None,
        level=level,
        corrected=list(corrected),
        judges=judge_usage_rows(run_body, end),
        redacted=(end or {}).get("redacted"),
    )
