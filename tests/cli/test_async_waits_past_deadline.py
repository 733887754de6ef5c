"""An async system still waiting at its case's deadline is cancelled there, and its case times
out, however its code takes the cancellation.

Real runs in a subprocess; every case waits an hour unless cancelled, with ``timeout_s: 1``.
"""

from __future__ import annotations

import asyncio
import signal
import time
from pathlib import Path
from typing import Any

from tests.support import bundle_cases, echo_project, interrupt_run, interrupted_fields, oloproof

APP = """
import asyncio, sys
from oloproof import system

@system(name="waits", version="1")
async def run(case):
    q = case["q"]
    if q == "answer":
        return {"answer": q}
    sys.stderr.write("waiting\\n")
    sys.stderr.flush()
    try:
        await asyncio.sleep(3600)
    except asyncio.CancelledError:
        if q == "swallow":  # returns an answer, late
            return {"answer": q}
        if q == "replace":
            raise ValueError("cancelled, and said otherwise")
        if q == "wait-on":  # waits on after the cancellation, then answers
            await asyncio.sleep(0.5)
            return {"answer": q}
        raise
    return {"answer": q}
"""

CONFIG = """\
system: {name: waits, version: "1", callable: app:run}
dataset: cases.jsonl
concurrency: 8
timeout_s: 1
evaluators:
  - {type: contains, criterion: echoed, field: answer, expected_field: answer}
policy: policy.yaml
"""

TIMED_OUT = {"type": "TimeoutError", "message": "the case took longer than 1 s", "traceback": ""}


def project(root: Path, questions: list[str]) -> Path:
    return echo_project(root, APP, CONFIG, questions)


def cases_of(root: Path, run_id: str) -> dict[str, dict[str, Any]]:
    return {c["id"]: c for c in bundle_cases(root, run_id)}


def test_every_way_of_taking_the_cancellation_times_the_case_out(tmp_path: Path) -> None:
    questions = ["answer", "sleep", "swallow", "replace", "wait-on", "sleep", "answer"]
    root = project(tmp_path / "p", questions)
    started = time.monotonic()
    done = oloproof("run", cwd=root, timeout=60)
    # Each case was cancelled at its own deadline: side by side, not one after another.
    assert time.monotonic() - started < 20
    assert done.code == 3, done.out + done.err
    cases = cases_of(root, done.lines[0].split()[1])
    # An answer given after the deadline, the cancellation caught, is not taken for one.
    assert {i: c.get("error") for i, c in cases.items() if c["status"] == "errored"} == {
        f"c{i}": TIMED_OUT for i in range(1, 6)
    }
    assert cases["c0"]["verdicts"] == cases["c6"]["verdicts"] == {"echoed": {"s": "pass"}}


def test_ctrl_c_while_cases_wait_stops_the_run(tmp_path: Path) -> None:
    root = project(tmp_path / "p", ["answer", "sleep"])
    (root / "oloproof.yaml").write_text(CONFIG.replace("timeout_s: 1", "timeout_s: 3600"))
    code, out, err = interrupt_run(root, "waiting\n", signal.SIGINT, timeout=30, settle=0.5)
    assert code == 130, out + err
    fields = interrupted_fields(root, err)
    assert fields[5].startswith("1 of 2 answered"), fields


def test_a_case_whose_code_cancels_itself_is_errored_not_timed_out(tmp_path: Path) -> None:
    # A CancelledError the case's own code raised is its error, as before: only the deadline's
    # cancellation is a timeout.
    cancels = (
        "import asyncio\nfrom oloproof import system\n\n"
        '@system(name="waits", version="1")\n'
        "async def run(case):\n"
        "    raise asyncio.CancelledError('given up')\n"
    )
    root = echo_project(tmp_path / "cancels", cancels, CONFIG, ["x"])
    done = oloproof("run", cwd=root, timeout=60)
    assert done.code == 3, done.out + done.err
    error = cases_of(root, done.lines[0].split()[1])["c0"]["error"]
    assert (error["type"], error["message"]) == ("CancelledError", "given up")
    assert asyncio.CancelledError.__name__ in error["traceback"]
