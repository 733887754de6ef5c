"""A compaction and every other opening of the ledger exclude each other, with no window.

The compaction's ``choose`` callback runs while it holds the open lock alone (after it has
looked for other processes, before the rename), so whatever the callback starts meets the
compaction mid-way, deterministically: another process that opens the ledger to write or to
read, another thread of the compacting process, a second compaction. Each is refused with
one sentence before it touches the store, and the compaction carries on and verifies.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from ledger import Event, Ledger, LedgerError, StoreError, compact_ledger, open_ledger

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="flock is POSIX")

OPENER = """
import sys
from ledger import Event, LedgerError, compact_ledger, open_ledger

path, how = sys.argv[1], sys.argv[2]
try:
    if how == "compact":
        compact_ledger(path, lambda ledger: ["last"])
    else:
        with open_ledger(path, readonly=how == "read") as ledger:
            if how == "write":
                ledger.put(Event("late", 1, {}))
            print(len(ledger))
except LedgerError as exc:
    print(exc)
    sys.exit(2)
"""


def open_elsewhere(path: Path, how: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", OPENER, str(path), how], capture_output=True, text=True
    )


def a_ledger(path: Path) -> None:
    with open_ledger(path) as ledger:
        for i in range(20):
            address = ledger.put(Event("note", 1, {"i": i}))
        ledger.set_ref("last", address)


def compact_meanwhile(path: Path, meanwhile: Callable[[], None]) -> None:
    def choose(ledger: Ledger) -> list[str]:
        meanwhile()
        return ["last"]

    compact_ledger(path, choose)


def test_other_processes_are_refused_while_the_ledger_is_compacted(tmp_path: Path) -> None:
    path = tmp_path / "l"
    a_ledger(path)
    seen: dict[str, subprocess.CompletedProcess[str]] = {}

    def meanwhile() -> None:
        for how in ("write", "read", "readwrite", "compact"):
            seen[how] = open_elsewhere(path, how)

    compact_meanwhile(path, meanwhile)
    said = (
        f"the ledger at {path} is being compacted by another process (pid {os.getpid()}): "
        "try again when the compaction is done\n"
    )
    for how, done in seen.items():
        assert (done.returncode, done.stdout, done.stderr) == (2, said, ""), how
    with open_ledger(path) as ledger:
        assert list(ledger.events("late")) == [] and len(ledger) == 1
        assert ledger.verify().ok
        ledger.put(Event("late", 1, {}))  # nothing is refused once the compaction is done
    # The refusals named the pid written into the lock file; the compaction emptied it.
    assert (path / "ledger" / "open.lock").read_text() == ""
    assert open_elsewhere(path, "read").stdout == "2\n"


def test_the_compacting_thread_may_open_the_ledger_and_no_other_thread_may(
    tmp_path: Path,
) -> None:
    path = tmp_path / "l"
    a_ledger(path)
    found: list[object] = []

    def elsewhere() -> None:
        try:
            open_ledger(path, readonly=True).close()
        except StoreError as exc:
            found.append(str(exc))

    def meanwhile() -> None:
        with open_ledger(path, readonly=False) as mine:  # the compacting thread: let through
            found.append(len(mine))
        thread = threading.Thread(target=elsewhere)
        thread.start()
        thread.join()

    compact_meanwhile(path, meanwhile)
    assert found == [
        20,
        f"the ledger at {path} is being compacted by another thread of this process "
        f"(pid {os.getpid()}): try again when the compaction is done",
    ]


def test_a_compaction_is_refused_while_another_opening_holds_the_ledger(
    tmp_path: Path,
) -> None:
    path = tmp_path / "l"
    a_ledger(path)
    with open_ledger(path) as reader:
        with pytest.raises(LedgerError) as refused:
            compact_ledger(path, lambda ledger: ["last"])
        # This very process holds it: not "another process" named by its own pid.
        assert str(refused.value) == (
            f"the ledger at {path} is open in this process: close it, then compact it"
        )
        assert len(reader) == 20
    compact_ledger(path, lambda ledger: ["last"])
    with open_ledger(path, readonly=True) as ledger:
        assert len(ledger) == 1
