"""What user code raised, told apart from a real Ctrl-C or SIGTERM.

A system, stage or evaluator may raise anything, ``BaseException`` subclasses included, and may
call ``sys.exit``: each of those costs only the case (or the judgment) it happened in. Only a
signal sent to the process interrupts a run. A ``KeyboardInterrupt`` looks the same whoever
raised it, so the signals themselves are noted here: the CLI installs ``on_sigint`` as the
SIGINT handler, and ``oloproof.aio`` notes the signals it handles while a run executes.
``received()`` then says whether a ``KeyboardInterrupt`` can be a real one.

Kept free of asyncio and pydantic: the CLI imports it as it starts.
"""

from __future__ import annotations

from types import FrameType
from typing import NoReturn

_received: set[int] = set()


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
    if isinstance(exc, SystemExit):
        code = "" if exc.code is None else repr(exc.code)
        return f"it called sys.exit({code})"
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
