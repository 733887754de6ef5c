"""A ledger on a file system mounted read-only: opened read-only it reads as anywhere, without
LMDB's lock file or the open lock when they are not there (nor made); opened for writing, or
created there, it is refused with ``ReadOnlyFileSystemError`` before anything is touched.

The mount is real (``tests.support.on_read_only_mount``); skipped where it cannot be made.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from tests.support import on_read_only_mount, read_only_mounts_refused

from ledger import Event, on_read_only_file_system, open_ledger

# Run in the read-only mount: what each way of opening the ledger in "kept" does there.
CHILD = """
import json
from pathlib import Path
from ledger import LedgerError, on_read_only_file_system, open_ledger

found = {"on_read_only": on_read_only_file_system("kept")}
with open_ledger("kept", readonly=True) as ledger:
    found["notes"] = [event.body["text"] for _, event in ledger.events("note")]
    found["latest"] = ledger.resolve("latest")
for name, path, readonly in [("write", "kept", False), ("create", "new", False)]:
    try:
        open_ledger(path, readonly=readonly).close()
        found[name] = "opened"
    except LedgerError as exc:
        found[name] = [type(exc).__name__, str(exc)]
print(json.dumps(found))
"""


@pytest.fixture
def kept(tmp_path: Path) -> tuple[Path, str]:
    """A folder holding the ledger ``kept`` of two notes, without its lock files (a copy of
    ``data.mdb`` alone), and the address ``latest`` names."""
    (tmp_path / "probe").mkdir()
    refused = read_only_mounts_refused(tmp_path / "probe")
    if refused is not None:
        pytest.skip(refused)
    folder = tmp_path / "media"
    with open_ledger(folder / "kept") as ledger:
        ledger.put(Event("note", 1, {"text": "one"}))
        latest = ledger.put(Event("note", 1, {"text": "two"}))
        ledger.set_ref("latest", latest)
    for name in ("lock.mdb", "open.lock"):
        (folder / "kept" / "ledger" / name).unlink()
    return folder, latest


def test_read_only_it_reads_and_written_to_it_refuses(
    kept: tuple[Path, str], tmp_path: Path
) -> None:
    folder, latest = kept
    mount = tmp_path / "mnt"
    done = on_read_only_mount(folder, mount, sys.executable, "-c", CHILD)
    assert done.code == 0, done.err
    found = json.loads(done.out)
    assert found["on_read_only"] is True and not on_read_only_file_system(folder / "kept")
    assert found["notes"] == ["one", "two"] and found["latest"] == latest
    assert found["write"] == [
        "ReadOnlyFileSystemError",
        "the ledger at kept is on a read-only file system, where it can only be read",
    ]
    assert found["create"] == [
        "ReadOnlyFileSystemError",
        "the ledger at new is on a read-only file system, where it can only be read",
    ]
    assert sorted(p.name for p in (folder / "kept" / "ledger").iterdir()) == ["data.mdb"]
    assert sorted(p.name for p in folder.iterdir()) == ["kept"]
