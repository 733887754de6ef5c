"""Run the real CLI on a real pseudo-terminal (the stdlib's pty), as a person's shell does."""

from __future__ import annotations

import os
import pty
import re
import struct
import subprocess
import sys
import termios
import threading
from dataclasses import dataclass
from fcntl import ioctl
from pathlib import Path

_ESCAPE = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


@dataclass
class Screen:
    code: int
    raw: str
    """Everything the program wrote to the terminal, escape codes and all."""
    piped: str = ""
    """What it wrote to stdout when stdout was a pipe."""

    @property
    def plain(self) -> str:
        """The text without escape codes, carriage-return overwrites resolved per line."""
        text = _ESCAPE.sub("", self.raw).replace("\r\n", "\n")
        return "\n".join(line.split("\r")[-1] for line in text.split("\n"))

    @property
    def lines(self) -> list[str]:
        return self.plain.splitlines()


def on_terminal(
    *args: str,
    cwd: Path,
    columns: int = 80,
    env: dict[str, str] | None = None,
    stdout_terminal: bool = True,
    timeout: float = 120,
) -> Screen:
    """Run ``oloproof ARGS`` with stderr (and stdout, unless told not to) on a terminal
    ``columns`` wide; COLUMNS is removed so the width comes from the terminal itself."""
    primary, secondary = pty.openpty()
    ioctl(secondary, termios.TIOCSWINSZ, struct.pack("HHHH", 40, columns, 0, 0))
    environment = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "NO_COLOR")}
    environment.pop("FORCE_COLOR", None)
    environment.update({"TERM": "xterm-256color", **(env or {})})
    stdout = secondary if stdout_terminal else subprocess.PIPE
    proc = subprocess.Popen(
        [sys.executable, "-m", "oloproof", *args],
        cwd=cwd,
        stdin=secondary,
        stdout=stdout,
        stderr=secondary,
        env=environment,
    )
    os.close(secondary)
    piped: list[bytes] = []
    # The pipe is drained beside the terminal, so neither can fill and stall the other.
    reader = threading.Thread(
        target=lambda: piped.append(proc.stdout.read() if proc.stdout else b"")
    )
    reader.start()
    seen = b""
    while True:
        try:
            chunk = os.read(primary, 65536)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        seen += chunk
    code = proc.wait(timeout=timeout)
    reader.join(timeout)
    if proc.stdout is not None:
        proc.stdout.close()
    os.close(primary)
    return Screen(code, seen.decode("utf-8", "replace"), b"".join(piped).decode("utf-8"))
