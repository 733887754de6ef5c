"""Finished cases are written while a case holds the run's event loop, through the CLI.

The probe: 20 cases answered at once, then one that computes (a pure Python loop) for 30 s;
the run killed (SIGKILL) 10 s into it held none of the 20: ``0 of 60 answered · 60 missing``,
though the guide says what finished is written within about 4 to 6 seconds of the last
batch. A synchronous system that answers at once has its calls made on the event loop, and an
``async def`` system that blocks (``time.sleep``) holds it too, so the timer meant to write
them never had a turn. It is a thread now, which the interpreter hands a turn while Python
code runs.
"""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path

import pytest
from tests.support import (
    HELD_TOY_CONFIG,
    HOLDING_APP,
    oloproof,
    runs_fields,
    start_run,
    write_project,
)

POLICY = "version: 1\nrules:\n  - {id: floor, metric: echo, min: 0.5}\n"

# Case q20 holds the loop until a file `release` appears (or a minute passed): spinning in
# Python, or blocked in a sleep that never hands the loop a turn.
SYSTEMS = {
    "sync system computing": """
@system(name="toy", version="1")
def run(case):
    if case["q"] == "q20":
        sys.stderr.write("holding\\n")
        sys.stderr.flush()
        start = time.monotonic()
        while not (HERE / "release").exists() and time.monotonic() - start < 60:
            sum(range(10_000))
    return {"answer": case["q"]}
""",
    "async system blocking": """
@system(name="toy", version="1")
async def run(case):
    if case["q"] == "q20":
        sys.stderr.write("holding\\n")
        sys.stderr.flush()
        start = time.monotonic()
        while not (HERE / "release").exists() and time.monotonic() - start < 60:
            time.sleep(0.05)
    return {"answer": case["q"]}
""",
}


@pytest.mark.parametrize("system", SYSTEMS)
def test_finished_cases_are_written_while_a_case_holds_the_loop(
    tmp_path: Path, system: str
) -> None:
    cases = (
        {"id": f"c{i}", "input": {"q": f"q{i}"}, "expected": {"answer": f"q{i}"}} for i in range(30)
    )
    root = write_project(
        tmp_path / "p",
        app=HOLDING_APP + SYSTEMS[system],
        config=HELD_TOY_CONFIG,
        policy=POLICY,
        cases=cases,
    )
    proc = start_run(root, "holding\n")
    try:
        listed: list[dict[str, object]] = []
        deadline = time.monotonic() + 45  # written within seconds; this only bounds a hang
        while time.monotonic() < deadline:
            listed = json.loads(oloproof("runs", "--json", cwd=root).out)
            if listed and listed[0]["cases"] == 20:
                break
            time.sleep(0.5)
        # Was 0 until the held case ended: a kill then lost the 20 that finished before it.
        assert [row["cases"] for row in listed] == [20]
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=60)
    finally:
        (root / "release").touch()
        proc.kill()
    run_id = str(listed[0]["run_id"])
    fields = runs_fields(root, run_id)
    assert fields[3] == "INTERRUPTED" and fields[5] == "20 of 30 answered · 10 missing (10 not run)"
