"""The typer application: registers each command module and maps errors to exit codes."""

from __future__ import annotations

import contextlib
import importlib
import io
import os
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any, NoReturn

import typer

from ledger import DamagedIndexesError, DamagedStoreError, LedgerError
from oloproof.cli import style
from oloproof.cli.guard import GUARDED, command_of, run_guarded
from oloproof.cli.interrupted import exit_interrupted
from oloproof.display import printable
from oloproof.errors import OloproofError
from oloproof.project import find_project
from oloproof.redaction import RedactingStream
from oloproof.store import DAMAGE_HINT, LEDGER_DIR, STALE_HINT
from oloproof.usercode import hold_hard_exits, on_sigint, real_exit

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
# How long the end waits for threads and exit handlers of user code (``_leave``)
_STRAY_GRACE = 5.0
_OWN = "oloproof-"  # the prefix of the names of Oloproof's own threads


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


def command() -> None:
    """The ``oloproof`` command, and ``python -m oloproof``: ``main``, in a process of its own."""
    _standard_streams()
    _working_folder()
    style.whole_process()
    style.stop_workflow_commands()
    try:
        main()
    except KeyboardInterrupt as exc:
        # A Ctrl-C before the command itself runs (while ``_register`` loads the commands'
        # modules): the command's own handler (``_run``) is not there yet to say so.
        exit_interrupted(exc)
    finally:
        style.resume_workflow_commands()


def _working_folder() -> None:
    """A working folder deleted after the shell entered it is refused at once: every command
    finds its project from there, and each would otherwise end in a traceback."""
    try:
        os.getcwd()
    except FileNotFoundError:
        _refused_at_start(_NO_WORKING_FOLDER)  # reports named by their full paths say so


_NO_WORKING_FOLDER = (
    "the working folder no longer exists (it was deleted or moved after this shell entered "
    "it); change to an existing folder and run the command again"
)


_CLOSED_STDOUT = (
    "standard output is closed, so nothing this command prints could be read; "
    "redirect it instead (> /dev/null discards it)"
)


def _standard_streams() -> None:
    """Descriptors 0, 1 and 2 open before anything else is (``oloproof runs >&-``).

    A closed one is held by /dev/null: the next file opened would otherwise take its number,
    and what is printed (or what the user's code writes to descriptor 1) would land in it, a
    ledger file among them. A closed standard output is refused (nothing printed could be
    read; exit 2), and the reports a ``run`` or ``compare`` names say so; a closed standard
    error or input leaves the command working, its errors unseen but its exit code as ever.
    """
    closed = []
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            closed.append(fd)
    for fd in closed:
        held = os.open(os.devnull, os.O_RDWR)
        if held != fd:
            os.dup2(held, fd)
            os.close(held)
    if 2 in closed:
        sys.stderr = io.TextIOWrapper(
            io.FileIO(2, "w", closefd=False), errors="backslashreplace", line_buffering=True
        )
    if 0 in closed:
        sys.stdin = io.TextIOWrapper(io.FileIO(0, "r", closefd=False))
    if 1 in closed:
        _refused_at_start(_CLOSED_STDOUT)


def _refused_at_start(why: str) -> NoReturn:
    """Refuse the command before it reads its arguments (exit 2), saying ``why``; the reports a
    ``run`` or ``compare`` names say so too (``ci.refused_command_line``)."""
    sys.stderr.write(f"error: {why}\n")
    sys.stderr.flush()
    from oloproof.cli.ci import refused_command_line

    refused_command_line(sys.argv[1:], why)
    raise SystemExit(2) from None


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
    style.guard_stderr()
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
        try:
            _run()
        except SystemExit as exc:
            _leave(exc.code)
        _leave(0)


def _leave(code: object) -> NoReturn:
    """Exit with ``code`` as Python does (waiting for threads that are not daemons, then
    running exit handlers), but at most ``_STRAY_GRACE`` s longer than the ledger's writer
    takes: a thread the user's code started and never ends would hold the exit for ever, and
    with it the exit code CI reads."""
    status = code if isinstance(code, int) else 0 if code is None else 1
    watch = threading.Thread(target=_end_late, args=(status,), name=f"{_OWN}exit", daemon=True)
    watch.start()
    raise SystemExit(code)


def _end_late(status: int) -> None:
    for thread in threading.enumerate():
        if thread.name.startswith(_OWN) and not thread.daemon:
            thread.join()  # the ledger's writer: what it was handed is written before the end
    time.sleep(_STRAY_GRACE)
    main_thread = threading.main_thread()
    if main_thread.is_alive():  # not exiting after all: a caller of main() caught the exit
        return
    left = [
        printable(t.name)
        for t in threading.enumerate()
        if t.is_alive() and not t.daemon and t is not main_thread
    ]
    what = (
        f"threads the system's code started were still running {_STRAY_GRACE:.0f} s after the "
        f"command finished ({', '.join(left)}); Oloproof exited without waiting for them"
        if left
        else f"the system's code was still ending the process {_STRAY_GRACE:.0f} s after the "
        "command finished (an exit handler of its own); Oloproof exited without waiting for it"
    )
    with contextlib.suppress(Exception):
        sys.stdout.flush()
    with contextlib.suppress(Exception):
        sys.stderr.write(f"warning: {what}\n")
        sys.stderr.flush()
    real_exit(status)


class _Interrupted(BaseException):
    """A KeyboardInterrupt carried out of a command past typer, which would turn it into a
    silent exit 130 (and SIGTERM's 143 into 130 too)."""


def _run() -> None:
    from oloproof.cli.arguments import checked_command

    command = checked_command(typer.main.get_command(app))
    invoke = command.invoke

    def carried(ctx: typer.Context) -> Any:
        try:
            return invoke(ctx)
        except KeyboardInterrupt as exc:
            raise _Interrupted(exc) from exc

    command.invoke = carried
    try:
        command()
    except _Interrupted as carried_out:  # Ctrl-C, or SIGTERM during a run (oloproof.aio)
        exit_interrupted(carried_out.args[0])
    except style.PipeClosed:  # `oloproof inspect RUN | head -1`: the reader has what it wanted
        style.closed_pipe_exit()
    except style.OutputFailed as exc:  # `oloproof runs > /dev/full`
        style.failed_output_exit(exc.why)
    except (OloproofError, LedgerError) as exc:
        if _debug:
            raise
        fail(error_sentence(exc))
    except RuntimeError as exc:
        # Python before 3.13 raises this, not an OSError, for a path in a loop of symbolic
        # links that it resolves (``Path.resolve``), wherever a command resolves one.
        looped = _looped_path(str(exc))
        if looped is None or _debug:
            raise
        fail(f"{looped}: cannot read or write it (a loop of symbolic links)")


def _looped_path(message: str) -> str | None:
    """The path in pathlib's ``Symlink loop from '...'`` (its repr), or None for another
    error."""
    import ast

    if not message.startswith(_SYMLINK_LOOP):
        return None
    try:
        path = ast.literal_eval(message[len(_SYMLINK_LOOP) :])
    except (ValueError, SyntaxError):
        return None
    return path if isinstance(path, str) else None


_SYMLINK_LOOP = "Symlink loop from "


def error_sentence(exc: OloproofError | LedgerError) -> str:
    """The sentence an error ends a command with, with the hint a damaged ledger needs."""
    hint = (
        DAMAGE_HINT
        if isinstance(exc, DamagedStoreError)
        else STALE_HINT
        if isinstance(exc, DamagedIndexesError)
        else None
    )
    return str(exc) if hint is None else f"{exc} ({hint})"
