"""An export that runs out of room leaves nothing behind on the device, through the real CLI.

The probe: `oloproof export RUN --format jsonl --output DIR` onto a full device said so
(exit 2) but left the hidden temporary file it was writing (`.cases.jsonl.partial`, 45 KB) in
the output folder, taking the room the user had to free, and the `verdicts.jsonl` it had
written whole beside an earlier export's `cases.jsonl`: two tables of two exports. An export's
tables are now all written beside their places first and only then put in place, so a failed
export leaves what was there before and nothing more.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.support import TOY_CONFIG, TOY_POLICY, oloproof, tmpfs, write_project

APP = """
from oloproof import system

@system(name="toy", version="1")
def run(case):
    return {"answer": case["q"] * 2000}
"""


def test_a_full_device_keeps_no_half_export(tmp_path: Path) -> None:
    root = write_project(
        tmp_path / "p",
        app=APP,
        config=TOY_CONFIG,
        policy=TOY_POLICY,
        cases=(
            {"id": f"c{i}", "input": {"q": "x"}, "expected": {"answer": "x"}} for i in range(80)
        ),
    )
    small = json.loads(oloproof("run", "--limit", "2", "--json", cwd=root).out)["run_id"]
    run_id = json.loads(oloproof("run", "--json", cwd=root).out)["run_id"]
    with tmpfs(tmp_path / "small", "64k") as mount:
        out = mount / "results"
        earlier = oloproof("export", small, "--format", "jsonl", "--output", str(out), cwd=root)
        assert earlier.code == 0, earlier.err
        before = {p.name: p.read_bytes() for p in out.iterdir()}
        assert sorted(before) == ["cases.jsonl", "verdicts.jsonl"]
        done = oloproof("export", run_id, "--format", "jsonl", "--output", str(out), cwd=root)
        assert done.code == 2, done.out + done.err
        assert "No space left on device" in done.err and "Traceback" not in done.err
        # The earlier export whole, and nothing of this one (no .partial either).
        assert {p.name: p.read_bytes() for p in out.iterdir()} == before
