"""What the command line knows of where it prints: the terminal's width, colour, a closed pipe.

Requirements (``docs/running.md``, "Output on a terminal and in a pipe"):

1. Piped or redirected, output is the plain layout, byte for byte what the guides show:
   tables as wide as their cells, no colour, no terminal codes.
2. On a terminal, tables fit its width (``COLUMNS`` overrides what the terminal says): the
   widest columns shrink and their cells fold onto continuation lines, so 80 columns read
   cleanly. Verdicts, decisions and the gate are coloured.
3. ``NO_COLOR`` (any non-empty value) turns colour off; ``FORCE_COLOR`` (non-empty, not ``0``)
   turns it on even in a pipe (https://no-color.org, https://force-color.org). Neither changes
   the width rule.
4. A reader that stops early (``oloproof inspect RUN | head -1``) ends the command quietly with
   exit 0: a closed pipe is not a failed rule. A command that decided a gate before printing
   (``run``, ``compare``) exits with the gate's code all the same, and has written its
   ``--junit``/``--summary`` files first. Standard output that cannot be written (a full
   disk, ``> /dev/full``, an encoding that cannot hold what is printed) ends the command in
   one sentence on stderr, with exit 2, or with the gate's code when the gate blocked (1 or
   3): what was printed is incomplete.
5. Standard output holds the command's output alone. The user's code runs in this process and
   shares its standard output: while it runs, what anything writes there (a ``print``, C code,
   a child process) goes to standard error instead, and, in the command's own process, still
   does after it has run, the command printing through a stream of its own (``report_out``):
   a ``--json`` report can be parsed, and no line of a report is the system's.

The settings live in one module-level ``Style``, set once by the root command; renderers read
it, and code that renders without it (tests, the CLI reference) gets the plain layout.
"""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import IO, Any, NoReturn, cast

_RESET = "\x1b[0m"
_CODES = {
    "green": "\x1b[32m",
    "red": "\x1b[31m",
    "yellow": "\x1b[33m",
    "magenta": "\x1b[35m",
    "bold": "\x1b[1m",
    "dim": "\x1b[2m",
}
# The colour of each outcome a rule, a gate or a judgment can have.
_OUTCOME_COLOURS = {
    "PASS": "green",
    "FAIL": "red",
    "BLOCK": "red",
    "INSUFFICIENT_EVIDENCE": "yellow",
    "MANUAL_REVIEW": "magenta",
    "passed": "green",
    "failed": "red",
    "errored": "red",
}


@dataclass(frozen=True)
class Style:
    """How to print: ``width`` None is the plain layout (no fitting); ``colour`` adds codes."""

    width: int | None = None
    colour: bool = False

    def paint(self, text: str, colour: str) -> str:
        """``text`` in ``colour`` (a name in ``_CODES``) when colour is on."""
        if not self.colour or not text:
            return text
        return f"{_CODES[colour]}{text}{_RESET}"

    def outcome(self, text: str) -> str:
        """An outcome (PASS, FAIL, BLOCK, INSUFFICIENT_EVIDENCE, passed, failed…) coloured."""
        colour = _OUTCOME_COLOURS.get(text.strip())
        return self.paint(text, colour) if colour else text

    def outcomes_in(self, text: str) -> str:
        """Every outcome word in ``text`` coloured (for lines with an outcome among words)."""
        if not self.colour:
            return text
        words = text.split(" ")
        return " ".join(self.outcome(w) if w in _OUTCOME_COLOURS else w for w in words)


_current = Style()


def current() -> Style:
    return _current


def configure(style: Style) -> None:
    global _current
    _current = style


def detect(stream: IO[str] | Any = None) -> Style:
    """The style for ``stream`` (stdout by default), from the terminal and the environment."""
    stream = sys.stdout if stream is None else stream
    tty = _isatty(stream)
    width = shutil.get_terminal_size((80, 24)).columns if tty else None
    return Style(width=max(width, 40) if width is not None else None, colour=wants_colour(tty))


def wants_colour(tty: bool) -> bool:
    if os.environ.get("NO_COLOR"):
        return False
    force = os.environ.get("FORCE_COLOR")
    if force and force != "0":
        return True
    return tty and os.environ.get("TERM") != "dumb"


def _isatty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False


# ------------------------------------------------------------------- the user's code's output

_whole_process = False  # the command is the process (``command``), not a call of a program's
_report: IO[str] | None = None  # standard output, kept apart for the command's own output


def whole_process() -> None:
    """Say that the process ends with the command: standard output may then be kept apart
    for the command's output for good (``user_output_aside``)."""
    global _whole_process
    _whole_process = True


