"""Text rendering of reports: boxed tables, metric rows, the run report."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from oloproof.call_totals import totals_text
from oloproof.cli import style, tables
from oloproof.display import (
    fmt_cost,
    fmt_mean,
    fmt_mean_interval,
    fmt_percent,
    fmt_percent_interval,
    fmt_percent_lower,
    fmt_written,
    plural,
    printable,
)
from oloproof.events import is_failed
from oloproof.latest import import_again_text
from oloproof.redaction import redact_text
from oloproof.report import (
    CorrectedRow,
    ErrorGroup,
    JudgeUsageRow,
    MetricRow,
    RunReport,
    errored_summary,
    evidence_line,
    level_line,
    missing_metric_lines,
    repeated_cases_line,
    repeats_errored_summary,
    rule_note,
    slice_text,
    slices_unrun_line,
    uncounted_text,
    usage_left_out_text,
    withdrawn_gate_line,
)
from oloproof.results import Interval
from oloproof.strictjson import kind_named

if TYPE_CHECKING:
    from oloproof.dry_run import DryRun, JudgeCalls

OUTPUT_PREVIEW = 160


def table(
    header: Sequence[str], rows: Sequence[Sequence[str]], outcome_column: int | None = None
) -> list[str]:
    """A boxed table: as wide as its cells when piped, fitted to a terminal's width, with the
    cells of ``outcome_column`` coloured on a terminal (``oloproof.cli.style``)."""
    shown = style.current()

    def paint(column: int, text: str) -> str:
        return shown.outcome(text) if column == outcome_column else text

    return tables.table(
        header,
        rows,
        width=shown.width,
        paint=paint if shown.colour else None,
        whole=() if outcome_column is None else (outcome_column,),
    )


def metric_cells(row: MetricRow, level: float) -> list[str]:
    """Estimate, interval and evidence, as the run report prints them."""
    if row.estimate is None:
        value = "—"
    elif row.proportion:
        value = fmt_percent(row.estimate)
    else:
        value = fmt_mean(row.estimate)
    interval = _interval_text(row.lower, row.upper, row.proportion, level)
    tail = f"{row.missing} missing · {row.excluded} excluded"
    if row.proportion:
        evidence = f"{row.successes} / {row.observed} observed · {tail}"
    else:
        evidence = f"mean of {row.observed} observed · {tail}"
    return [value, interval, evidence]


def _interval_text(lower: float | None, upper: float | None, proportion: bool, level: float) -> str:
    if lower is None or upper is None:
        return "—"
    iv = Interval(lower, upper, level, "")
    return fmt_percent_interval(iv) if proportion else fmt_mean_interval(iv)


def run_report_lines(report: RunReport, show_slices: bool = False) -> list[str]:
    """The run report; ``show_slices`` lists every slice row however many there are."""
    lines = [f"Run {report.run_id} [{report.decision_state}/{report.execution_state}]"]
    if report.subset is not None:
        lines.append(f"Subset: {subset_text(report.subset, report.planned_cases)}")
    if report.repeats > 1:
        lines.append(
            f"Repeats: each case executed {report.repeats} times; a case counts once, as the "
            "mean of its verdicts"
        )
    if report.execution_state == "RUNNING":
        lines.append(
            f"{report.cases} of {report.planned_cases} cases finished so far; "
            "another process is writing the run now"
        )
    if report.execution_state == "INTERRUPTED":
        if report.import_unfinished:
            finish = import_again_text(report.run_id)
        elif report.diagnosis_of is not None:  # refused by --resume: see resuming.resume_plan
            finish = f"a diagnosis's child run is not resumed: diagnose {report.diagnosis_of} again"
        else:
            finish = f"finish it with: oloproof run --resume {report.run_id}"
        lines.append(f"{report.cases} of {report.planned_cases} cases finished; {finish}")
    if report.execution_state == "STOPPED" and report.stop_reason:
        # The message can quote what the system raised: its controls print as their escapes.
        lines.append(f"Stopped: {printable(report.stop_reason)}")
    if report.decision_state == "UNDECIDED":
        lines.append(_undecided_line(report))
    if report.errors:
        lines.append(errored_line(report.run_id, report.planned_cases, report.errors))
    if report.repeat_errors:
        lines.append(repeats_errored_line(report))
    if report.gate_label is not None:
        lines.append(gate_line(report.gate_label, report.exit_code))
        evidence = evidence_line(report)
        if evidence is not None:
            lines.append(evidence)
        lines += table(
            ["rule", "metric", "decision", "reason"],
            [[r.rule_id, r.metric, r.outcome, r.reason] for r in report.rules],
            outcome_column=2,
        )
        lines += [
            judge_rule_line(r.rule_id, r.metric, r.detail["judge"])
            for r in report.rules
            if isinstance(r.detail.get("judge"), Mapping)
        ]
        notes = (rule_note(r.rule_id, r.reason, r.detail) for r in report.rules)
        lines += [note for note in notes if note is not None]
        lines.append("")
    level = level_line(report.level)
    if level is not None:
        lines.append(level)
    lines += table(
        ["metric", "estimate", "interval", "evidence"],
        [[m.criterion, *metric_cells(m, report.level)] for m in report.metrics],
    )
    for row in report.metrics:
        if row.missing:
            lines += missing_metric_lines(row, report.level)
        if row.missing_repeats:
            n = row.missing_repeats
            lines.append(
                f"{row.criterion}: {n} {plural(n, 'repeat')} of observed cases "
                f"{'has' if n == 1 else 'have'} no verdict; the interval counts "
                f"{'it' if n == 1 else 'them'} as failing for the lower bound and passing for "
                "the upper"
            )
    repeated = repeated_cases_line(report)
    if repeated is not None:
        lines.append(repeated)
    ex, jd = report.cache["execution"], report.cache["judgment"]
    lines.append(
        f"Cache: execution {cache_counts(ex)}; judgment {cache_counts(jd)}"
        + uncounted_text(report.uncounted)
    )
    if report.stages is not None:
        r, g = report.stages["retrieve"], report.stages["generate"]
        lines.append(f"Stages: retrieve {r[0]} hit/{r[1]} miss; generate {g[0]} hit/{g[1]} miss")
    if report.model_calls is not None:
        lines.append(totals_text(report.model_calls))
    if report.unseen and _reused(report):
        # Results made before a change the fingerprint cannot see would be reused as current.
        lines.append(unseen_line(report.unseen))
    if report.redacted:
        word = "occurrence" if report.redacted == 1 else "occurrences"
        lines.append(f"Redacted: {report.redacted} {word} of configured secrets")
    if report.corrected:
        lines.append("")
        lines += corrected_lines(report.corrected)
    if report.judges:
        lines.append("")
        lines += judge_usage_lines(report.judges, report.uncounted)
    if report.slices:
        lines.append("")
        lines += slice_lines(report, show_slices)
    return lines


def unseen_line(unseen: list[str]) -> str:
    """What the code fingerprints cannot see, for a run that reused results and a dry run."""
    return (
        "Not seen by the code fingerprint (change system.version when they change): "
        + "; ".join(unseen)
    )


def _reused(report: RunReport) -> bool:
    stages = report.stages or {}
    return report.cache["execution"][0] > 0 or any(hit for hit, _ in stages.values())


SLICE_ROWS_SHOWN = 60
"""A run report lists at most this many slice rows; past it, one line says how many and how to
list them (``--slices``). The guides' examples stay under it."""


