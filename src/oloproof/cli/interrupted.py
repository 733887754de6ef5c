"""How a command that Ctrl-C or SIGTERM stopped ends, wherever it was stopped.

Only the standard library and ``oloproof.errors``: ``oloproof.__main__`` imports it before the
command's modules, whose loading a Ctrl-C may stop, and ``oloproof --help`` must start fast.
"""

from __future__ import annotations

import sys
from typing import NoReturn

from oloproof.errors import Terminated


def interrupted_status(exc: KeyboardInterrupt) -> int:
    """The exit code of a command ``exc`` stopped: 143 for SIGTERM (``Terminated``), 130 for
    Ctrl-C, as a shell gives for a process those signals end."""
    return 143 if isinstance(exc, Terminated) else 130


def exit_interrupted(exc: KeyboardInterrupt) -> NoReturn:
    """Say ``interrupted`` on stderr and exit with ``interrupted_status``."""
    sys.stderr.write("interrupted\n")
    raise SystemExit(interrupted_status(exc)) from None
