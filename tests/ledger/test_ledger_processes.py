"""Several processes: a writer killed with SIGKILL mid-batch, two writers appending at once."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ledger import Event, address_of, open_ledger

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="needs SIGKILL")

BATCH = 200

# The child writes batches forever, printing each batch's number once it has committed.
# A small initial map makes it grow the map inside the window where it may be killed.
CRASH_CHILD = """
import sys
from ledger import Event, open_ledger

path, round_ = sys.argv[1], int(sys.argv[2])
ledger = open_ledger(path, map_size=256 * 1024)
batch = 0
while True:
    with ledger.batch():
        for i in range(BATCH):
            ledger.put(Event("crash", 1, {"round": round_, "batch": batch, "i": i, "pad": "x" * 300}))
    print(batch, flush=True)
    batch += 1
""".replace("BATCH", str(BATCH))


def crash_event(round_: int, batch: int, i: int) -> Event:
    return Event("crash", 1, {"round": round_, "batch": batch, "i": i, "pad": "x" * 300})


def test_sigkill_mid_batch_loses_only_the_uncommitted_tail(tmp_path: Path) -> None:
    path = tmp_path / ".oloproof"
    committed: dict[int, int] = {}
    for round_, wait_for in enumerate((3, 6)):
        with subprocess.Popen(
            [sys.executable, "-c", CRASH_CHILD, str(path), str(round_)],
            stdout=subprocess.PIPE,
            text=True,
        ) as child:
            assert child.stdout is not None
            reported = [int(child.stdout.readline()) for _ in range(wait_for)]
            time.sleep(0.005 * round_)  # land somewhere else inside the next batch each round
            os.kill(child.pid, signal.SIGKILL)
            reported += [int(line) for line in child.stdout.read().split()]
        assert child.returncode == -signal.SIGKILL
        committed[round_] = max(reported)

    with open_ledger(path) as ledger:
        report = ledger.verify()
        assert report.ok, str(report)
        for round_, last in committed.items():
            # Every event of every batch reported committed is there ...
            for batch in range(last + 1):
                for i in range(BATCH):
                    assert ledger.has(address_of(crash_event(round_, batch, i)))
            # ... and each later batch is all there or not there at all.
            present = [
                sum(ledger.has(address_of(crash_event(round_, last + k, i))) for i in range(BATCH))
                for k in (1, 2)
            ]
            assert all(n in (0, BATCH) for n in present), present
        assert len(ledger) % BATCH == 0


WRITER = """
import sys
import time
from pathlib import Path
from ledger import Event, open_ledger

path, who, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
ledger = open_ledger(path, map_size=256 * 1024)
go = Path(path) / "go"
while not go.exists():
    time.sleep(0.001)
for start in range(0, count, 250):
    with ledger.batch():
        for i in range(start, start + 250):
            ledger.put(Event("w" + who, 1, {"i": i, "text": "y" * 100}))
ledger.close()
"""


def test_two_processes_append_at_once(tmp_path: Path) -> None:
    path = tmp_path / ".oloproof"
    open_ledger(path).close()
    count = 5000
    writers = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(path), who, str(count)])
        for who in ("0", "1")
    ]
    time.sleep(0.3)  # let both start and open the ledger before either writes
    (path / "go").touch()
    for writer in writers:
        assert writer.wait(timeout=120) == 0

    with open_ledger(path) as ledger:
        assert len(ledger) == 2 * count
        report = ledger.verify()
        assert report.ok, str(report)
        for who in ("0", "1"):
            found = [event.body["i"] for _, event in ledger.events("w" + who)]
            assert found == list(range(count))


GROWER = """
import sys
from ledger import Event, open_ledger

path, start, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
with open_ledger(path, map_size=256 * 1024) as ledger:
    with ledger.batch():
        for i in range(start, start + count):
            ledger.put(Event("grow", 1, {"i": i, "pad": "z" * 400}))
"""


def grow_in_another_process(path: Path, start: int, count: int = 4000) -> None:
    """Append ``count`` events from a child process whose small map has to grow for them."""
    subprocess.run([sys.executable, "-c", GROWER, str(path), str(start), str(count)], check=True)


def test_opening_while_another_process_grows_the_map(tmp_path: Path) -> None:
    """The window that made `open_ledger` fail with MDB_MAP_RESIZED: the environment is mapped
    at the size its file had, then another process grows the map and commits past it before
    the databases are opened. Reproduced without timing: the growth happens in that window."""
    from ledger import _lmdb
    from ledger.store import STORE_DIR

    path = tmp_path / ".oloproof"
    open_ledger(path, map_size=256 * 1024).close()
    env = _lmdb._acquire_env(path / STORE_DIR, readonly=False, map_size=256 * 1024)
    try:
        grow_in_another_process(path, 0)
        dbs = _lmdb._open_databases(env, path, readonly=False)
        assert set(dbs) >= {b"events", b"meta"}
    finally:
        _lmdb._release_env(env)
    with open_ledger(path, create=False) as ledger:
        assert len(ledger) == 4000


def test_an_open_ledger_reads_and_writes_after_another_process_grew_the_map(
    tmp_path: Path,
) -> None:
    path = tmp_path / ".oloproof"
    with open_ledger(path, map_size=256 * 1024) as ledger:
        first = ledger.put(Event("mine", 1, {"n": 0}))
        grow_in_another_process(path, 0)
        # Reads, a write, and a new open in this process all see the larger map.
        assert len(ledger) == 4001
        assert ledger.get(first).body == {"n": 0}
        second = ledger.put(Event("mine", 1, {"n": 1}))
        with open_ledger(path, map_size=256 * 1024, create=False) as again:
            assert again.has(second)
        grow_in_another_process(path, 4000)
        assert [e.body["n"] for _, e in ledger.events("mine")] == [0, 1]
        assert ledger.verify().ok
    # And a fresh process with a small map opens the grown ledger.
    check = "import sys; from ledger import open_ledger; print(len(open_ledger(sys.argv[1], map_size=1 << 16, create=False)))"
    out = subprocess.run(
        [sys.executable, "-c", check, str(path)], capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "8002"