@contextlib.contextmanager
def user_output_aside() -> Iterator[None]:
    """Within: what is written to standard output goes to standard error (requirement 5).

    At the level of the file descriptor, so that C code and child processes, which write to
    descriptor 1 and not through ``sys.stdout``, are moved too. ``sys.stdout`` and
    ``sys.stderr`` are put back as they were on the way out, in case the user's code replaced
    them (a library silenced with ``sys.stdout = open(os.devnull, "w")``).

    In a process that ends with the command, descriptor 1 stays with standard error after
    the block as well, and the command prints its output through ``report_out``, a stream of
    its own on standard output: a thread of the user's code still running, which prints
    through ``sys.stdout`` as the report is printed or while the exit waits for it, never
    writes into the report. A program that called ``main`` gets its standard output back.
    """
    streams = sys.stdout, sys.stderr
    _flush(sys.stdout)
    kept = _descriptor_aside()
    try:
        yield
    finally:
        for stream in (sys.stdout, streams[0]):
            _flush(stream)  # what the user's code left in a buffer belongs to standard error
        sys.stdout, sys.stderr = streams
        if kept is not None:
            if _whole_process:
                _keep_report(kept)
            else:
                os.dup2(kept, 1)
                os.close(kept)


def _keep_report(fd: int) -> None:
    global _report
    if _report is not None:  # kept by an earlier block of the same command
        os.close(fd)
        return
    from oloproof.redaction import RedactingStream

    raw = io.TextIOWrapper(
        io.FileIO(fd, "w"),
        encoding=getattr(sys.stdout, "encoding", None) or "utf-8",
        errors=getattr(sys.stdout, "errors", None) or "strict",
    )
    # Wrapped as sys.stdout is (``stop_workflow_commands``, oloproof.cli.main): the guard of
    # JSON on GitHub Actions, a closed pipe, then the redactor, which sees the text first.
    inner = cast("IO[str]", JsonCommandGuard(raw)) if _json_out else raw
    _report = cast("IO[str]", RedactingStream(cast("IO[str]", PipeGuard(inner))))


def report_out() -> IO[str]:
    """Where the command prints its output: standard output, kept apart from the user's code's
    once it has run (``user_output_aside``)."""
    return _report if _report is not None else sys.stdout


def _descriptor_aside() -> int | None:
    """Point descriptor 1 at standard error; return a copy of what it was, or ``None`` when
    there is no standard output to keep apart or no standard error to send it to."""
    try:
        kept = os.dup(1)
    except OSError:
        return None
    try:
        os.dup2(2, 1)
    except OSError:
        os.close(kept)
        return None
    return kept


def _flush(stream: Any) -> None:
    # A reader gone, or a stream closed by the user's code: there is nothing left to move.
    with contextlib.suppress(OSError, ValueError, PipeClosed):
        stream.flush()


# ---------------------------------------------------------------------------- a closed pipe


class PipeClosed(Exception):
    """The reader of stdout went away. Not an ``OSError``, so no handler on the way up takes
    it for an I/O failure (click would exit 1)."""


class OutputFailed(Exception):
    """Writing to stdout failed for another reason than a reader gone (``ENOSPC``, ``EIO``);
    ``why`` says which. Not an ``OSError``, for the reason ``PipeClosed`` is not."""

    def __init__(self, why: str) -> None:
        super().__init__(why)
        self.why = why


class PipeGuard:
    """stdout, with a write to a closed pipe raised as ``PipeClosed``."""

    def __init__(self, stream: IO[str]) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        return int(self._guarded(self._stream.write, text))

    def flush(self) -> None:
        self._guarded(self._stream.flush)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)

    def _guarded(self, call: Callable[..., Any], *args: Any) -> Any:
        try:
            return call(*args)
        except BrokenPipeError:
            raise PipeClosed from None
        except OSError as exc:
            raise OutputFailed(exc.strerror or str(exc)) from None
        except UnicodeEncodeError as exc:  # PYTHONIOENCODING=ascii, or a C locale uncoerced
            encoding = getattr(self._stream, "encoding", None) or exc.encoding
            held = exc.object[exc.start]
            raise OutputFailed(
                f"its encoding, {encoding}, cannot hold {held!a}; use a UTF-8 locale or set "
                "PYTHONIOENCODING=utf-8"
            ) from None


class QuietStream:
    """stderr, a write or flush that fails dropped: with nowhere to say anything
    (``2> /dev/full``), the command still ends with its own exit code, not with Python's 1
    for a traceback it cannot print either."""

    def __init__(self, stream: IO[str]) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        try:
            return int(self._stream.write(text))
        except (OSError, ValueError):
            return len(text)

    def flush(self) -> None:
        with contextlib.suppress(OSError, ValueError):
            self._stream.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def guard_stderr() -> None:
    sys.stderr = QuietStream(sys.stderr)


_decided_exit = 0


