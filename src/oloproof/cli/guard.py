"""Commands that read the ledger run in a child process, so that damage LMDB cannot survive
ends in one sentence and exit 2, never in a signal.

LMDB trusts its file. A page overwritten with zeros makes it stop the process on an assertion
(SIGABRT, ``Assertion 'IS_LEAF(mp)' failed``); a page past the end of a file cut short is a
SIGBUS when touched. Neither can be caught in the process it happens in. So ``inspect``,
``runs``, ``export``, ``compare``, ``verify`` and the ``ledger`` commands fork: the child runs
the command with the terminal as it is (stdout and Python's stderr unchanged), and the parent
waits. If the child dies by one of those signals, the parent prints

    error: the ledger at .oloproof is damaged below its events: LMDB stopped with SIGABRT
    (Assertion 'IS_LEAF(mp)' failed in mdb_cursor_next()) (`oloproof verify` lists what is damaged)

and exits 2. LMDB writes its assertion to the C-level stderr just before it stops; the child's
C-level stderr goes through the parent, which keeps that line back and folds it into its
sentence, and passes everything else through as it comes.

The parent passes SIGINT, SIGTERM and SIGHUP on to the child (which a terminal's Ctrl-C reaches
too, in the same process group: it stops once), and exits as the child did: with its exit code,
or, when the child died of a signal the parent passed on, by that signal. A child killed by any
other signal (the kernel's out-of-memory killer, a ``kill -9`` of the child alone) is not the
parent's to copy: SIGKILL cannot even be raised again through a handler, and a bare death by a
signal no one sent the command would leave its user guessing. The parent prints

    error: the verify command's process (pid 4242) was killed by SIGKILL before it finished, so
    what it printed is incomplete (the out-of-memory killer or a `kill -9` sends SIGKILL)

and exits 128 plus the signal's number (137 for SIGKILL), as a shell reports a killed command:
never 0, 1 or 3, which say what the command found. The child is killed if the parent dies.
Where there is no ``fork`` the command simply runs in the process.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import signal
import sys
from collections.abc import Callable
from types import FrameType
from typing import IO, NoReturn, cast

from oloproof.cli.style import resume_workflow_commands
from oloproof.usercode import on_sigint

GUARDED = frozenset({"inspect", "runs", "export", "compare", "verify", "ledger"})
_CRASHES = {signal.SIGABRT, signal.SIGBUS, signal.SIGSEGV}
_FORWARDED = (signal.SIGTERM, signal.SIGHUP)
_SHELL_SIGNALLED = 128  # a shell reports a command killed by signal N as 128 + N
_ASSERTION = re.compile(rb"[^\n]*Assertion '[^\n]*' failed in [^\n]*\n?")
_PR_SET_PDEATHSIG = 1


def command_of(argv: list[str]) -> str | None:
    """The command named in ``argv`` (the first word that is not an option)."""
    return next((arg for arg in argv if not arg.startswith("-")), None)


def run_guarded(body: Callable[[], None], where: str) -> None:
    """Run ``body`` (the whole command) in a child process; see the module.

    ``where`` names the ledger in the sentence printed when LMDB stops the child.
    """
    if not hasattr(os, "fork"):
        body()
        return
    sys.stdout.flush()
    sys.stderr.flush()
    read_end, write_end = os.pipe()
    parent = os.getpid()
    pid = os.fork()
    if pid == 0:
        os.close(read_end)
        _child(body, write_end, parent)
    os.close(write_end)
    _parent(pid, read_end, where)


def _child(body: Callable[[], None], c_stderr: int, parent: int) -> NoReturn:
    signal.signal(signal.SIGINT, _interrupted_once)
    _die_with(parent)
    python_stderr = os.dup(2)
    os.dup2(c_stderr, 2)  # only what C code writes to fd 2 goes through the parent now
    os.close(c_stderr)
    sys.stderr = _wrapped_like(sys.stderr, python_stderr)
    code = 1
    try:
        body()
        code = 0
    except SystemExit as exc:
        code = _exit_code(exc)
    except BaseException:
        sys.excepthook(*sys.exc_info())
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(OSError, ValueError):  # a closed pipe: nothing to do
                stream.flush()
    os._exit(code)


def _interrupted_once(signum: int, frame: FrameType | None) -> NoReturn:
    """The child's Ctrl-C: a ``KeyboardInterrupt`` once, then none. A terminal's Ctrl-C reaches
    it both from the terminal and passed on by the parent, and a second ``KeyboardInterrupt``
    raised while the first is handled would end the command in a traceback."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    on_sigint(signum, frame)


