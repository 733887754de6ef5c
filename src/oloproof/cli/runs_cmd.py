"""``oloproof runs``: the runs in this project's ledger, what state each is in and how it gated."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import typer

from oloproof.cli.main import app
from oloproof.cli.project import keep_out_declared, project_ledger
from oloproof.cli.render import fitted, short_address, subset_text

if TYPE_CHECKING:
    from ledger import Ledger
    from oloproof.run_list import RunRow


@app.command("runs")
def runs_command(
    show_all: bool = typer.Option(
        False, "--all", help="Also list diagnosis child runs, each under its diagnosis."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print as JSON."),
) -> None:
    """List the runs in this project's ledger, newest first: state, gate, evidence and code.

    Each line: run id, start time, system, state (COMPLETE, PARTIAL when cases or repeats
    errored, INTERRUPTED, STOPPED, or RUNNING while a process writes it), the gate and its exit
    code (or why there is none), how many cases were answered (ran without error) and how many
    are missing and why (with --repeats, how many repeats errored), and the system's code
    fingerprint. A metric may still lack a verdict on an answered case: inspect says so.
    Diagnosis child runs are left out unless --all is given.

    Example: oloproof runs --all
    """
    from oloproof.run_list import run_rows

    keep_out_declared()
    ledger = project_ledger(only_reads=True)
    rows = run_rows(ledger)
    top = [row for row in rows if row.child_of is None]
    if as_json:
        shown = rows if show_all else top
        typer.echo(json.dumps([row.to_json() for row in shown], indent=2))
        return
    if not top and not (show_all and rows):
        typer.echo("no runs yet")
        return
    # On a terminal, a run's line folds to its width; in a pipe it stays one line.
    typer.echo(fitted(_listing(ledger, rows, top, show_all)))


def _listing(ledger: Ledger, rows: list[RunRow], top: list[RunRow], show_all: bool) -> list[str]:
    from oloproof.run_list import diagnosis_groups

    out: list[str] = []
    children: dict[str, dict[str, RunRow]] = {}
    for row in rows:
        if row.child_of is not None:
            children.setdefault(row.child_of, {})[row.run_id] = row
    for row in top:
        out.append(run_line(row))
        if not show_all or row.run_id not in children:
            continue
        groups, rest = diagnosis_groups(ledger, row.run_id, children.pop(row.run_id))
        for group in groups:
            out.append(
                f"  diagnosis {short_address(group.address)}  {group.intervention} on "
                f"{group.criterion}"
            )
            for child in group.runs:
                out.append(f"    {child.label}: {run_line(child)}")
        if rest:
            out.append("  child runs no recorded diagnosis names")
            for child in rest:
                out.append(f"    {child.label}: {run_line(child)}")
    if show_all:  # children whose parent is not in this ledger
        for parent, orphans in children.items():
            out.append(f"child runs of {parent}, which this ledger does not hold")
            for child in orphans.values():
                out.append(f"    {child.label}: {run_line(child)}")

    return out


def run_line(row: RunRow) -> str:
    """``run_…  2026-…  name version  PARTIAL  BLOCK (exit 3)  200 of 300 answered · …``."""
    return "  ".join(
        [
            row.run_id,
            row.created_at,
            row.system,
            row.execution_state,
            _gate_text(row),
            _evidence_text(row),
            f"code {row.code or 'remote'}",
        ]
    )


def _gate_text(row: RunRow) -> str:
    if row.gate is not None and row.let_through_said:
        return f"{row.gate} (exit {row.exit_code}; {row.let_through_said})"
    if row.gate is not None:
        return f"{row.gate} (exit {row.exit_code})"
    if row.decision_state == "NO_POLICY":
        return "no policy"
    return "no gate (not decided)"


def _evidence_text(row: RunRow) -> str:
    # "answered", not "observed": the metric table's word, where a case answered without a
    # verdict (no retrieval recorded, a judge that failed) is missing.
    text = f"{row.observed} of {row.planned} answered · {row.missing} missing"
    why = []
    if row.errored:
        why.append(f"{row.errored} errored")
    if row.not_run:
        # A cut-short import's missing cases ran where the run was made: the archive holds them.
        why.append(
            f"{row.not_run} not imported yet" if row.import_unfinished else f"{row.not_run} not run"
        )
    text += f" ({', '.join(why)})" if why else ""
    if row.repeats_errored:  # the errored executions the cases' combined verdicts hold
        text += f" · {row.repeats_errored} of {row.repeats_executed} repeats errored"
    if row.subset is not None:  # 5 of 5 answered is not the suite
        text += f" · subset: {subset_text(row.subset, row.planned)}"
    if row.import_unfinished:
        text += " · its import was cut short: import the archive again"
    return text