def slice_lines(report: RunReport, show_all: bool) -> list[str]:
    """The exploratory slice table, or one line in its place when it is long."""
    count = len(report.slices)
    unrun = slices_unrun_line(report)
    said = [unrun] if unrun else []
    if count > SLICE_ROWS_SHOWN and not show_all:
        names = len({s.slice for s in report.slices})
        values = len({(s.slice, s.value) for s in report.slices})
        return [
            f"{count} exploratory slice rows not shown ({names} "
            f"{'slice' if names == 1 else 'slices'}, {values} values; they never gate); "
            "add --slices to list them",
            *said,
        ]
    return [
        "Slices (exploratory; they never gate; a value with fewer than "
        f"{report.min_slice_support} observed cases shows no interval)",
        *table(
            ["slice", "value", "metric", "estimate", "interval", "evidence"],
            [
                [
                    s.slice,
                    slice_text(s.value),
                    s.metric.criterion,
                    *metric_cells(s.metric, report.level),
                ]
                for s in report.slices
            ],
        ),
        *said,
    ]


def fitted(lines: Sequence[str]) -> str:
    """Lines joined for printing: on a terminal, long text lines fold to its width."""
    return "\n".join(tables.fit_lines(lines, style.current().width))


def gate_line(label: str, exit_code: int) -> str:
    """``Gate: BLOCK (exit 1)``, the verdict coloured on a terminal."""
    return f"Gate: {style.current().outcome(label)} (exit {exit_code})"


