"""Text rendering of reports: boxed tables, metric rows, the run report."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from oloproof.display import fmt_mean, fmt_mean_interval, fmt_percent, fmt_percent_interval
from oloproof.report import CorrectedRow, JudgeUsageRow, MetricRow, RunReport
from oloproof.results import Interval

if TYPE_CHECKING:
    from oloproof.dry_run import DryRun, JudgeCalls

OUTPUT_PREVIEW = 160


def table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    """A boxed table: every column as wide as its widest cell."""
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]

    def line(cells: Sequence[str]) -> str:
        return "│ " + " │ ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)) + " │"

    def rule(left: str, mid: str, right: str) -> str:
        return left + mid.join("─" * (w + 2) for w in widths) + right

    return [
        rule("┌", "┬", "┐"),
        line(header),
        rule("├", "┼", "┤"),
        *(line(r) for r in rows),
        rule("└", "┴", "┘"),
    ]


def metric_cells(row: MetricRow, level: float) -> list[str]:
    """Estimate, interval and evidence, as the run report prints them."""
    if row.estimate is None:
        value = "—"
    elif row.proportion:
        value = fmt_percent(row.estimate)
    else:
        value = fmt_mean(row.estimate)
    if row.lower is None or row.upper is None:
        interval = "—"
    else:
        iv = Interval(row.lower, row.upper, level, "")
        interval = fmt_percent_interval(iv) if row.proportion else fmt_mean_interval(iv)
    tail = f"{row.missing} missing · {row.excluded} excluded"
    if row.proportion:
        evidence = f"{row.successes} / {row.observed} observed · {tail}"
    else:
        evidence = f"mean of {row.observed} observed · {tail}"
    return [value, interval, evidence]


def run_report_lines(report: RunReport) -> list[str]:
    lines = [f"Run {report.run_id} [{report.decision_state}/{report.execution_state}]"]
    if report.execution_state == "INTERRUPTED":
        lines.append(
            f"{report.cases} of {report.planned_cases} cases finished; "
            f"finish it with: oloproof run --resume {report.run_id}"
        )
    if report.execution_state == "STOPPED" and report.stop_reason:
        lines.append(f"Stopped: {report.stop_reason}")
    if report.gate_label is not None:
        lines.append(f"Gate: {report.gate_label} (exit {report.exit_code})")
        lines += table(
            ["rule", "metric", "decision", "reason"],
            [[r.rule_id, r.metric, r.outcome, r.reason] for r in report.rules],
        )
        lines += [
            judge_rule_line(r.rule_id, r.metric, r.detail["judge"])
            for r in report.rules
            if isinstance(r.detail.get("judge"), Mapping)
        ]
        lines.append("")
    lines += table(
        ["metric", "estimate", "interval", "evidence"],
        [[m.criterion, *metric_cells(m, report.level)] for m in report.metrics],
    )
    ex, jd = report.cache["execution"], report.cache["judgment"]
    lines.append(f"Cache: execution {ex[0]} hit/{ex[1]} miss; judgment {jd[0]} hit/{jd[1]} miss")
    if report.stages is not None:
        r, g = report.stages["retrieve"], report.stages["generate"]
        lines.append(f"Stages: retrieve {r[0]} hit/{r[1]} miss; generate {g[0]} hit/{g[1]} miss")
    if report.redacted:
        word = "occurrence" if report.redacted == 1 else "occurrences"
        lines.append(f"Redacted: {report.redacted} {word} of configured secrets")
    if report.corrected:
        lines.append("")
        lines += corrected_lines(report.corrected)
    if report.judges:
        lines.append("")
        lines += judge_usage_lines(report.judges)
    if report.slices:
        lines.append("")
        lines.append(
            "Slices (exploratory; they never gate; a value with fewer than "
            f"{report.min_slice_support} observed cases shows no interval)"
        )
        lines += table(
            ["slice", "value", "metric", "estimate", "interval", "evidence"],
            [
                [s.slice, s.value, s.metric.criterion, *metric_cells(s.metric, report.level)]
                for s in report.slices
            ],
        )
    return lines


def judge_rule_line(rule_id: str, metric: str, judge: Mapping[str, Any]) -> str:
    """One line under the rules table: the calibration a judge rule relied on, or its absence."""
    address = judge.get("calibration")
    if not isinstance(address, str):
        return (
            f"Judge of {rule_id}: no calibration of this exact judge; record one with: "
            f"oloproof calibrate --evaluator {metric} --labels FILE"
        )
    parts = []
    for name in ("sensitivity", "specificity"):
        rate = judge.get(name)
        if not isinstance(rate, Mapping):
            continue
        text = f"{name} ≥ {_floor_percent(float(rate['lower']))} ({rate['k']}/{rate['n']})"
        minimum = judge.get(f"min_{name}")
        if minimum is not None:
            text += f", needs {fmt_percent(float(minimum))}"
        parts.append(text)
    return f"Judge of {rule_id}: calibration {short_address(address)}: " + "; ".join(parts)


def short_address(address: str) -> str:
    """An address cut to 12 hex digits: enough to name it (``oloproof inspect`` takes it)."""
    return address[: len("sha256:") + 12]


def _floor_percent(x: float) -> str:
    """A lower bound as a percentage, rounded down to 0.1 (as the display rule rounds bounds)."""
    return f"{math.floor(round(x * 1000, 6)) / 10:.1f}%"


def corrected_lines(rows: Sequence[CorrectedRow]) -> list[str]:
    """The judge metrics corrected for their judges' measured errors, and their calibrations."""
    cells = []
    for row in rows:
        value = "—" if row.estimate is None else fmt_percent(row.estimate)
        interval = fmt_percent_interval(Interval(row.lower, row.upper, row.level, row.method))
        se, sp = row.sensitivity, row.specificity
        evidence = (
            f"{row.successes} / {row.observed} judged pass · sensitivity {se[0]}/{se[1]} · "
            f"specificity {sp[0]}/{sp[1]}"
        )
        cells.append([row.criterion, value, interval, evidence])
    return [
        "Judge metrics corrected for the judge's measured errors (Rogan-Gladen; the interval "
        "carries the calibration's own uncertainty)",
        *table(["metric", "corrected", "interval", "evidence"], cells),
        *(
            f"{row.criterion}: corrected with calibration {short_address(row.calibration)}"
            for row in rows
        ),
    ]


