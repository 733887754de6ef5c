"""An async system that blocks the event loop: its case times out, and signals still stop the run.

Real runs in a subprocess. The system sleeps (``time.sleep``, a blocking call), spins in pure
Python or backtracks in a regular expression (C code that holds the GIL) inside ``async def``,
which holds the loop that would otherwise fire its timeout and handle Ctrl-C or SIGTERM.
"""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path

import pytest
from tests.support import interrupt_run, interrupted_fields, oloproof

APP = """
import os, re, sys, time
from oloproof import system

@system(name="blocking", version="1")
async def run(case):
    q = case["q"]
    if q in ("sleep", "spin", "swallow", "backtrack"):
        sys.stderr.write("blocking\\n")
        sys.stderr.flush()
        end = time.monotonic() + float(os.environ["BLOCK_S"])
        if q == "sleep":
            time.sleep(end - time.monotonic())
        elif q == "spin":
            while time.monotonic() < end:
                pass
        elif q == "backtrack":  # some 2**40 ways to try, in C, holding the GIL
            re.search(r"^(a+)+$", "a" * 40 + "!")
        else:
            while time.monotonic() < end:
                try:
                    time.sleep(end - time.monotonic())
                except BaseException:
                    pass
    return {"answer": q.upper()}
"""

CONFIG = """\
system: {{name: blocking, version: "1", callable: app:run}}
dataset: cases.jsonl
concurrency: 1
timeout_s: {timeout}
evaluators:
  - {{type: contains, criterion: shouts, field: answer, expected_field: answer}}
policy: policy.yaml
"""


def project(root: Path, questions: list[str], timeout: float) -> Path:
    (root / "app.py").write_text(APP)
    (root / "oloproof.yaml").write_text(CONFIG.format(timeout=timeout))
    (root / "policy.yaml").write_text(
        "version: 1\nrules:\n  - {id: floor, metric: shouts, min: 0.5}\n"
    )
    lines = [
        json.dumps({"id": f"c{i}", "input": {"q": q}, "expected": {"answer": q.upper()}})
        for i, q in enumerate(questions)
    ]
    (root / "cases.jsonl").write_text("\n".join(lines) + "\n")
    return root


def case_error(root: Path, run_id: str, case_id: str) -> str:
    shown = oloproof("inspect", run_id, "--case", case_id, cwd=root)
    assert shown.code == 0, shown.err
    return next((line.strip() for line in shown.lines if line.startswith("  error: ")), "")


# A 5 s block leaves the timer (it looks every 0.25 s once a case is overdue) four seconds to
# stop it before it would end of itself, however busy the machine.
@pytest.mark.parametrize(
    ("block", "held_s"), [("sleep", 3600), ("spin", 3600), ("sleep", 5), ("backtrack", 0)]
)
def test_a_case_that_blocks_the_loop_times_out_and_the_run_goes_on(
    tmp_path: Path, block: str, held_s: float
) -> None:
    root = project(tmp_path, ["hello", block, "world"], timeout=1)
    started = time.monotonic()
    result = oloproof("run", cwd=root, env={"BLOCK_S": str(held_s)}, timeout=60)
    assert time.monotonic() - started < 30
    assert result.code == 3, result.err  # one case errored: the floor cannot be shown
    assert "2 / 2 observed · 1 missing · 0 excluded" in result.out
    run_id = result.lines[0].split()[1]
    assert case_error(root, run_id, "c1") == (
        "error: TimeoutError: the case took longer than 1 s and held up the event loop "
        "(blocking code in an async system)"
    )
    assert case_error(root, run_id, "c0") == case_error(root, run_id, "c2") == ""


def test_code_that_swallows_the_stop_still_times_out(tmp_path: Path) -> None:
    # It catches what is raised in it and sleeps on until its own end, 5 s later: the case
    # still took longer than its timeout, and it is recorded so.
    root = project(tmp_path, ["hello", "swallow"], timeout=1)
    result = oloproof("run", cwd=root, env={"BLOCK_S": "5"}, timeout=60)
    assert result.code == 3, result.err
    run_id = result.lines[0].split()[1]
    assert case_error(root, run_id, "c1").startswith(
        "error: TimeoutError: the case took longer than 1 s and held up"
    )


@pytest.mark.parametrize(("stop", "status"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_stops_a_run_whose_loop_is_held(
    tmp_path: Path, stop: signal.Signals, status: int
) -> None:
    # The timeout is an hour away: only the signal can end this run.
    root = project(tmp_path, ["hello", "sleep", "world"], timeout=3600)
    # Sent half a second after the marker: the loop is held by then, not merely about to be.
    code, out, err = interrupt_run(
        root, "blocking\n", stop, {"BLOCK_S": "3600"}, timeout=30, settle=0.5
    )
    assert code == status, out + err
    fields = interrupted_fields(root, err)
    assert fields[5].startswith("1 of 3 answered"), fields  # hello, finished before, is kept