def decided(exit_code: int) -> None:
    """The exit code a command has decided before it prints (a gate's): a reader that stops
    early does not turn a failed gate into a green exit."""
    global _decided_exit
    _decided_exit = exit_code


def guard_stdout() -> None:
    sys.stdout = PipeGuard(sys.stdout)


def closed_pipe_exit() -> NoReturn:
    """Exit without a word, 0 or the exit code the command had decided: stdout is pointed at
    /dev/null, so the interpreter's last flush of what was buffered cannot fail again."""
    _stdout_to_devnull()
    raise SystemExit(_decided_exit)


def failed_output_exit(why: str) -> NoReturn:
    """Say that stdout could not be written, and exit 2, or with the code of a gate that
    blocked (requirement 4): stdout is pointed at /dev/null, as ``closed_pipe_exit`` does."""
    _stdout_to_devnull()
    with contextlib.suppress(Exception):
        sys.stderr.write(
            f"error: cannot write to standard output ({why}); what was printed is incomplete\n"
        )
        sys.stderr.flush()
    raise SystemExit(_decided_exit or 2)


def _stdout_to_devnull() -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.__stdout__.fileno() if sys.__stdout__ else 1)
        if _report is not None:
            os.dup2(devnull, _report.fileno())
    except OSError:
        pass


# ------------------------------------------------------------ GitHub Actions workflow commands

_command_token: str | None = None  # the token commands are stopped with, until resumed
_json_out = False  # standard output holds JSON alone (``--json``): guarded, not wrapped


def stop_workflow_commands() -> None:
    """On GitHub Actions (``GITHUB_ACTIONS=true``), have its runner act on no workflow command
    in what the command prints, until ``resume_workflow_commands``.

    The runner acts on ``::name::`` at the start of a line and on ``##[name]`` anywhere in one,
    on standard output and standard error alike, and what a command prints holds case ids and
    what systems raised or returned: a case named ``::add-mask::x`` or an error saying
    ``##[error]`` would be acted on. GitHub's documented way to print such text is
    ``::stop-commands::TOKEN`` before it and ``::TOKEN::`` after, TOKEN unguessable. The stop
    line goes on both streams before anything else is printed on either: whichever the runner
    reads first, no line after it is acted on. Oloproof emits no annotation of its own.

    With ``--json``, standard output is for a parser (``| jq``), and no line of it is wrapped:
    none can start with ``::`` (each is a JSON token, a string's quote first), and each
    ``##[`` in it, which only a string can hold, is written ``#\\u0023[``, the same JSON
    (``JsonCommandGuard``). Standard error is wrapped alone.
    """
    global _command_token, _json_out
    if os.environ.get("GITHUB_ACTIONS") != "true":
        return
    _command_token = os.urandom(16).hex()  # os, not secrets: no import on every start-up
    _json_out = "--json" in sys.argv[1:]
    if _json_out:  # beneath the redactor ``main`` puts around it, which sees the text first
        sys.stdout = cast("IO[str]", JsonCommandGuard(sys.stdout))
    line = f"::stop-commands::{_command_token}\n".encode()
    for fd in (2,) if _json_out else (2, 1):
        with contextlib.suppress(OSError):  # nowhere to print: nothing to protect either
            os.write(fd, line)


def resume_workflow_commands() -> None:
    """``::TOKEN::`` on standard output, after everything the command printed: the commands a
    later line of the same step prints work again.

    On standard output, not standard error: in each batch of lines the runner has read, it
    handles those of standard error first, so a line of standard error printed before this one
    is never handled after it (one not yet read at all could be; flushing it first narrows that
    to the runner's own reading).
    """
    global _command_token
    token, _command_token = _command_token, None
    if token is None:
        return
    for stream in (sys.stderr, sys.stdout, _report):
        if stream is not None:
            with contextlib.suppress(OutputFailed):
                _flush(stream)
    resumed = 2 if _json_out else _report.fileno() if _report is not None else 1
    with contextlib.suppress(OSError, ValueError):
        os.write(resumed, f"::{token}::\n".encode())


class JsonCommandGuard:
    """A ``--json`` command's standard output on GitHub Actions: each ``##[`` written as
    ``#\\u0023[``, which a JSON reader reads back as ``##[`` and the runner never acts on (see
    ``stop_workflow_commands``). A ``#`` that ends a write waits for the next one, which may
    complete the three characters."""

    def __init__(self, stream: IO[str]) -> None:
        self._stream = stream
        self._held = ""

    def write(self, text: str) -> int:
        joined = self._held + text
        kept = len(joined.rstrip("#"))
        self._held = joined[max(kept, len(joined) - 2) :]
        self._stream.write(joined[: len(joined) - len(self._held)].replace("##[", "#\\u0023["))
        return len(text)

    def flush(self) -> None:
        if self._held:
            self._stream.write(self._held)
            self._held = ""
        self._stream.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)
