"""The typer application: registers each command module and maps errors to exit codes."""

from __future__ import annotations

import importlib
import signal
import sys
from pathlib import Path
from typing import NoReturn

import typer

from ledger import DamagedIndexesError, DamagedStoreError, LedgerError
from oloproof.cli import style
from oloproof.cli.guard import GUARDED, command_of, run_guarded
from oloproof.display import printable
from oloproof.errors import OloproofError, Terminated
from oloproof.project import find_project
from oloproof.redaction import RedactingStream
from oloproof.store import DAMAGE_HINT, LEDGER_DIR, STALE_HINT
from oloproof.usercode import hold_hard_exits, on_sigint

app = typer.Typer(
    name="oloproof",
    help="Evaluate LLM and RAG systems: run, judge, gate, compare and diagnose, on a local ledger.",
    no_args_is_help=True,
    add_completion=False,
    context_settings={"help_option_names": ["-h", "--help"]},
    pretty_exceptions_enable=False,
    # Plain help text: rich's help formatter alone costs ~120 ms of start-up (goal: 0.3 s).
    rich_markup_mode=None,
)

_debug = False


def _print_version(value: bool) -> None:
    if value:
        from oloproof import __version__

        typer.echo(f"oloproof {__version__}")
        raise typer.Exit(0)


@app.callback()
def _root(
    ctx: typer.Context,
    debug: bool = typer.Option(False, "--debug", help="Show a traceback for errors."),
    version: bool = typer.Option(
        False,
        "--version",
        callback=_print_version,
        is_eager=True,
        help="Print the version and exit.",
    ),
) -> None:
    global _debug
    _debug = debug
    shown = style.detect()
    style.configure(shown)
    # echo strips colour codes from a pipe unless told; FORCE_COLOR tells it.
    ctx.color = shown.colour


def _register() -> None:
    # Each command lives in its own module; importing it adds the command to `app`, in this
    # order in the help: the usual workflow first.
    for name in (
        "init_cmd",
        "run_cmd",
        "inspect_cmd",
        "runs_cmd",
        "compare_cmd",
        "diagnose_cmd",
        "calibrate_cmd",
        "view_cmd",
        "ledger_cmds",
        "qrels_cmd",
        "docs_cmd",
    ):
        importlib.import_module(f"oloproof.cli.{name}")


def fail(message: str, code: int = 2) -> NoReturn:
    """Print one sentence on stderr and exit with ``code``."""
    sys.stderr.write(f"error: {printable(message)}\n")
    raise SystemExit(code)


def main() -> None:
    # Ctrl-C is noted as it arrives, so a KeyboardInterrupt raised by user code (at import
    # time, or in a case) is never mistaken for one (oloproof.usercode).
    signal.signal(signal.SIGINT, on_sigint)
    if hasattr(signal, "SIGXFSZ"):
        # Past a file size limit (ulimit -f) a write then fails and is reported as such,
        # rather than the signal ending the process before the finished cases are written.
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    # A closed pipe is caught beneath the redactor, so the redactor's writes raise it too.
    style.guard_stdout()
    # Every line printed passes the redactor: configured secrets never reach the terminal.
    sys.stdout = RedactingStream(sys.stdout)
    sys.stderr = RedactingStream(sys.stderr)
    _register()
    if command_of(sys.argv[1:]) in GUARDED:
        # A damaged ledger ends in a sentence, not a signal.
        found = find_project(Path.cwd())
        run_guarded(_run, where=str((found.root if found else Path.cwd()) / LEDGER_DIR))
    else:
        hold_hard_exits()  # these commands run user code (oloproof.usercode)
        _run()


def _run() -> None:
    try:
        app()
    except style.PipeClosed:  # `oloproof inspect RUN | head -1`: the reader has what it wanted
        style.closed_pipe_exit()
    except KeyboardInterrupt as exc:  # Ctrl-C, or SIGTERM during a run (oloproof.aio)
        sys.stderr.write("interrupted\n")
        raise SystemExit(143 if isinstance(exc, Terminated) else 130) from None
    except (OloproofError, LedgerError) as exc:
        if _debug:
            raise
        hint = (
            DAMAGE_HINT
            if isinstance(exc, DamagedStoreError)
            else STALE_HINT
            if isinstance(exc, DamagedIndexesError)
            else None
        )
        fail(str(exc) if hint is None else f"{exc} ({hint})")
