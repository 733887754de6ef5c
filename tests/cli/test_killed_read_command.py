"""A read command's worker killed by a signal no one sent the command ends in one sentence naming
the signal and exit 128 + its number, never in a traceback or an exit code that reads as a
finding (0, 1 or 3); a signal sent to the command itself still ends it as that signal would.

Read commands do their work in a forked child (``oloproof.cli.guard``). To kill that child while
it is surely alive, its standard output is a pipe of one page that the test does not read:
``inspect latest --json`` prints about 30 KB, so the child blocks on its first full page until
the test kills it.
"""

from __future__ import annotations

import fcntl
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.support import copy_example, oloproof

_PAGE = 4096
_DEADLINE_S = 60


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = copy_example("support_rag", tmp_path_factory.mktemp("killed"))
    done = oloproof("run", cwd=root)
    assert done.code in (0, 3), done.err
    return root


def _child_of(parent: int) -> int:
    """The pid of ``parent``'s one child, once it has forked it."""
    children = Path(f"/proc/{parent}/task/{parent}/children")
    deadline = time.monotonic() + _DEADLINE_S
    while time.monotonic() < deadline:
        found = children.read_text().split()
        if found:
            return int(found[0])
        time.sleep(0.01)  # polling for the fork, which the child then outlives (see the module)
    raise AssertionError("the command never forked its worker")


@pytest.fixture
def blocked_inspect(project: Path, tmp_path: Path) -> Iterator[tuple[subprocess.Popen[str], Path]]:
    """``inspect latest --json`` whose worker is blocked writing to a full one-page pipe; yields
    the process and the file its stderr goes to."""
    read_end, write_end = os.pipe()
    fcntl.fcntl(write_end, fcntl.F_SETPIPE_SZ, _PAGE)
    err = tmp_path / "stderr.txt"
    with err.open("w") as err_file:
        proc = subprocess.Popen(
            [sys.executable, "-m", "oloproof", "inspect", "latest", "--json"],
            cwd=project,
            stdout=write_end,
            stderr=err_file,
            text=True,
        )
    os.close(write_end)
    try:
        yield proc, err
    finally:
        proc.kill()
        proc.wait()
        os.close(read_end)


@pytest.mark.parametrize("stop", [signal.SIGKILL, signal.SIGTERM, signal.SIGUSR1])
def test_a_worker_killed_alone_is_one_sentence_and_128_plus_the_signal(
    blocked_inspect: tuple[subprocess.Popen[str], Path], stop: signal.Signals
) -> None:
    proc, err = blocked_inspect
    child = _child_of(proc.pid)
    os.kill(child, stop)
    assert proc.wait(timeout=_DEADLINE_S) == 128 + stop
    said = {
        signal.SIGKILL: " (the out-of-memory killer or a `kill -9` sends SIGKILL)",
    }.get(stop, "")
    assert err.read_text() == (
        f"error: the inspect command's process (pid {child}) was killed by {stop.name} before it "
        f"finished, so what it printed is incomplete{said}\n"
    )


def test_a_signal_sent_to_the_command_ends_it_as_that_signal(
    blocked_inspect: tuple[subprocess.Popen[str], Path],
) -> None:
    """SIGTERM to the command (a cancelled CI job) is passed on to the worker, and the command
    ends by it, silently, as any command killed so does."""
    proc, err = blocked_inspect
    _child_of(proc.pid)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=_DEADLINE_S) == -signal.SIGTERM
    assert err.read_text() == ""
