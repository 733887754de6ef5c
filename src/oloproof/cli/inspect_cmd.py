"""``oloproof inspect`` and ``export``: read what the ledger holds."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import typer

from ledger import Event, Ledger, LedgerError
from oloproof import events as ev
from oloproof.cli.main import app
from oloproof.cli.project import project_ledger, project_root
from oloproof.cli.render import judgment_lines, preview, run_report_lines
from oloproof.errors import UnknownIdError
from oloproof.latest import LATEST, latest_note, resolve_latest

if TYPE_CHECKING:
    from oloproof.inspect import CaseDetail

# Other commands add renderers for the event types they own (diagnosis, comparison).
Renderer = Callable[[Ledger, str, Event, bool], int]
RENDERERS: dict[str, Renderer] = {}


def _resolve(ledger: Ledger, text: str) -> str:
    if text == LATEST:
        note_latest(ledger, text)
        return resolve_latest(ledger)
    try:
        return ledger.resolve(text)
    except LedgerError as exc:
        raise UnknownIdError(str(exc)) from None


def note_latest(ledger: Ledger, *names: str) -> None:
    """On stderr: when ``latest`` is among ``names`` and the newest run did not finish, say so."""
    if LATEST in names:
        note = latest_note(ledger)
        if note is not None:
            sys.stderr.write(note + "\n")


@app.command("inspect")
def inspect_command(
    id: str = typer.Argument(..., help="An address, a unique prefix (≥ 8 hex digits) or a ref."),
    case: str | None = typer.Option(None, "--case", help="Show one case of a run in full."),
    show_failures: bool = typer.Option(False, "--failures", help="List a run's failed cases."),
    as_json: bool = typer.Option(False, "--json", help="Print as JSON."),
) -> None:
    """Show any event by address, prefix or ref, with the addresses it links to.

    Example: oloproof inspect run_01M4FCBPE0G550CKCVGXCNEM2P --failures
    """
    ledger = project_ledger()
    address = _resolve(ledger, id)
    event = ledger.get(address)
    if event.type == ev.RUN:
        raise typer.Exit(_inspect_run(ledger, address, case, show_failures, as_json))
    if case is not None or show_failures:
        raise UnknownIdError(f"{id} is a {event.type} event; --case and --failures need a run")
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


def _inspect_run(
    ledger: Ledger, address: str, case: str | None, show_failures: bool, as_json: bool
) -> int:
    # Imported here: run reports need the library's heavier modules; --help does not.
    from oloproof.inspect import failures, find_case
    from oloproof.runner import load_run, read_run_report

    run = load_run(ledger, address)
    # Verdicts are stored as a canonical (sorted) map; show them in the evaluators' order.
    criteria = [e["criterion"] for e in run.body["evaluators"]]
    if case is not None:
        detail = find_case(ledger, run, case)
        if as_json:
            typer.echo(json.dumps(detail.__dict__, indent=2, ensure_ascii=False, default=dict))
            return 0
        _print_case(detail, criteria, ledger)
        return 0
    if show_failures:
        failed, unfinished, planned = failures(ledger, run)
        if as_json:
            typer.echo(
                json.dumps(
                    {"failed": [d.__dict__ for d in failed], "unfinished": unfinished},
                    indent=2,
                    default=dict,
                )
            )
            return 0
        count = len(failed) + len(unfinished)
        typer.echo(f"{count} of {planned} cases failed, errored or did not finish")
        for detail in failed:
            typer.echo("")
            typer.echo(detail.case_id)
            if detail.status == "errored" and detail.error is not None:
                typer.echo(f"  errored: {detail.error['type']}: {detail.error['message']}")
            else:
                typer.echo(f"  output: {preview(detail.output)}")
            for criterion in criteria:
                verdict = detail.verdicts.get(criterion)
                text = None if verdict is None else _verdict_text(verdict)
                if text is not None:
                    typer.echo(f"  {criterion}: {text}")
        for case_id in unfinished:
            typer.echo("")
            typer.echo(case_id)
            typer.echo("  did not finish")
        return 0
    report = read_run_report(ledger, run.run_id)
    if as_json:
        typer.echo(json.dumps(report.to_json(), indent=2))
    else:
        typer.echo("\n".join(run_report_lines(report)))
        typer.echo(f"Run event: {address}")
    return 0


def _verdict_text(verdict: Mapping[str, Any]) -> str | None:
    status = verdict["s"]
    if status == "fail" or (status == "value" and verdict.get("v") == 0.0):
        return "failed"
    if status == "missing":
        return f"missing ({verdict.get('r', 'unknown')})"
    return None


def _print_case(detail: CaseDetail, criteria: list[str], ledger: Ledger) -> None:
    typer.echo(f"case {detail.case_id} ({detail.status})")
    typer.echo(f"  input: {json.dumps(detail.input, ensure_ascii=False)}")
    typer.echo(f"  expected: {json.dumps(detail.expected, ensure_ascii=False)}")
    if detail.metadata:
        typer.echo(f"  metadata: {json.dumps(detail.metadata, ensure_ascii=False)}")
    if detail.error is not None:
        typer.echo(f"  error: {detail.error['type']}: {detail.error['message']}")
        for line in detail.error.get("traceback", "").rstrip().splitlines():
            typer.echo(f"    {line}")
    else:
        typer.echo(f"  output: {json.dumps(detail.output, ensure_ascii=False)}")
    for kind, items in detail.artifacts.items():
        for item in items:
            typer.echo(f"  {kind}: {json.dumps(item, ensure_ascii=False)}")
    typer.echo("  judgments:")
    for criterion in criteria:
        verdict = detail.verdicts.get(criterion)
        if verdict is None:
            continue
        status = verdict["s"]
        text = {"pass": "passed", "fail": "failed"}.get(status, status)
        if status == "value":
            text = f"{verdict['v']:.3f}"
        if "r" in verdict:
            text += f" ({verdict['r']})"
        addr = detail.judgments.get(criterion)
        typer.echo(f"    {criterion}: {text}" + (f"  {addr}" if addr else ""))
        if addr and status == "missing":
            for line in judgment_lines(ledger.get(addr).body.get("detail") or {}):
                typer.echo(f"      {line}")
    typer.echo(f"  execution: {detail.execution}")
    typer.echo(f"  case result: {detail.address}")


@app.command("export")
def export_command(
    id: str = typer.Argument(..., help="The run to export (id, ref or address)."),
) -> None:
    """Write a run's cases, outputs, artifacts and verdicts to .oloproof/bundles/RUN_ID/.

    Example: oloproof export run_01M4FCBPE0G550CKCVGXCNEM2P
    """
    from oloproof.inspect import export_run
    from oloproof.runner import load_run

    ledger = project_ledger()
    run = load_run(ledger, id)
    folder = export_run(ledger, run, project_root())
    typer.echo(f"Exported {run.run_id} to {folder}")
