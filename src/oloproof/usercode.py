"""What user code raised, told apart from a real Ctrl-C or SIGTERM.

A system, stage or evaluator may raise anything, ``BaseException`` subclasses included, and may
call ``sys.exit``: each of those costs only the case (or the judgment) it happened in. Only a
signal sent to the process interrupts a run. A ``KeyboardInterrupt`` looks the same whoever
raised it, so the signals themselves are noted here: the CLI installs ``on_sigint`` as the
SIGINT handler, and ``oloproof.aio`` notes the signals it handles while a run executes.
``received()`` then says whether a ``KeyboardInterrupt`` can be a real one.

Kept free of asyncio and pydantic (``redaction`` needs only the standard library): the CLI
imports it as it starts.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable
from types import FrameType
from typing import Any, Final, NoReturn

from oloproof import redaction

_received: set[int] = set()
# ``os._exit`` itself, taken before ``hold_hard_exits`` puts its own in place: for the CLI's
# end, which user code's threads would otherwise hold (``oloproof.cli.main``).
real_exit: Final = os._exit
# The platform module ``os`` takes these from (``posix``, ``nt``), whose names code can call too.
_PLATFORM: Final = sys.modules[real_exit.__module__]
# ``os.execv`` and ``os.execve`` themselves: every ``os.exec*`` function calls one of them.
_REAL_EXECS: Final[dict[str, Callable[..., NoReturn]]] = {
    name: getattr(os, name) for name in ("execv", "execve")
}


class HardExit(SystemExit):
    """User code called ``os._exit``, or an ``exec`` function that would replace the process
    with another program; raised in its place (``hold_hard_exits``). ``call``: what it called."""

    def __init__(self, call: str) -> None:
        super().__init__(f"it called {call}")


def hold_hard_exits() -> None:
    """From now on ``os._exit`` in this process raises ``HardExit`` rather than ending it.

    A system that calls it on the cases it would fail would otherwise end the run with the
    status it chose, 0 included, which CI reads as a passing gate; raised instead, it costs
    only that case (or, at import, refuses the run) like ``sys.exit``. So do ``os.execv``
    and ``os.execve`` (every ``os.exec*`` function calls one of them), which would end the run
    with the status of the program the process became. A child the process forks
    (multiprocessing) still exits, and runs another program, as it asks.
    """
    pid = os.getpid()

    def _exit(status: int) -> NoReturn:
        if os.getpid() != pid:
            real_exit(status)
        raise HardExit(f"os._exit({status})")

    _hold("_exit", _exit)
    for name, real in _REAL_EXECS.items():
        _hold(name, _held_exec(name, real, pid))


def _held_exec(name: str, real: Callable[..., NoReturn], pid: int) -> Callable[..., NoReturn]:
    """The exec function ``real`` (``os.NAME``), raising ``HardExit`` in the process ``pid``."""

    def held(*args: Any, **kwargs: Any) -> NoReturn:
        if os.getpid() == pid:
            raise HardExit(f"os.{name}")
        real(*args, **kwargs)

    return held


def _hold(name: str, held: Callable[..., NoReturn]) -> None:
    """Put ``held`` in place of ``os.NAME`` and of the platform module's own (``posix.NAME``),
    the same function by another name."""
    setattr(os, name, held)
    setattr(_PLATFORM, name, held)


def note_signal(signum: int) -> None:
    """Remember that signal ``signum`` reached the process."""
    _received.add(signum)


def received() -> bool:
    """Whether a SIGINT or SIGTERM reached the process since it started."""
    return bool(_received)


def on_sigint(signum: int, frame: FrameType | None) -> NoReturn:
    """A SIGINT handler that acts as Python's own and notes the signal first."""
    note_signal(signum)
    raise KeyboardInterrupt