def judge_usage_lines(rows: Sequence[JudgeUsageRow]) -> list[str]:
    """Per judge: this run's calls, tokens and cost, and the judgments reused from the cache."""
    cells = []
    for row in rows:
        calls = f"{row.calls:,}" + (f" + {row.failed:,} failed" if row.failed else "")
        cost = "—" if row.cost is None else format(row.cost, ".6g")
        cells.append(
            [
                row.criterion,
                f"{row.provider} {row.model}",
                calls,
                f"{row.reused:,}",
                f"{row.input_tokens:,}",
                f"{row.output_tokens:,}",
                cost,
            ]
        )
    lines = [
        "Judges (tokens and cost of this run's calls; a judgment reused from the cache was paid "
        "for by the run that made it)",
        *table(
            ["judge", "model", "calls", "reused", "input tokens", "output tokens", "cost"], cells
        ),
    ]
    for row in rows:
        if row.calls_without_usage:
            lines.append(
                f"{row.criterion}: {row.calls_without_usage} replies reported no token counts"
            )
    return lines


def dry_run_lines(plan: DryRun) -> list[str]:
    """What ``oloproof run --dry-run`` prints."""
    lines = ["Dry run: nothing was executed, judged or recorded."]
    cache = "" if plan.has_ledger else " (no ledger yet, so nothing is cached)"
    lines.append(
        f"Cases: {plan.would_execute} of {plan.cases} would execute; "
        f"{plan.cached} reused from the execution cache{cache}"
    )
    if plan.judges:
        lines.append("Judge calls after the judgment cache:")
        lines += [f"  {_judge_calls(judge)}" for judge in plan.judges]
    else:
        lines.append("Judge calls: none (no LLM judge is configured)")
    if plan.judge_rules:
        lines.append("Judge rules:")
    for rule in plan.judge_rules:
        if rule.outcome is None:
            lines.append(
                f"  {rule.rule_id} ({rule.metric}): calibration {_short(rule.calibration)} clears "
                "the rule's minimums; the rule will decide on the metric"
            )
        elif rule.calibration is None:
            lines.append(
                f"  {rule.rule_id} ({rule.metric}): no calibration of this exact judge; the rule "
                f"would decide {rule.outcome} ({rule.reason})"
            )
        else:
            lines.append(
                f"  {rule.rule_id} ({rule.metric}): calibration {_short(rule.calibration)} falls "
                f"short; the rule would decide {rule.outcome} ({rule.reason})"
            )
    return lines


def _short(address: str | None) -> str:
    return "(none)" if address is None else short_address(address)


def _judge_calls(judge: JudgeCalls) -> str:
    who = judge.criterion
    if judge.provider is not None and judge.model is not None:
        who += f" ({judge.provider} {judge.model})"
    if judge.at_most_more == 0:
        head = f"{judge.calls} call{'' if judge.calls == 1 else 's'}"
    elif judge.calls == 0:
        head = f"at most {judge.at_most} calls, one per case that would execute"
    else:
        head = (
            f"at most {judge.at_most} calls ({judge.calls} on cached outputs, at most "
            f"{judge.at_most_more} for the cases that would execute)"
        )
    tail = f"{judge.reused} reused from the judgment cache"
    if judge.without_call:
        tail += f", {judge.without_call} decided without a call"
    return f"{who}: {head}; {tail}"


def preview(value: Any, limit: int = OUTPUT_PREVIEW) -> str:
    """A value as one line of JSON, cut at ``limit`` characters with an ellipsis."""
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 1] + "…"
