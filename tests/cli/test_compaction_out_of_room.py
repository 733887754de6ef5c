"""A compaction that runs out of room while it writes its new store is refused in one sentence,
exit 2, leaves the ledger as it was, and takes its half-written store away with it: that store
had filled the device, so the next `run` failed for want of room the compaction had taken.

The device is a small tmpfs mounted under the test's folder (needs the right to mount, as root
in a container has; skipped otherwise), filled once the ledger is there until too little is
left for the new store.
"""

from __future__ import annotations

import os
from pathlib import Path

from tests.support import answered_project, oloproof, tmpfs

APP = "def answer(case):\n    return {'answer': case['q'] + ' ' + 'x' * 400}\n"
ROOM = 48 << 10  # what is left free: enough for the compaction's pid, not for its new store


def _free(path: Path) -> int:
    stat = os.statvfs(path)
    return stat.f_bavail * stat.f_frsize


def test_a_compaction_out_of_room_removes_what_it_wrote(tmp_path: Path) -> None:
    with tmpfs(tmp_path / "device", "4m") as device:
        root = answered_project(device / "project", APP)
        config = root / "oloproof.yaml"
        for version in "1234":  # each version executes every case again: a ledger to compact
            config.write_text(config.read_text().replace('version: "1"', f'version: "{version}"'))
            assert oloproof("run", cwd=root).code == 0
        runs = oloproof("runs", cwd=root)
        (device / "filler").write_bytes(b"\0" * (_free(device) - ROOM))
        before = _free(device)

        done = oloproof("ledger", "compact", "--keep-last", "4", cwd=root)

        assert (done.code, done.out) == (2, ""), done.err
        assert "Traceback" not in done.err
        where = root / ".oloproof" / "compact"
        assert done.err.splitlines()[-1] == (
            f"error: no space left on the device that holds {where}"
        )
        assert not where.exists()
        assert _free(device) == before
        assert oloproof("runs", cwd=root) == runs
        assert oloproof("verify", cwd=root).code == 0
