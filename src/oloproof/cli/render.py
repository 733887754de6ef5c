"""Text rendering of reports: boxed tables, metric rows, the run report."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from oloproof.display import fmt_mean, fmt_mean_interval, fmt_percent, fmt_percent_interval
from oloproof.report import MetricRow, RunReport
from oloproof.results import Interval

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


def preview(value: Any, limit: int = OUTPUT_PREVIEW) -> str:
    """A value as one line of JSON, cut at ``limit`` characters with an ellipsis."""
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 1] + "…"
