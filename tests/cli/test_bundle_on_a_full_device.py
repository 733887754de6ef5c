"""A bundle export that runs out of room leaves the bundle that was there, and nothing more.

The probe: a project on a 3 MB device, its run exported once (`oloproof export RUN`), the device
then filled to 100 KB short of full and the run exported again. Before: exit 2 with one
sentence, as it should, but `.oloproof/bundles/RUN/cases.jsonl.tmp` stayed behind, as large as
all the room there was (the device at 100%), so the next command that writes anything (a table
export, the ledger of the next run) failed for want of the room the export had taken. Now the
export writes both files of the bundle beside their places before either is renamed in, and a
write that fails removes what it wrote: the earlier bundle is there as it was (its manifest
describing its cases file), and no temporary file is left: the device has the room it had.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from tests.support import oloproof, tmpfs, write_project

APP = """
def answer(case):
    return {"answer": case["q"] * 4000}
"""
CONFIG = """\
system: {name: big, version: "1", callable: app:answer}
dataset: cases.jsonl
evaluators:
  - {type: contains, criterion: mentions, field: answer, expected_field: answer}
"""
ROOM = 100 * 1024  # left free on the device: less than the bundle


def _free(path: Path) -> int:
    found = os.statvfs(path)
    return found.f_bavail * found.f_frsize


def test_a_full_device_keeps_the_earlier_bundle_and_no_temporary_file(tmp_path: Path) -> None:
    with tmpfs(tmp_path / "device", "3m") as device:
        root = write_project(
            device / "p",
            app=APP,
            config=CONFIG,
            policy="version: 1\nrules: []\n",
            cases=(
                {"id": f"c{i}", "input": {"q": f"x{i}"}, "expected": {"answer": "x"}}
                for i in range(60)
            ),
        )
        done = oloproof("run", "--json", cwd=root)
        assert done.code == 0, done.err
        run_id = json.loads(done.out)["run_id"]
        assert oloproof("export", run_id, cwd=root).code == 0
        bundle = root / ".oloproof" / "bundles" / run_id
        before = {p.name: p.read_bytes() for p in bundle.iterdir()}
        assert sorted(before) == ["cases.jsonl", "manifest.json"]
        assert len(before["cases.jsonl"]) > 2 * ROOM

        (device / "filler").write_bytes(b"\0" * (_free(device) - ROOM))
        room = _free(device)
        done = oloproof("export", run_id, cwd=root)
        assert done.code == 2, done.out + done.err
        assert done.err.startswith(f"error: cannot write the bundle of {run_id} into "), done.err
        assert "No space left on device" in done.err

        # Was: cases.jsonl.tmp beside them, and the device full.
        assert {p.name: p.read_bytes() for p in bundle.iterdir()} == before
        manifest = json.loads(before["manifest.json"])
        assert manifest["cases_sha256"] == hashlib.sha256(before["cases.jsonl"]).hexdigest()
        assert _free(device) == room
