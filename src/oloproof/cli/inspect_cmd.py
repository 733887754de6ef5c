"""``oloproof inspect`` and ``export``: read what the ledger holds."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from ledger import Event, Ledger
from oloproof import events as ev
from oloproof.cli import style
from oloproof.cli.main import app
from oloproof.cli.pretty import PLAIN_WIDTH, fold_under, section
from oloproof.cli.project import keep_out_declared, project_ledger, project_root
from oloproof.cli.render import (
    fitted,
    judgment_lines,
    preview,
    problem_word,
    run_report_lines,
)
from oloproof.display import an_event, first_few, fmt_mean, plural, printable
from oloproof.errors import UnknownIdError
from oloproof.latest import LATEST, latest_note, resolve_latest
from oloproof.report import observed_repeats_text, repeats_text
from oloproof.store import resolve_name
from oloproof.suggest import did_you_mean

if TYPE_CHECKING:
    from oloproof.inspect import CaseDetail
    from oloproof.stored_runs import StoredRun

# Other commands add renderers for the event types they own (diagnosis, comparison).
Renderer = Callable[[Ledger, str, Event, bool], int]
RENDERERS: dict[str, Renderer] = {}


def _resolve(ledger: Ledger, text: str) -> str:
    if text == LATEST:
        note_latest(ledger, text)
        return resolve_latest(ledger)
    commits, head = ledger.head()
    if text == head and not ledger.has(text):  # printed by verify, import and compact
        raise UnknownIdError(
            f"{head} is this ledger's chain head (commit {commits}), not an event: it covers "
            f"every event committed up to it; check it with: oloproof verify --head {head}"
        )
    return resolve_name(ledger, text)


def note_latest(ledger: Ledger, *names: str) -> None:
    """On stderr: when ``latest`` is among ``names`` and the newest run did not finish, say so."""
    if LATEST in names:
        note = latest_note(ledger)
        if note is not None:
            sys.stderr.write(note + "\n")


@app.command("inspect")
def inspect_command(
    id: str = typer.Argument(..., help="An address, a unique prefix (≥ 8 hex digits) or a ref."),
    case: str | None = typer.Option(
        None, "--case", help="Show one case of a run in full, indented and folded to fit."
    ),
    show_failures: bool = typer.Option(False, "--failures", help="List a run's failed cases."),
    criterion: list[str] = typer.Option(
        [],
        "--criterion",
        metavar="NAME",
        help="With --failures: only the cases that failed (or are missing) on this criterion; "
        "repeat it for several.",
    ),
    slices: bool = typer.Option(
        False, "--slices", help="List every slice row of a run's report, however many."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print as JSON (the raw form)."),
) -> None:
    """Show any event by address, prefix or ref, with the addresses it links to.

    Example: oloproof inspect run_01M4FCBPE0G550CKCVGXCNEM2P --failures --criterion answer_correct
    """
    if criterion and not show_failures:
        raise UnknownIdError("--criterion narrows --failures; give --failures with it")
    if case is not None and show_failures:
        raise UnknownIdError(
            "--case shows one case and --failures lists the failed ones; give one of them"
        )
    if slices and (case is not None or show_failures):
        raise UnknownIdError(
            "--slices lists a run's report slices; it cannot go with --case or --failures, "
            "which show no report"
        )
    keep_out_declared()
    ledger = project_ledger(only_reads=True)
    address = _resolve(ledger, id)
    event = ledger.get(address)
    if event.type == ev.RUN:
        view = _RunView(case, show_failures, criterion, slices, as_json)
        raise typer.Exit(_inspect_run(ledger, address, view))
    if case is not None or show_failures or slices:
        raise UnknownIdError(
            f"{id} is {an_event(event.type)}; --slices, --case and --failures need a run"
        )
    renderer = RENDERERS.get(event.type)
    if renderer is not None:
        raise typer.Exit(renderer(ledger, address, event, as_json))
    _print_event(address, event, as_json)


def _print_event(address: str, event: Event, as_json: bool) -> None:
    data = {
        "address": address,
        "type": event.type,
        "schema": event.schema,
        "body": event.body,
        "refs": list(event.refs),
    }
    if as_json:
        typer.echo(json.dumps(data, indent=2, ensure_ascii=False))
        return
    typer.echo(f"{event.type} (schema {event.schema}) {address}")
    typer.echo(json.dumps(event.body, indent=2, ensure_ascii=False))
    for ref in event.refs:
        typer.echo(f"links to: {ref}")


@dataclass(frozen=True)
class _RunView:
    """What ``inspect`` shows of a run."""

    case: str | None
    failures: bool
    criteria: list[str]
    slices: bool
    as_json: bool


def _inspect_run(ledger: Ledger, address: str, view: _RunView) -> int:
    # Imported here: run reports need the library's heavier modules; --help does not.
    from oloproof.inspect import find_case
    from oloproof.stored_runs import check_run_indexes, load_run, read_run_report

    run = load_run(ledger, address)
    as_json = view.as_json
    if view.case is not None or view.failures:
        check_run_indexes(ledger, run)  # the report checks them as it tallies
    # Verdicts are stored as a canonical (sorted) map; show them in the evaluators' order.
    criteria = [e["criterion"] for e in run.body["evaluators"]]
    if view.case is not None:
        detail = find_case(ledger, run, view.case)
        if as_json:
            typer.echo(json.dumps(detail.to_json(), indent=2, ensure_ascii=False, default=dict))
            return 0
        _print_case(detail, criteria, ledger)
        return 0
    if view.failures:
        _print_failures(ledger, run, criteria, view)
        return 0
    report = read_run_report(ledger, run.run_id)
    if as_json:
        typer.echo(json.dumps(report.to_json(), indent=2))
    else:
        typer.echo(fitted(run_report_lines(report, show_slices=view.slices)))
        typer.echo(f"Run event: {address}")
    return 0


def _print_failures(ledger: Ledger, run: StoredRun, criteria: list[str], view: _RunView) -> None:
    """The failed, errored and unfinished cases, and those missing a verdict, on
    ``view.criteria`` when given."""
    from oloproof.inspect import failures

    for name in view.criteria:
        if name not in criteria:
            raise UnknownIdError(
                f"run {run.run_id} has no criterion {name!r}{did_you_mean(name, criteria)} "
                f"(criteria: {', '.join(criteria)})"
            )
    found = failures(ledger, run)
    failed = found.failed
    if view.criteria:
        failed = [d for d in failed if _fails_on(d, view.criteria)]
        criteria = [c for c in criteria if c in view.criteria]
    if view.as_json:
        listed = {
            "failed": [d.to_json() for d in failed],
            "unfinished": found.unfinished,
            "unfinished_unnamed": found.unnamed,
            "why_unnamed": found.why_unnamed,
        }
        typer.echo(json.dumps(listed, indent=2, default=dict))
        return
    count = len(failed) + len(found.unfinished) + found.unnamed
    on = f" on {', '.join(view.criteria)}" if view.criteria else ""
    shown: list[str] = []
    unjudged = False  # a case shown for verdicts missing alone: it neither failed nor errored
    for detail in failed:
        shown += ["", printable(detail.case_id)]
        if detail.status == "errored" and detail.error is not None:
            shown.append(f"  errored: {_error_text(detail.error)}")
        elif detail.repeats is not None:
            shown += _repeats_problem_lines(detail.repeats)
        else:
            shown.append(f"  output: {preview(detail.output)}")
        problems = [(c, text) for c in criteria if (text := _problem_on(detail, c)) is not None]
        shown += [f"  {c}: {style.current().outcome(text)}" for c, text in problems]
        unjudged = unjudged or (
            not _errored(detail) and all("failed" not in text for _, text in problems)
        )
    missing = ", are missing a verdict" if unjudged else ""
    lines = [f"{count} of {found.planned} cases failed, errored{missing} or did not finish{on}"]
    lines += shown
    for case_id in found.unfinished:
        lines += ["", printable(case_id), "  did not finish"]
    if found.unnamed:
        cases = plural(found.unnamed, "case")
        lines += ["", f"{found.unnamed} {cases} did not finish; ids unknown: {found.why_unnamed}"]
    typer.echo(fitted(lines))  # on a terminal, long previews fold to its width


def _repeats_problem_lines(repeats: list[dict[str, Any]]) -> list[str]:
    """Under a repeated case in the failures: how its repeats went, the first error, and the
    output of its first repeat that ran."""
    from oloproof.repeats import repeat_counts

    counts = repeat_counts(repeats)
    assert counts is not None  # a repeated case has repeats
    lines = [f"  {repeats_text(counts)}"]
    errored = [r for r in repeats if "error" in r]
    if errored:
        first = errored[0]
        error = first["error"]
        lines[0] += f"; repeat {first['repeat']}: {_error_text(error)}"
    ran = next((r for r in repeats if r["status"] == "ok"), None)
    if ran is not None:
        lines.append(f"  output (repeat {ran['repeat']}): {preview(ran['output'])}")
    return lines


def _fails_on(detail: CaseDetail, criteria: list[str]) -> bool:
    """An errored case, or a case with an errored repeat, fails on every criterion; else a
    failed or missing verdict counts (in any repeat)."""
    return _errored(detail) or any(_problem_on(detail, c) is not None for c in criteria)


def _errored(detail: CaseDetail) -> bool:
    """Whether the case, or one of its repeats, errored."""
    if detail.status == "errored":
        return True
    from oloproof.repeats import repeat_counts

    counts = repeat_counts(detail.repeats)
    return counts is not None and counts.errored > 0


def _problem_on(detail: CaseDetail, criterion: str) -> str | None:
    """How the case's verdict on ``criterion`` reads among the problems, its repeats counted
    (``problem_word``); None when it has none, or no problem."""
    verdict = detail.verdicts.get(criterion)
    if verdict is None:
        return None
    repeats = detail.repeats or []
    return problem_word(verdict, ev.failed_repeats(repeats, criterion), len(repeats))


def _print_case(detail: CaseDetail, criteria: list[str], ledger: Ledger) -> None:
    """One case, indented and folded to the terminal (or to 100 columns in a pipe); a repeated
    case with each of its repeats under its combined verdicts."""
    width = style.current().width or PLAIN_WIDTH
    shown = style.current()
    lines = [f"case {printable(detail.case_id)} ({shown.outcome(detail.status)})"]
    lines += section("input", detail.input, width)
    lines += section("expected", detail.expected, width)
    if detail.metadata:
        lines += section("metadata", detail.metadata, width)
    if detail.repeats is not None:
        lines += _repeated_case_lines(detail, criteria, ledger, width)
        lines.append(f"  case result: {detail.address}")
        typer.echo("\n".join(lines))
        return
    if detail.error is not None:
        lines += _error_lines(detail.error, "  ")
    else:
        lines += section("output", detail.output, width)
    lines += _artifact_lines(detail.artifacts, width, 2)
    lines.append("  judgments:")
    lines += _verdict_lines(detail.verdicts, detail.judgments, criteria, ledger, width, "    ")
    lines.append(f"  execution: {detail.execution}")
    lines.append(f"  case result: {detail.address}")
    typer.echo("\n".join(lines))


def _repeated_case_lines(
    detail: CaseDetail, criteria: list[str], ledger: Ledger, width: int
) -> list[str]:
    """The combined verdicts, how the repeats went, then each repeat: its output (or error,
    with its traceback, shown once for repeats that raised alike), artifacts and judgments."""
    from oloproof.repeats import repeat_counts

    repeats = detail.repeats or []
    counts = repeat_counts(repeats)
    assert counts is not None  # a repeated case has repeats
    lines = [f"  judgments (over its {counts.executed} repeats):"]
    lines += _verdict_lines(detail.verdicts, {}, criteria, ledger, width, "    ")
    lines.append(f"  {repeats_text(counts)}")
    tracebacks: dict[str, int] = {}
    for repeat in repeats:
        number = repeat["repeat"]
        lines.append(f"  repeat {number} ({style.current().outcome(repeat['status'])}):")
        error = repeat.get("error")
        if error is not None:
            trace = str(error.get("traceback", "")).rstrip()
            lines += _error_lines({**error, "traceback": ""}, "    ")
            if trace and trace in tracebacks:
                lines.append(f"      (traceback as in repeat {tracebacks[trace]})")
            else:
                lines += [f"      {line}" for line in trace.splitlines()]
                tracebacks.setdefault(trace, number)
        else:
            lines += section("output", repeat["output"], width, indent=4)
        lines += _artifact_lines(repeat["artifacts"], width, 4)
        lines.append("    judgments:")
        verdicts, judgments = repeat["verdicts"], repeat["judgments"]
        lines += _verdict_lines(verdicts, judgments, criteria, ledger, width, "      ")
        lines.append(f"    execution: {repeat['execution']}")
    return lines


def _error_lines(error: Mapping[str, Any], pad: str) -> list[str]:
    """``error: TYPE: MESSAGE`` and its traceback under it."""
    lines = [f"{pad}error: {_error_text(error)}"]
    traceback = str(error.get("traceback", "")).rstrip()
    return lines + [f"{pad}  {printable(line)}" for line in traceback.splitlines()]


def _error_text(error: Mapping[str, Any]) -> str:
    """``TYPE: MESSAGE`` of a recorded error, on one line as the system wrote it."""
    return f"{printable(str(error['type']))}: {printable(str(error['message']))}"


def _artifact_lines(artifacts: Mapping[str, Any], width: int, indent: int) -> list[str]:
    from oloproof.inspect import ordered_artifacts

    lines = []
    for kind, items in ordered_artifacts(artifacts).items():
        lines += section(kind, items[0] if len(items) == 1 else items, width, indent=indent)
    return lines


def _verdict_lines(
    verdicts: Mapping[str, Any],
    judgments: Mapping[str, str],
    criteria: list[str],
    ledger: Ledger,
    width: int,
    pad: str,
) -> list[str]:
    """One line per criterion (``answer_correct: passed  sha256:…``), with why a missing
    verdict is missing under it; a combined verdict that leaves out repeats says how many."""
    shown = style.current()
    lines = []
    for criterion in criteria:
        verdict = verdicts.get(criterion)
        if verdict is None:
            continue
        status = verdict["s"]
        text = {"pass": "passed", "fail": "failed"}.get(status, status)
        if status == "value":
            text = fmt_mean(float(verdict["v"]))
        text = shown.outcome(text)
        if "r" in verdict:
            text += f" ({verdict['r']})"
        repeats = observed_repeats_text(verdict)
        if repeats is not None:
            text += f" ({repeats})"
        addr = judgments.get(criterion)
        lines.append(f"{pad}{criterion}: {text}" + (f"  {addr}" if addr else ""))
        if addr and status == "missing":
            for line in judgment_lines(ledger.get(addr).body.get("detail") or {}):
                lines += fold_under(pad + "  ", line, width)
    return lines


@app.command("export")
def export_command(
    id: str = typer.Argument(..., help="The run to export (id, ref or address)."),
    fmt: str | None = typer.Option(
        None,
        "--format",
        metavar="jsonl|csv|parquet|trec",
        help="Write tables instead of the bundle: verdicts (one row per case and criterion) "
        "and cases (one row per case), or TREC run and qrels files for trec_eval.",
    ),
    output: Path | None = typer.Option(
        None, "--output", help="With --format: the folder to write into (created if needed)."
    ),
) -> None:
    """Write a run's cases, outputs, artifacts and verdicts to .oloproof/bundles/RUN_ID/, or
    as tables other tools read (--format; see docs/export.md).

    Example: oloproof export run_01M4FCBPE0G550CKCVGXCNEM2P --format parquet --output results
    """
    from oloproof.inspect import export_run
    from oloproof.run_list import run_row
    from oloproof.stored_runs import check_run_indexes, load_run

    keep_out_declared()
    ledger = project_ledger(only_reads=True)
    run = load_run(ledger, id)
    check_run_indexes(ledger, run)
    row = run_row(ledger, run.address, run.body)
    if fmt is None:
        if output is not None:
            raise UnknownIdError("--output names where --format writes; give --format with it")
        folder = export_run(ledger, run, project_root(), row)
        typer.echo(f"Exported {run.run_id} to {folder}")
    else:
        from oloproof.tabular import export_tables

        written, unranked = export_tables(ledger, run, fmt, output or Path(f"{run.run_id}-{fmt}"))
        typer.echo(f"Exported {run.run_id} as {fmt}: " + ", ".join(str(p) for p in written))
        if unranked:  # trec_eval's mean would otherwise leave them out without a word
            typer.echo(
                f"warning: {len(unranked)} labelled {plural(len(unranked), 'case')} "
                f"({first_few(unranked, 5)}) {'has' if len(unranked) == 1 else 'have'} no "
                "ranking in run.trec (errored, or no retrieval recorded, or an empty one): "
                "trec_eval averages over the queries of run.trec alone unless given -c, which "
                "counts each as retrieving nothing",
                err=True,
            )
    if row.not_run:  # the export holds what ran; say what it cannot hold
        # Tables give each such case a row of its own (status not_run); a bundle or TREC files
        # have no place for one.
        told = (
            "; the tables list them with status not_run"
            if fmt in ("jsonl", "csv", "parquet")
            else ", so nothing of them is exported"
        )
        typer.echo(
            f"warning: {run.run_id} is {row.execution_state}: {row.not_run} of its "
            f"{row.planned} planned cases did not run{told}",
            err=True,
        )