def subset_text(subset: Mapping[str, Any], selected: int) -> str:
    """``10 of 200 cases (sample 10, seed 7; metadata.topic=billing)``."""
    from oloproof.subset import Selection

    described = Selection.from_body(subset).describe(selected, int(subset["total"]))
    return described.removeprefix("a subset: ")


def _undecided_line(report: RunReport) -> str:
    if report.execution_state == "STOPPED":
        return "No gate: a stopped run is not decided; fix what stopped it and run again"
    if report.execution_state == "RUNNING":
        return "No gate yet: the run is decided when it ends"
    if report.decided_on is not None:
        return withdrawn_gate_line(report.decided_on, report.cases)
    return "No gate: the run ended before its policy was decided"


def errored_line(
    run_id: str, planned: int, groups: Sequence[ErrorGroup], noun: str = "cases"
) -> str:
    """``100 of 300 cases errored: RuntimeError: boom (first: c0) · oloproof inspect …``
    (``oloproof.report.errored_summary``, with the command that lists them)."""
    return f"{errored_summary(planned, groups, noun)} · oloproof inspect {run_id} --failures"


def repeats_errored_line(report: RunReport) -> str:
    """``60 of 90 repeats errored: RuntimeError: boom (first: c0) · oloproof inspect …``."""
    return f"{repeats_errored_summary(report)} · oloproof inspect {report.run_id} --failures"


def cache_counts(counts: Sequence[int]) -> str:
    """``H hit/M miss``, and ``/S shared`` when a repeated input shared results within the run."""
    text = f"{counts[0]} hit/{counts[1]} miss"
    shared = sum(counts[2:])
    return text + f"/{shared} shared" if shared else text


def judge_rule_line(
    rule_id: str, metric: str, judge: Mapping[str, Any], judged: str = "this run's"
) -> str:
    """One line under the rules table: the calibration a judge rule relied on, or its absence;
    ``judged`` names whose replies the rule read (a comparison's: both runs')."""
    address = judge.get("calibration")
    other = judge.get("other_model")
    if not isinstance(address, str) and isinstance(other, Mapping):
        return (
            f"Judge of {rule_id}: calibration {short_address(str(other['calibration']))} was "
            f"made with replies from {model_names(other['calibrated'])} (as the server named it), "
            f"and {judged} came from {model_names(other['judging'])}, so it does not count for "
            f"this judge; record a new one with: oloproof calibrate --evaluator {metric} "
            "--labels FILE"
        )
    if not isinstance(address, str):
        older = older_code_text(judge.get("older_code"))
        if older is not None:
            return (
                f"Judge of {rule_id}: {older}; record a new one with: "
                f"oloproof calibrate --evaluator {metric} --labels FILE"
            )
        return (
            f"Judge of {rule_id}: no calibration of this exact judge; record one with: "
            f"oloproof calibrate --evaluator {metric} --labels FILE"
        )
    parts = []
    for name in ("sensitivity", "specificity"):
        rate = judge.get(name)
        if not isinstance(rate, Mapping):
            continue
        unanswered = int(rate.get("missing") or 0)
        counts = f"{rate['k']}/{rate['n']}" + (f", {unanswered} unanswered" if unanswered else "")
        text = f"{name} ≥ {fmt_percent_lower(float(rate['lower']))} ({counts})"
        minimum = judge.get(f"min_{name}")
        if minimum is not None:
            # As written, never rounded: a requirement of 0.0504 is not met by a bound of 0.0501,
            # which prints 5.0%, and "needs 5.0%" beside it would read as met.
            text += f", needs {fmt_written(float(minimum), 1, 2)}%"
        parts.append(text)
    if judge.get("beats_chance") is False:
        bounds = " + ".join(
            fmt_percent_lower(float(judge[name]["lower"]))
            for name in ("sensitivity", "specificity")
        )
        parts.append(
            f"not shown better than chance ({bounds} is not above 100%), so its verdicts may "
            "say nothing of the answers"
        )
    return f"Judge of {rule_id}: calibration {short_address(address)}: " + "; ".join(parts)


