"""``oloproof.diagnose`` called where an event loop runs already (a notebook's cell, an async
program) says so and what to do instead, as ``evaluate`` does, and writes nothing; it used to
raise asyncio's "Cannot run the event loop while another loop is running" and warn of three
coroutines never awaited. Run in a Python process of its own, as a notebook would."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.support import oloproof

from oloproof import events as ev
from oloproof.store import open_project_ledger

SCRIPT = """
import asyncio, json, oloproof

async def cell():
    ledger = oloproof.open_project_ledger(".", create=False)
    try:
        oloproof.diagnose(ledger, "latest", intervention="gold-context", criterion="answer_correct")
    except Exception as e:
        print(json.dumps([type(e).__name__, str(e)]))
    try:  # what the error says to do
        await asyncio.to_thread(
            oloproof.diagnose, ledger, "latest", intervention="gold-context",
            criterion="answer_correct",
        )
        print(json.dumps(["diagnosed"]))
    finally:
        ledger.close()

asyncio.run(cell())
"""


def test_diagnose_in_a_running_loop_says_what_to_do(support: Path) -> None:
    assert oloproof("run", cwd=support).code == 3
    done = subprocess.run(
        [sys.executable, "-W", "error::RuntimeWarning", "-c", SCRIPT],
        cwd=support,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""  # no coroutine left unawaited
    refused, diagnosed = (json.loads(line) for line in done.stdout.splitlines())
    assert refused == [
        "ConfigError",
        "diagnose() runs an event loop of its own, and this thread is running one already (a "
        "notebook, an async program): call it in a thread: await asyncio.to_thread(diagnose, "
        "ledger, run, ...)",
    ]
    assert diagnosed == ["diagnosed"]
    # The refused call recorded nothing: the one diagnosis is the one made in the thread.
    with open_project_ledger(support, create=False) as ledger:
        assert len(list(ledger.events(ev.DIAGNOSIS))) == 1
