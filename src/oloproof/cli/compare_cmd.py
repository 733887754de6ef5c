"""``oloproof compare``: pair two runs case by case, decide a comparison policy, print it.

The lines are built from the comparison event's body alone, so ``oloproof inspect`` on the
comparison's address prints exactly what ``compare`` printed.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from ledger import Event, Ledger
from oloproof import events as ev
from oloproof.cli import style
from oloproof.cli.inspect_cmd import RENDERERS, note_latest
from oloproof.cli.main import app
from oloproof.cli.project import keep_out_declared, project_ledger
from oloproof.cli.render import fitted, gate_line, judge_rule_line
from oloproof.display import fmt_points, fmt_points_interval, fmt_written, plural, printable
from oloproof.flips import Flip, changed_cases_line, flipped_cases
from oloproof.report import (
    JUDGED_DIFFERENTLY,
    comparison_evidence_line,
    comparison_rule_note,
    counted_text,
    left_out_of_slices,
    level_line,
    planning_text,
    repeated_pairs_line,
    rule_margins,
    slice_text,
    unpaired_lines,
)
from oloproof.results import Interval

if TYPE_CHECKING:
    from oloproof.latest import StillRunning

_TESTS = {
    "non_inferiority": "non-inferiority",
    "superiority": "superiority",
    "equivalence": "equivalence",
}


@app.command("compare")
def compare_command(
    candidate: str = typer.Argument(..., help="The candidate run: an id, a ref or an address."),
    baseline: str = typer.Argument(..., help="The baseline run it is compared against."),
    policy: Path | None = typer.Option(
        None, "--policy", help="A comparison policy file (rules on the paired differences)."
    ),
    slices: bool = typer.Option(
        False, "--slices", help="List the exploratory slice differences (they never gate)."
    ),
    cases: bool = typer.Option(
        False,
        "--cases",
        help="List the cases whose verdict changed, with both verdicts and where to see them.",
    ),
    as_json: bool = typer.Option(
        False, "--json", help="Print the comparison as JSON (with the changed cases)."
    ),
    junit: Path | None = typer.Option(
        None, "--junit", help="Also write a JUnit XML report to FILE: one test per rule."
    ),
    summary: Path | None = typer.Option(
        None,
        "--summary",
        help="Also write a Markdown summary to FILE (a pull request comment, or "
        "$GITHUB_STEP_SUMMARY).",
    ),
) -> None:
    """Compare a candidate run with a baseline run, case by case, and decide a policy.

    Exit code: 0 the gate passes (or no policy), 1 a rule FAILed, 3 the gate blocks without a
    FAIL, 2 bad input.

    Example: oloproof compare CANDIDATE_RUN_ID BASELINE_RUN_ID --policy compare.yaml --cases
    """
    from oloproof.cli.ci import check_paths, reports_if_stopped, write_file

    check_paths(junit, summary)  # refused before the comparison is recorded, not after
    with reports_if_stopped(junit, summary, "compare"):
        keep_out_declared()
        ledger = project_ledger()
        from oloproof.compare import compare_runs

        note_latest(ledger, candidate, baseline)

        comparison = compare_runs(ledger, candidate, baseline, policy_path=policy)
        address, body = comparison.address, comparison.body
        running = _still_running(ledger, body)
        for run in running:
            # The missing cases count against it as any run's do, so a gate reads what was
            # written; the note says the comparison is of a run that is not done.
            sys.stderr.write(
                f"note: {run.text()}; this comparison reads the cases written so far\n"
            )
        for role, text in _unfinished(ledger, body):
            # A run that ended before all its cases ran pairs only those it holds: the rest
            # read as "only in" the other run, which alone would not say why.
            sys.stderr.write(
                f"note: the {role}, {text}; the cases it did not run count as missing\n"
            )
        flips = flipped_cases(ledger, body) if (as_json or cases or summary) else []
        if junit is not None or summary is not None:
            from oloproof.cli.ci_compare import comparison_junit, comparison_summary

            if junit is not None:
                write_file(junit, comparison_junit(address, body))
            if summary is not None:
                write_file(summary, comparison_summary(address, body, flips))
    style.decided(comparison.exit_code)
    if as_json:
        typer.echo(comparison_json(address, body, flips, running))
    else:
        lines = comparison_lines(address, body, slices)
        if cases:
            lines = _with_flips(lines, flips)
        typer.echo(fitted(lines))
    raise typer.Exit(comparison.exit_code)


def _still_running(ledger: Ledger, body: Mapping[str, Any]) -> list[StillRunning]:
    """The compared runs a live process is writing now (the candidate's first)."""
    from oloproof.latest import still_running
    from oloproof.stored_runs import load_run

    found: list[StillRunning] = []
    for role in ("candidate", "baseline"):
        run = still_running(ledger, load_run(ledger, body[role]["run_id"]).body)
        if run is not None and run not in found:
            found.append(run)
    return found


def _unfinished(ledger: Ledger, body: Mapping[str, Any]) -> list[tuple[str, str]]:
    """``(role, what)`` for each compared run that ended before all its cases ran and that no
    process is writing now (``latest.unfinished_text``)."""
    from oloproof.latest import unfinished_text
    from oloproof.stored_runs import load_run

    found: dict[str, tuple[str, str]] = {}
    for role in ("candidate", "baseline"):
        run = load_run(ledger, body[role]["run_id"])
        text = unfinished_text(ledger, run.body)
        if text is not None:
            found.setdefault(run.run_id, (role, text))
    return list(found.values())


def _with_flips(lines: list[str], flips: Sequence[Flip]) -> list[str]:
    """The comparison's lines with the changed cases before its decisions."""
    at = lines.index("Decisions") if "Decisions" in lines else len(lines)
    return [*lines[:at], *flip_lines(flips), *lines[at:]]


def flip_lines(flips: Sequence[Flip]) -> list[str]:
    """``Changed cases: 1 improved, 0 regressed`` and one line per changed case."""
    return [
        changed_cases_line(flips),
        *(
            f"  {f.metric}  {printable(f.case_id)}  {f.baseline} → {f.candidate}  "
            f"{f.direction_text}  {f.candidate_case} · {f.baseline_case}"
            for f in flips
        ),
    ]


def _render_comparison(ledger: Ledger, address: str, event: Event, as_json: bool) -> int:
    """``oloproof inspect`` on a comparison: the same text (or JSON) as ``compare`` printed."""
    if as_json:
        typer.echo(comparison_json(address, event.body, flipped_cases(ledger, event.body)))
    else:
        typer.echo(fitted(comparison_lines(address, event.body)))
    return 0


RENDERERS[ev.COMPARISON] = _render_comparison


def comparison_json(
    address: str,
    body: Mapping[str, Any],
    flips: Sequence[Flip] = (),
    running: Sequence[StillRunning] = (),
) -> str:
    """The comparison as JSON: its address, its recorded body, and the cases that changed
    (``flipped``: derived from the two runs, not recorded). ``compare`` adds the runs another
    process was still writing as it compared (``still_running``), when there are any: a
    comparison of two ended runs prints as ``inspect`` prints it later."""
    data = {"address": address, **body, "flipped": [f.to_json() for f in flips]}
    if running:
        data["still_running"] = [run.to_json() for run in running]
    return json.dumps(data, indent=2, ensure_ascii=False, sort_keys=True)


# ----------------------------------------------------------------------------------- lines


def comparison_lines(address: str, body: Mapping[str, Any], show_slices: bool = False) -> list[str]:
    """The printed comparison, from the recorded body alone."""
    paired = int(body["paired_cases"])
    lines = [
        f"Comparison {address} of {body['candidate']['run_id']} against "
        f"{body['baseline']['run_id']} · {paired} paired {plural(paired, 'case')}"
    ]
    lines += unpaired_lines(body)
    repeated = repeated_pairs_line(body)
    if repeated is not None:
        lines.append(repeated)
    level = level_line(float(body["level"]))
    if level is not None:
        lines.append(level)
    for row in body["metrics"]:
        lines += _metric_lines(row, rule_margins(body, row["metric"]))
    lines += [f"not compared: {n['metric']} (only in {n['only_in']})" for n in body["not_compared"]]
    lines += _slice_lines(
        body["slices"], int(body["min_slice_support"]), show_slices, left_out_of_slices(body)
    )
    if body["gate"] is not None:
        lines.append("Decisions")
        for decision in body["decisions"]:
            lines += _decision_lines(decision)
        label = "BLOCK" if body["gate"]["blocked"] else "PASS"
        lines.append(gate_line(label, int(body["gate"]["exit_code"])))
        evidence = comparison_evidence_line(body)
        if evidence is not None:
            lines.append(evidence)
    return lines


def _interval(row: Mapping[str, Any], margins: Sequence[float] = ()) -> str:
    return fmt_points_interval(Interval(row["lower"], row["upper"], 0.0, ""), margins)


def _metric_lines(row: Mapping[str, Any], margins: Sequence[float]) -> list[str]:
    """A metric's row and what it counts; ``margins``: its rules' (``rule_margins``)."""
    tail = f"{row['missing']} missing · {row['excluded']} excluded"
    diff = row["difference"]
    if diff is None:
        first = f"{row['metric']}: no paired cases · {tail}"
    else:
        first = (
            f"{row['metric']}: {fmt_points(diff['estimate'])} {_interval(diff, margins)} · "
            f"{row['paired']} paired · {tail}"
        )
    lines = [first]
    counted = counted_text(row, margins)
    if counted is not None:
        lines.append(f"  {counted}")
    repeats: Mapping[str, int] = row.get("missing_repeats") or {}
    unjudged = sum(repeats.values())
    lines += [f"  missing {n}: {r}" for r, n in sorted(row["missing_reasons"].items())]
    if unjudged:
        cases = int(row["partial"])
        lines.append(
            f"  repeats without a verdict {unjudged}: {repeats['candidate']} in the candidate, "
            f"{repeats['baseline']} in the baseline, of {cases} paired {plural(cases, 'case')}"
        )
    lines += [f"  excluded {n}: {r}" for r, n in sorted(row["excluded_reasons"].items())]
    if not row["same_evaluator"]:
        lines.append(f"  {JUDGED_DIFFERENTLY}")
    return lines


def _slice_lines(
    rows: Sequence[Mapping[str, Any]], support: int, show: bool, left_out: str | None
) -> list[str]:
    """The slice differences; ``left_out``: what their rows do not count
    (``left_out_of_slices``)."""
    if not rows:
        return []
    count = len(rows)
    noun = plural(count, "difference")
    if not show:
        them = "it" if count == 1 else "them"
        said = f" ({left_out})" if left_out else ""
        return [f"{count} exploratory slice {noun} not shown{said}; add --slices to list {them}"]
    never = f"they never gate; {left_out}" if left_out else "they never gate"
    lines = [f"{count} exploratory slice {noun} ({never})"]
    for row in rows:
        if row["supported"]:
            spread = _interval(row)
        else:
            spread = f"(fewer than {support} paired; no interval)"
        lines.append(
            f"  {row['slice']}={slice_text(row['value'])}  {row['metric']}: "
            f"{fmt_points(row['estimate'])} {spread} · {row['paired']} paired"
        )
    return lines


def _decision_lines(decision: Mapping[str, Any]) -> list[str]:
    test = f"{_TESTS[decision['test']]}, margin {fmt_written(decision['margin_points'], 1)} points"
    outcome = style.current().outcome(decision["outcome"])
    lines = [
        "  " + "  ".join([decision["id"], decision["metric"], test, outcome, decision["reason"]])
    ]
    planning = planning_text(decision)
    if planning is not None:
        lines.append("    " + planning)
    note = comparison_rule_note(decision)
    if note is not None:
        lines.append("    " + note)
    judge = decision["detail"].get("judge")
    if isinstance(judge, Mapping):  # as under a run's rules: the calibration, or why none counts
        rule, metric = decision["id"], decision["metric"]
        lines.append("    " + judge_rule_line(rule, metric, judge, "the compared runs'"))
    return lines
