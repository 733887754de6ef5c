"""``oloproof verify`` and ``oloproof ledger export|import|compact|rebuild-indexes``: check the
ledger, move slices of it, keep only what matters, mend its derived indexes.

``verify`` runs the ledger's own checks (pages, events, links, refs, indexes, the commit chain)
with the application's (``oloproof.audit``: every stored verdict copy, decision, diagnosis and
comparison must re-derive), imported when the command runs so that loading the CLI stays light.
A ledger whose file is damaged is reported as a problem, like any other.

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
from typing import TYPE_CHECKING

import typer

from ledger import (
    AddressError,
    DamagedStoreError,
    FormatError,
    Ledger,
    Problem,
    UnsupportedFormatError,
    VerifyReport,
    export_archive,
    import_archive,
)
from ledger.address import parse_address
from ledger.verify import STALE_INDEX
from oloproof.cli.main import app
from oloproof.cli.project import keep_out_declared, project_ledger
from oloproof.display import plural
from oloproof.errors import ConfigError

if TYPE_CHECKING:
    from oloproof.latest import StillRunning

ledger_app = typer.Typer(
    name="ledger",
    help="Archive the ledger, move slices of it between projects, compact it, and rebuild its "
    "derived indexes.",
    no_args_is_help=True,
    rich_markup_mode=None,
)
app.add_typer(ledger_app, name="ledger")


def _open(create: bool, only_reads: bool = False) -> Ledger:
    """The ledger of the project this command runs in, with Oloproof's indexes.

    The one place these commands open a ledger, so where and how can change in one spot.
    """
    return project_ledger(create=create, only_reads=only_reads)


def _raw_open() -> Ledger:
    """The ledger as ``ledger`` opens it: its damage is an error of its own kind. On a
    read-only file system it is read as it is (``verify`` only reads)."""
    from oloproof.cli.project import project_ledger, project_root
    from oloproof.store import LEDGER_DIR, open_kept

    path = project_root() / LEDGER_DIR
    if not path.exists():
        return project_ledger()  # the sentence every command gives for no ledger
    return open_kept(path, create=False, only_reads=True)


@app.command("verify")
def verify_command(
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON."),
    head: str | None = typer.Option(
        None,
        "--head",
        metavar="sha256:…",
        help="Also confirm that this chain head, published earlier, is part of this "
        "ledger's history (exit 1 if it is not).",
    ),
) -> None:
    """Re-check every page, event, link, ref, index and commit, and re-derive every summary.

    Besides the ledger's own checks, every verdict copy, decision, diagnosis and comparison
    must equal what the ledger re-derives from its events (StaleSummary otherwise), and the
    commit chain must re-derive from the events: its head, printed at the end, covers the
    whole history. Lists every problem found and changes nothing. Exit 0 when clean, 1 when
    problems were found (a damaged file included), 2 when there is no ledger here or --head is
    not an address.

    Example: oloproof verify --head "$(cat released-head.txt)"
    """
    from oloproof.audit import AuditCounts, application_checks

    if head is not None:
        try:
            parse_address(head)
        except AddressError:
            # A mistyped argument, before the ledger is read: not a finding about the ledger.
            raise ConfigError(
                f"--head {head!r} is not a chain head: expected 'sha256:' and 64 hex digits"
            ) from None
    keep_out_declared()
    counts = AuditCounts()

    def checks(ledger: Ledger) -> Iterator[Problem]:
        return application_checks(ledger, counts)

    try:
        ledger = _raw_open()
    except (DamagedStoreError, FormatError) as exc:
        if isinstance(exc, UnsupportedFormatError):
            raise  # a newer ledger: this version cannot check it, and says to upgrade
        # The file cannot even be opened (a damaged page, an unreadable format record where
        # the project's ledger is kept): that is the finding.
        report = VerifyReport(problems=[Problem("DamagedStore", detail=str(exc))])
        report.notes.append("nothing else was read: the store is damaged")
    else:
        with ledger:
            progress = None if as_json else _progress_bar()
            if progress is None:
                report = ledger.verify(extra_checks=[checks], head=head)
            else:
                with progress as update:
                    report = ledger.verify(update, extra_checks=[checks], head=head)
    if as_json:
        typer.echo(json.dumps({**report.to_dict(), "summaries": counts.to_dict()}, indent=2))
    else:
        *lines, last = str(report).splitlines()
        if any(p.kind == STALE_INDEX for p in report.problems):
            lines.append(f"the indexes are derived from the events: {REBUILD_HINT}")
        typer.echo("\n".join([*lines, str(counts), last]))
    raise typer.Exit(0 if report.ok else 1)


REBUILD_HINT = "rebuild them with: oloproof ledger rebuild-indexes"


@ledger_app.command("rebuild-indexes")
def rebuild_indexes_command() -> None:
    """Rebuild the ledger's indexes from its events alone.

    The indexes (events by run, by type, by case, by address) are derived data: a damaged
    index page makes reads miss events, and the read commands refuse a run whose index
    disagrees with what it recorded. Rebuilding writes every index afresh from the stored
    events and changes no event. An event whose bytes no longer match its address is left
    out of the indexes; `oloproof verify` still names it.

    Example: oloproof ledger rebuild-indexes
    """
    with _open(create=False) as ledger:
        ledger.rebuild_indexes()
        with ledger.snapshot() as snapshot:
            events, entries = snapshot.count_events(), snapshot.count_index()
    typer.echo(
        f"rebuilt the indexes from {events} event{'s' if events != 1 else ''}: "
        f"{entries} entr{'y' if entries == 1 else 'ies'}; check them with: oloproof verify"
    )


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
        None,
        metavar="[ID...]",
        help="Runs, diagnoses, comparisons or any event: addresses, unique prefixes (≥ 8 hex "
        "digits) or ref names.",
    ),
    to: Path = typer.Option(..., "--to", help="The archive file to write (replaced if it exists)."),
    everything: bool = typer.Option(
        False, "--all", help="Export the whole ledger, every ref and the whole chain."
    ),
) -> None:
    """Write the given results, whole, into one archive file.

    A run travels with everything reading it back needs: its case results, executions,
    stage outputs, judgments, run ends, decisions, diagnoses and the calibrations of its
    judges; a diagnosis with its parent and child runs; a comparison with both runs. Refs
    named on the command line and each run's id travel too, and so does the part of the
    commit chain that added the events. Imported into an empty project, `runs`, `inspect`
    and `verify` read them as they read here.

    Example: oloproof ledger export run_01M4FCBPE0G550CKCVGXCNEM2P --to run.oloarchive
    """
    from oloproof.archiving import LINKS

    if everything and ids:
        raise typer.BadParameter("give IDs or --all, not both")
    if not everything and not ids:
        raise typer.BadParameter("give at least one ID, or --all")
    from oloproof.cli.arguments import check_output_path
    from oloproof.latest import LATEST, resolve_latest
    from oloproof.runlock import locked_runs

    _refuse_malformed(ids or [])
    check_output_path(to)
    keep_out_declared()

    with _open(create=False, only_reads=True) as ledger:
        # `latest` is the run it means (``oloproof.latest``), not whatever its ref holds.
        asked = [resolve_latest(ledger) if text == LATEST else text for text in ids or []]
        count = export_archive(
            ledger, asked, to, links=LINKS, everything=everything, check=_no_secret(to)
        )
        # An archive of the whole ledger holds the runs being written as far as they are.
        running = _still_running(ledger, locked_runs(ledger.path) if everything else asked)
    # A device or a pipe (/dev/null) was written into: its size says nothing of what was written.
    size = f" ({to.stat().st_size:,} bytes)" if to.is_file() else ""
    typer.echo(f"exported {count} {plural(count, 'event')} to {to}{size}")
    for run in running:  # as `oloproof export` warns of a run not every case of which ran
        typer.echo(f"warning: {run.text()}; the archive holds the cases written so far", err=True)


def _still_running(ledger: Ledger, asked: list[str]) -> list[StillRunning]:
    """The runs named in ``asked`` that a live process is writing now (any other event, a
    diagnosis or a comparison, is not one)."""
    from oloproof.errors import UnknownIdError
    from oloproof.latest import still_running
    from oloproof.stored_runs import load_run

    found: list[StillRunning] = []
    for text in asked:
        try:
            run = still_running(ledger, load_run(ledger, text).body)
        except UnknownIdError:  # not a run: exported as the event it is
            continue
        if run is not None and run not in found:
            found.append(run)
    return found


def _no_secret(to: Path) -> Callable[[str, bytes], None]:
    """A check of each event an archive is to hold: one holding a secret the command keeps out
    (``keep_out_declared``; recorded before it was declared) is refused. It cannot be written
    redacted: its address is the hash of its bytes, and the events that link to it name it."""
    from oloproof.redaction import holds_secret

    def check(address: str, data: bytes) -> None:
        if holds_secret(data):
            kept = (
                "was not written"
                if not to.exists()
                else "was left as it was"
                if to.is_file()
                else "received only the events before it"
            )
            raise ConfigError(
                f"will not export {address}: {_HOLDS_SECRET}, recorded before it was declared, "
                f"and an event cannot be changed without changing its address; {to} {kept}. "
                "Export without that variable set to archive the events as they were recorded"
            )

    return check


def _no_secret_imported(file: Path) -> Callable[[str, bytes], None]:
    """The check of each event an import is to write: one holding a secret the command keeps
    out (recorded where it was not declared) is refused, as an export refuses it."""
    from oloproof.redaction import holds_secret

    def check(address: str, data: bytes) -> None:
        if holds_secret(data):
            raise ConfigError(
                f"will not import {address} from {file}: {_HOLDS_SECRET}, and an event cannot "
                "be changed without changing its address; nothing was imported. Import "
                "without that variable set to take the events as they were recorded"
            )

    return check


_HOLDS_SECRET = (
    "it holds the value of a secret (one that oloproof.yaml lists under secrets:, or a "
    "variable named like a credential)"
)


@ledger_app.command("import")
def import_command(
    file: Path = typer.Argument(..., help="An archive written by `oloproof ledger export`."),
) -> None:
    """Import an archive into this project's ledger, checking every event first.

    Nothing is written until the whole archive has been checked: a damaged archive, a
    missing link, an event this version cannot read, a ref that would move or a second run
    event of a run is refused first. Importing the same archive twice changes nothing. Into
    an empty project an archive of a whole ledger replays its commits, so the chain's head is
    the source's. A run whose decision or verdict copies its events do not give, or a diagnosis
    or comparison its runs do not give (forged, or changed outside the run), is named once
    imported, and the command exits 1, as `oloproof verify` does.

    Example: oloproof ledger import run.oloarchive
    """
    from oloproof.cli.arguments import check_input_file
    from oloproof.cli.project import project_root
    from oloproof.import_check import (
        one_run_event_a_run,
        read_before_import,
        second_results_warning,
        unsound_summaries,
        unsound_summaries_error,
    )
    from oloproof.store import LEDGER_DIR

    check_input_file(file)
    keep_out_declared()
    secret = _no_secret_imported(file)

    def check(ledger: Ledger | None) -> Callable[[str, bytes], None]:
        one_run_event = one_run_event_a_run(ledger, file)

        def both(address: str, data: bytes) -> None:
            secret(address, data)
            one_run_event(address, data)

        return both

    fresh = not (project_root() / LEDGER_DIR).exists()
    if fresh:
        # Before a ledger is made for it: with none, each event is new, and so checked.
        twice, held = read_before_import(None, file, check(None))
    with _open(create=True) as ledger:
        before, _ = ledger.head()
        if not fresh or len(ledger):  # another process made it meanwhile: read it again
            twice, held = read_before_import(ledger, file)
        done = import_archive(ledger, file, check(ledger))
        commits, head = ledger.head()
        unsound = unsound_summaries(ledger, held)
    typer.echo(
        f"imported {done.new} {plural(done.new, 'new event')} from {file} "
        f"({done.present} already present, {done.refs} ref(s))"
    )
    if twice:
        typer.echo(second_results_warning(twice), err=True)
    how = f", {done.replayed} replayed from the archive" if done.replayed else ""
    typer.echo(f"chain: {commits} commit(s) ({commits - before} new{how}), head {head or '(none)'}")
    if unsound:
        typer.echo(unsound_summaries_error(unsound), err=True)
        raise typer.Exit(1)


@ledger_app.command("compact")
def compact_command(
    keep: list[str] = typer.Option(
        None,
        "--keep",
        metavar="ID",
        help="Keep this run, comparison, diagnosis or calibration (an id, ref, address or "
        "prefix), and what it needs. Give it as often as needed.",
    ),
    keep_last: int | None = typer.Option(
        None, "--keep-last", min=1, metavar="N", help="Keep the N newest top-level runs."
    ),
) -> None:
    """Replace the ledger by one holding only what is kept, and report the space saved.

    Kept: what --keep and --keep-last name, with everything reading it back needs (as an
    archive of it would hold), every comparison whose two runs are kept, every diagnosis of
    a kept run, every calibration, and the refs that point at kept events. The new ledger is
    written beside the old one and verified in full; only then does it replace the old one,
    in one rename, so a crash leaves one or the other. Nothing else may have the ledger open.
    The new ledger starts a new chain: publish its head again.

    Example: oloproof ledger compact --keep-last 3 --keep latest
    """
    from oloproof.cli.project import project_root
    from oloproof.compaction import compact_project

    _refuse_malformed(keep or [])

    def step(name: str) -> None:
        sys.stderr.write(f"compact: {name}\n")
        sys.stderr.flush()

    done = compact_project(project_root(), keep or [], keep_last, progress=step)
    summary = done.summary
    plural = {"diagnosis": "diagnoses"}
    kinds = ", ".join(
        f"{after} of {before} {name if before == 1 else plural.get(name, name + 's')}"
        for name, (before, after) in done.kinds.items()
    )
    typer.echo(f"kept {kinds}: {summary.events_after} of {summary.events_before} events")
    if summary.refs_dropped:
        typer.echo(f"dropped refs to events not kept: {', '.join(summary.refs_dropped)}")
    share = summary.bytes_after / summary.bytes_before if summary.bytes_before else 1.0
    typer.echo(
        f"data.mdb: {summary.bytes_before:,} bytes before, {summary.bytes_after:,} after "
        f"({share:.0%})"
    )
    typer.echo(
        f"chain: a new history of {summary.commits_after} commit(s), head {summary.head_after}; "
        f"it replaces the history whose head was {summary.head_before}"
    )


def _refuse_malformed(ids: list[str]) -> None:
    """Refuse text that can name nothing: empty, white space around it, a malformed address
    (``oloproof.idhints``)."""
    from oloproof.errors import UnknownIdError
    from oloproof.idhints import malformed_id_message

    for text in ids:
        malformed = malformed_id_message(text)
        if malformed is not None:
            raise UnknownIdError(malformed)