def describe(exc: BaseException) -> str:
    """``Type: message`` for an exception; ``it called sys.exit(N)`` for a ``SystemExit``."""
    if isinstance(exc, HardExit):
        return str(exc)
    if isinstance(exc, SystemExit):
        code = "" if exc.code is None else message_of(exc.code, repr)
        return f"it called sys.exit({code})"
    text = message_of(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


# Characters of a text of user code (an exception's message) a record keeps: what says what
# went wrong is at its start; a ``__str__`` giving megabytes would be stored with every case it
# fails, and printed again by ``inspect`` and written by ``export``.
MESSAGE_LIMIT: Final = 65_536


def message_of(value: object, write: Callable[[object], str] = str) -> str:
    """``str(value)`` (or ``write(value)``), or what Python's own tracebacks print in its place
    when the user's ``__str__`` (or ``__repr__``) raises, ``sys.exit`` included (``own_exit``);
    ``recordable`` either way, and its first ``MESSAGE_LIMIT`` characters, saying how many more
    were left out."""
    try:
        return _head(recordable(write(value)))
    except Exception:
        return f"<exception {write.__name__}() failed>"
    except BaseException as exc:
        if not own_exit(exc):
            raise
        return f"<exception {write.__name__}() failed>"


def user_failed(exc: BaseException) -> bool:
    """Whether ``exc``, raised by user code while Oloproof reads what it made, is that code
    failing (any ``Exception``, or its ``own_exit``), which costs only what was being read;
    else it is a real interruption, to pass on."""
    return isinstance(exc, Exception) or own_exit(exc)


def _head(text: str) -> str:
    if len(text) <= MESSAGE_LIMIT:
        return text
    # Never cut inside a configured secret: its first characters would not be recognised as it.
    head = redaction.cut(text, MESSAGE_LIMIT)
    return f"{head} [... {len(text) - len(head):,} more characters not kept ...]"


def own_exit(exc: BaseException) -> bool:
    """Whether ``exc``, raised by user code, is only that code's own way out: ``sys.exit``
    (``os._exit`` too, held as ``HardExit``), a ``KeyboardInterrupt`` no signal sent, a
    ``GeneratorExit``. Escaping where Oloproof reads what the code made (an exception's text),
    it would end the command with the status the code chose, 0 included, printing nothing."""
    if isinstance(exc, KeyboardInterrupt):
        return not received()
    return isinstance(exc, SystemExit | GeneratorExit)


# A surrogate code point (U+D800-U+DFFF): no UTF-8 text holds one, so the ledger cannot either.
_SURROGATE: Final = re.compile("[\ud800-\udfff]")


def lone_surrogate(text: str) -> str | None:
    """What is wrong with ``text``, in the words of the one who made it, when it holds a lone
    surrogate (the encoder's own words name a codec and a position in nothing the user knows);
    None when it holds none."""
    found = None if text.isascii() else _SURROGATE.search(text)
    if found is None:
        return None
    return (
        f"holds a lone surrogate {found.group()!r} (at character {found.start()}), a character "
        "no UTF-8 text can hold: half of a UTF-16 pair, or a byte that was not UTF-8 read with "
        "errors='surrogateescape'"
    )


def recordable(text: str) -> str:
    """``text`` with each lone surrogate (U+D800-U+DFFF, which no UTF-8 text holds) written as
    its escape, ``\\udc80``, as Python's ``backslashreplace`` does.

    Python decodes a file name it cannot read as UTF-8 into such characters, so an exception of
    user code may well carry one; kept as it is, the ledger could not store the case's error
    and the run would stop on it.
    """
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def unrecordable_path(path: str) -> str | None:
    """Why a run (or a calibration) cannot record the file ``path`` names: its name holds bytes
    that are not UTF-8 (Python reads them as lone surrogates), which the ledger refuses naming
    nothing; None when it can."""
    shown = recordable(path)
    if shown == path:
        return None
    return (
        f"{shown}: its name holds bytes that are not UTF-8 text (written here as \\udcXX), "
        "which the ledger cannot record; rename it"
    )