def model_names(names: Any) -> str:
    """Model names as the server gave them, quoted; a reply that named none is said so."""
    return ", ".join("no model named" if n is None else json.dumps(n) for n in names)


def older_code_text(older: Any) -> str | None:
    """Why a judge's calibration by an older version of the judges' code does not count (the
    ``older_code`` of a judge rule's detail), or None without one."""
    if not isinstance(older, Mapping):
        return None
    return (
        f"calibration {short_address(str(older['calibration']))} was made by version "
        f"{older['version']} of Oloproof's judge code, which read the model's replies "
        "differently, so it does not count for this judge"
    )


def short_address(address: str) -> str:
    """An address cut to 12 hex digits: enough to name it (``oloproof inspect`` takes it)."""
    return address[: len("sha256:") + 12]


def corrected_lines(rows: Sequence[CorrectedRow]) -> list[str]:
    """The judge metrics corrected for their judges' measured errors, and their calibrations."""
    cells = []
    for row in rows:
        value = "—" if row.estimate is None else fmt_percent(row.estimate)
        interval = fmt_percent_interval(Interval(row.lower, row.upper, row.level, row.method))
        se, sp = row.sensitivity, row.specificity
        missing = f" · {row.missing} missing" if row.missing else ""
        unanswered = f" · {row.unanswered} unanswered in the calibration" if row.unanswered else ""
        evidence = (
            f"{row.successes} / {row.observed} judged pass{missing} · sensitivity "
            f"{se[0]}/{se[1]} · specificity {sp[0]}/{sp[1]}{unanswered}"
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


def judge_usage_lines(rows: Sequence[JudgeUsageRow], uncounted: int = 0) -> list[str]:
    """Per judge: this run's calls, tokens and cost, and the judgments reused from the cache."""
    cells = []
    for row in rows:
        calls = f"{row.calls:,}" + (f" + {row.failed:,} failed" if row.failed else "")
        cost = "—" if row.cost is None else fmt_cost(row.cost)
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
        f"for by the run that made it){uncounted_text(uncounted)}",
        *table(
            ["judge", "model", "calls", "reused", "input tokens", "output tokens", "cost"], cells
        ),
    ]
    return lines + [text for row in rows if (text := usage_left_out_text(row)) is not None]


