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

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from oloproof.metrics import MetricTally, RunTally

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

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def metric_row(tally: MetricTally, level: float, *, with_interval: bool = True) -> MetricRow:
    interval = tally.interval(level) if with_interval else None
    return MetricRow(
        criterion=tally.criterion,
        proportion=tally.is_proportion,
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
) -> RunReport:
    """Assemble a run's report from its run event, tally, latest run_end and decision."""
    policy = run_body.get("policy")
    level = float(policy["confidence_level"]) if policy else DEFAULT_LEVEL
    support = int(run_body["min_slice_support"])
    slices = []
    for (name, value), per_metric in sorted(tally.slice_tallies.items()):
        for tally_ in per_metric.values():
            supported = tally_.observed >= support
            slices.append(
                SliceRow(name, value, metric_row(tally_, level, with_interval=supported), supported)
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
    )