def _wrapped_like(stream: object, fd: int) -> IO[str]:
    """A text stream on ``fd`` written as ``stream`` was (its encoding, a line at a time, a
    write that fails dropped), inside the same redaction wrapper when there is one."""
    from oloproof.cli.style import QuietStream
    from oloproof.redaction import RedactingStream

    encoding = getattr(stream, "encoding", None) or "utf-8"
    raw = io.TextIOWrapper(
        io.FileIO(fd, "w"), encoding=encoding, errors="backslashreplace", line_buffering=True
    )
    quiet = cast("IO[str]", QuietStream(raw))
    return cast("IO[str]", RedactingStream(quiet)) if isinstance(stream, RedactingStream) else quiet


def _exit_code(exc: SystemExit) -> int:
    code = exc.code
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    sys.stderr.write(f"{code}\n")
    return 1


def _die_with(parent: int) -> None:
    """Have the kernel kill this child when the parent dies (Linux), so it never outlives it."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):
        pass
    if os.getppid() != parent:  # the parent died before the request was made
        os._exit(1)


def _parent(pid: int, read_end: int, where: str) -> NoReturn:
    passed_on: set[int] = set()

    def pass_on(signum: int, _frame: object) -> None:
        passed_on.add(signum)
        with contextlib.suppress(ProcessLookupError):  # the child already reaped
            os.kill(pid, signum)

    # SIGINT too: one sent to this process alone (``kill -INT``, a supervisor) reached no one
    # while it was ignored here, and the command finished with exit 0. A terminal's Ctrl-C
    # reaches the child twice so: it stops on the first (``_interrupted_once``).
    for forwarded in (signal.SIGINT, *_FORWARDED):
        signal.signal(forwarded, pass_on)
    held = _relay(read_end)
    status = _wait(pid)
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        if number in _CRASHES:
            _report_crash(number, held, where)
        _to_stderr(held)
        if number in passed_on:  # always one of _FORWARDED, whose handlers can be reset
            signal.signal(number, signal.SIG_DFL)
            resume_workflow_commands()
            os.kill(os.getpid(), number)  # end as the child did, by the signal sent to us
        _report_killed(pid, number)
    _to_stderr(held)
    _exit(os.waitstatus_to_exitcode(status))


def _exit(code: int) -> NoReturn:
    """The parent's end: ``os._exit``, which skips the resumption ``command`` does on its way
    out, so it is done here (``oloproof.cli.style.resume_workflow_commands``)."""
    resume_workflow_commands()
    os._exit(code)


def _to_stderr(data: bytes) -> None:
    """Write ``data`` to descriptor 2; when it cannot be written (``2> /dev/full``) there is
    nowhere to say so, and the exit code stays the command's."""
    if data:
        with contextlib.suppress(OSError):
            os.write(2, data)


def _relay(read_end: int) -> bytes:
    """Pass the child's C-level stderr through, line by line, keeping back LMDB's
    assertion lines; return those."""
    held = b""
    pending = b""
    while True:
        try:
            chunk = os.read(read_end, 65536)
        except InterruptedError:  # pragma: no cover - retried by Python itself since 3.5
            continue
        if not chunk:
            break
        pending += chunk
        lines, _, pending = pending.rpartition(b"\n")
        if lines:
            text = lines + b"\n"
            held += b"".join(_ASSERTION.findall(text))
            _to_stderr(_ASSERTION.sub(b"", text))
    os.close(read_end)
    return held + pending


def _wait(pid: int) -> int:
    while True:
        try:
            return os.waitpid(pid, 0)[1]
        except InterruptedError:  # pragma: no cover - retried by Python itself since 3.5
            continue


def _report_killed(pid: int, number: int) -> NoReturn:
    """One sentence for a child killed by a signal the parent did not pass on; exit 128 + N."""
    command = command_of(sys.argv[1:]) or "oloproof"
    name = _signal_name(number)
    source = (
        " (the out-of-memory killer or a `kill -9` sends SIGKILL)"
        if number == signal.SIGKILL
        else ""
    )
    sys.stderr.write(
        f"error: the {command} command's process (pid {pid}) was killed by {name} before it "
        f"finished, so what it printed is incomplete{source}\n"
    )
    sys.stderr.flush()
    _exit(_SHELL_SIGNALLED + number)


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:  # a real-time signal, which has no name of its own
        return f"signal {number}"


def _report_crash(number: int, held: bytes, where: str) -> NoReturn:
    from oloproof.store import DAMAGE_HINT

    name = signal.Signals(number).name
    found = re.search(rb"Assertion '.*' failed in \w+\(\)", held)
    if found:
        said = found.group(0).decode("utf-8", "replace")
        text = (
            f"the ledger at {where} is damaged below its events: LMDB stopped with {name} ({said})"
        )
    elif number == signal.SIGBUS:
        text = (
            f"the ledger at {where} is damaged: reading it touched a page past the end of its "
            "file (SIGBUS)"
        )
    else:
        text = f"the command stopped with {name} while reading the ledger at {where}"
    sys.stderr.write(f"error: {text} ({DAMAGE_HINT})\n")
    sys.stderr.flush()
    _exit(2)