def dry_run_lines(plan: DryRun) -> list[str]:
    """What ``oloproof run --dry-run`` prints."""
    lines = ["Dry run: nothing was executed, judged or recorded."]
    if plan.subset is not None:
        lines.append(f"Subset: {subset_text(plan.subset, plan.cases)}")
    cache = "" if plan.has_ledger else " (no ledger yet, so nothing is cached)"
    shared = f"; {plan.shared} share the execution of a repeated input" if plan.shared else ""
    counted = f"Cases: {plan.would_execute} of {plan.cases} would execute"
    if plan.repeats > 1:
        lines.append(
            f"Repeats: each case executed {plan.repeats} times; a case counts once, as the "
            "mean of its verdicts"
        )
        counted = (
            f"Executions: {plan.would_execute} of {plan.cases * plan.repeats} would execute "
            f"({plan.cases} cases × {plan.repeats} repeats)"
        )
    lines.append(f"{counted}; {plan.cached} reused from the execution cache{shared}{cache}")
    lines += [f"  {r.count} executions: {r.reason}" for r in plan.execution_reasons]
    if plan.retrievals is not None:
        run, reused = plan.retrievals
        lines.append(
            f"Retrievals: {run} of {plan.would_execute} would run; {reused} reused from the "
            "stage cache"
        )
        lines += [f"  {r.count} retrievals: {r.reason}" for r in plan.retrieval_reasons]
        lines.append(
            f"Generations: at most {plan.generations_at_most} would run (a generation is keyed "
            "on its context, known only once its retrieval is)"
        )
    if plan.unseen:
        lines.append(unseen_line(plan.unseen))
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
        elif rule.calibration is None and rule.older_code is not None:
            lines.append(
                f"  {rule.rule_id} ({rule.metric}): {older_code_text(rule.older_code)}; the rule "
                f"would decide {rule.outcome} ({rule.reason}) until it is calibrated again"
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


REPLY_PREVIEW = 300


def judgment_lines(detail: Mapping[str, Any]) -> list[str]:
    """What a missing judgment's detail says happened: the error, the parse error, the reply."""
    lines = []
    if isinstance(detail.get("error"), str):
        lines.append(f"error: {detail['error']}")
    elif "field" in detail and "message" not in detail:  # an output without text where read
        lines.append(_no_text(detail["field"], detail.get("type")))
    elif isinstance(detail.get("type"), str):  # an evaluator that raised, or ran out of time
        message = str(detail.get("message") or "")
        lines.append(f"error: {detail['type']}" + (f": {message}" if message else ""))
    if isinstance(detail.get("parse_error"), str):
        lines.append(f"parse error: {detail['parse_error']}")
    usage = detail.get("usage")
    whole, alone = detail.get("prompt_tokens_estimate"), detail.get("instructions_tokens_estimate")
    if isinstance(usage, Mapping) and isinstance(whole, int):
        lines.append(
            f"input tokens: {usage.get('input_tokens')} reported; the prompt takes about "
            f"{whole}, the instructions alone about {alone}"
        )
    if isinstance(detail.get("raw_reply"), str):
        whole = detail.get("raw_reply_chars")
        size = f" ({whole:,} characters; stored: the first 4,000)" if isinstance(whole, int) else ""
        lines.append(f"reply{size}: {preview(detail['raw_reply'], REPLY_PREVIEW)}")
    # A judge's error or parse error is its service's text: one line each, as errors print.
    return [printable(line) for line in lines]


def _no_text(field: object, kind: object) -> str:
    """``the output has no 'answer'`` or ``the output's 'answer' is a number, not text``."""
    if not isinstance(kind, str):
        return f"the output has no {field!r}"
    where = "the output" if field is None else f"the output's {field!r}"
    return f"{where} is {kind_named(kind)}, not text"


def preview(value: Any, limit: int = OUTPUT_PREVIEW) -> str:
    """A value as one line of JSON, cut at ``limit`` characters with an ellipsis; a mark
    that reorders text or a line separator in it (which JSON leaves as they are) written as
    its escape (``printable``). Redacted before it is cut: a secret declared after the run was
    stored whole, and a cut through it would leave a part that no redaction finds."""
    text = printable(redact_text(json.dumps(value, ensure_ascii=False)))
    return text if len(text) <= limit else text[: limit - 1] + "…"


def problem_word(verdict: Mapping[str, Any], failed: int = 0, executed: int = 0) -> str | None:
    """How a stored verdict reads in a list of problems: ``failed`` (a fail, or a graded 0),
    ``missing (REASON)``, or None for a verdict that is no problem.

    A repeated case's verdict (``failed`` of its ``executed`` repeats failed the criterion)
    says what its combined value would leave unsaid: ``failed in 1 of 3 repeats`` when that
    value is no fail (the case passed its other repeats), and ``missing in 2 of 3 repeats`` for
    repeats without a verdict (after ``failed;`` when the repeats it has all failed).
    """
    if verdict["s"] == "missing":
        return f"missing ({verdict.get('r', 'unknown')})"
    missing = int(verdict.get("m", 0))
    total = executed or missing + int(verdict.get("n", 0))
    words = []
    if is_failed(verdict):
        words.append("failed")
    elif failed:
        words.append(f"failed in {failed} of {total} repeats")
    if missing:
        words.append(f"missing in {missing} of {total} repeats")
    return "; ".join(words) or None
