"""``oloproof verify`` and ``oloproof ledger export|import``: check the ledger, move slices of it.

``verify`` runs the ledger's own checks with the application's (``oloproof.audit``: every
stored verdict copy, decision, diagnosis and comparison must re-derive), imported when the
command runs so that loading the CLI stays light.

Exit codes: 0 clean (or done), 1 ``verify`` found problems (each listed), 2 unusable input
(no ledger, an unknown id, an unreadable or damaged archive), printed as one sentence by
``main``.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

import typer

from ledger import Ledger, Problem, export_archive, import_archive, open_archive
from oloproof.cli.main import app
from oloproof.cli.project import project_ledger

ledger_app = typer.Typer(
    name="ledger",
    help="Move slices of the ledger between projects: export to one file, import it elsewhere.",
    no_args_is_help=True,
    rich_markup_mode=None,
)
app.add_typer(ledger_app, name="ledger")


def _open(create: bool) -> Ledger:
    """The ledger of the project in the current directory, with Oloproof's indexes.

    The one place these commands open a ledger, so where and how can change in one spot.
    """
    return project_ledger(create=create)


@app.command("verify")
def verify_command(
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON."),
) -> None:
    """Re-check every event, link, ref and index, and re-derive every stored summary.

    Besides the ledger's own checks, every verdict copy, decision, diagnosis and comparison
    must equal what the ledger re-derives from its events (StaleSummary otherwise). Lists
    every problem found and changes nothing. Exit 0 when clean, 1 when problems were found,
    2 when there is no ledger here.

    Example: oloproof verify --json
    """
    from oloproof.audit import AuditCounts, application_checks

    counts = AuditCounts()

    def checks(ledger: Ledger) -> Iterator[Problem]:
        return application_checks(ledger, counts)

    with _open(create=False) as ledger:
        progress = None if as_json else _progress_bar()
        if progress is None:
            report = ledger.verify(extra_checks=[checks])
        else:
            with progress as update:
                report = ledger.verify(update, extra_checks=[checks])
    if as_json:
        typer.echo(json.dumps({**report.to_dict(), "summaries": counts.to_dict()}, indent=2))
    else:
        *lines, last = str(report).splitlines()
        typer.echo("\n".join([*lines, str(counts), last]))
    raise typer.Exit(0 if report.ok else 1)


@contextmanager
def _bar() -> Iterator[Callable[[int, int], None]]:
    from rich.progress import Progress

    with Progress(transient=True, console=None) as bar:
        task = bar.add_task("verifying", total=None)

        def update(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        yield update


def _progress_bar() -> AbstractContextManager[Callable[[int, int], None]] | None:
    """A progress bar on stderr when it is a terminal, else None."""
    return _bar() if sys.stderr.isatty() else None


@ledger_app.command("export")
def export_command(
    ids: list[str] = typer.Argument(
        ..., metavar="ID...", help="Addresses, unique prefixes (≥ 8 hex digits) or ref names."
    ),
    to: Path = typer.Option(..., "--to", help="The archive file to write (replaced if it exists)."),
) -> None:
    """Write the given events, and every event they link to, into one archive file.

    Refs given by name (a run id, latest) travel with the archive.

    Example: oloproof ledger export run_01M4FCBPE0G550CKCVGXCNEM2P --to run.oloarchive
    """
    with _open(create=False) as ledger:
        count = export_archive(ledger, ids, to)
    typer.echo(f"exported {count} event{'s' if count != 1 else ''} to {to}")


@ledger_app.command("import")
def import_command(
    file: Path = typer.Argument(..., help="An archive written by `oloproof ledger export`."),
) -> None:
    """Import an archive into this project's ledger, checking every event first.

    All or nothing: a damaged archive, a missing link or a ref that would move is refused
    before anything is written. Importing the same archive twice changes nothing.

    Example: oloproof ledger import run.oloarchive
    """
    # Check the whole archive before touching (or creating) the ledger.
    with open_archive(file) as archive:
        with _open(create=True) as ledger:
            new = import_archive(ledger, archive)
        total = len(archive)
    typer.echo(
        f"imported {new} new event{'s' if new != 1 else ''} from {file} "
        f"({total - new} already present, {len(archive.refs())} ref(s))"
    )
