"""One writer per run: a second writer of a run (a resume while the run executes, two resumes at
once) is refused while the first is alive, naming its pid; once the writer is gone (even by
``kill -9``) the run can be resumed."""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from tests.support import oloproof

from ledger import open_ledger
from oloproof import events as ev
from oloproof.errors import ConfigError
from oloproof.runner import execute_run, plan_run
from oloproof.store import open_project_ledger
from oloproof.stored_runs import load_run

APP = """
import sys, time
from pathlib import Path
from oloproof import system

@system(name="toy", version="1")
def run(case):
    if case["q"] == "slow":
        sys.stderr.write("waiting\\n")
        sys.stderr.flush()
        while not (Path(__file__).parent / "GO").exists():
            time.sleep(0.01)
    return {"answer": case["q"]}
"""
CONFIG = """\
system: {name: toy, version: "1", callable: "app:run"}
concurrency: 1
evaluators:
  - {type: contains, criterion: echo, field: answer, expected_field: answer}
policy: policy.yaml
"""
POLICY = "version: 1\nrules:\n  - {id: floor, metric: echo, min: 0.1}\n"
QUESTIONS = ["a", "b", "slow", "c"]


def _project(root: Path) -> Path:
    (root / "app.py").write_text(APP)
    (root / "oloproof.yaml").write_text(CONFIG)
    (root / "policy.yaml").write_text(POLICY)
    lines = [json.dumps({"id": q, "input": {"q": q}, "expected": {"answer": q}}) for q in QUESTIONS]
    (root / "cases.jsonl").write_text("\n".join(lines) + "\n")
    return root


def _start(root: Path, *args: str) -> subprocess.Popen[str]:
    """``oloproof ARGS`` in the background, returned once its system waits on the slow case."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "oloproof", *args],
        cwd=root,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stderr is not None
    assert proc.stderr.readline() == "waiting\n"
    return proc


def _latest_run(root: Path) -> str:
    # The newest run event: `latest` names only finished runs, and this one is still running.
    with open_ledger(root / ".oloproof") as ledger:
        newest = ledger.latest("type", ev.RUN)
        assert newest is not None
        return str(ledger.get(newest).body["run_id"])


def _written(root: Path) -> set[str]:
    with open_ledger(root / ".oloproof") as ledger:
        return {e.body["case_id"] for _, e in ledger.events(ev.CASE_RESULT)}


def test_a_run_has_one_writer_and_a_killed_writer_leaves_it_resumable(tmp_path: Path) -> None:
    root = _project(tmp_path)
    first = _start(root, "run")
    try:
        run_id = _latest_run(root)
        # Its only worker waits on the slow case, so no case finishes to flush on; the two it
        # finished before are written all the same, within seconds.
        deadline = time.monotonic() + 30
        while _written(root) != {"a", "b"}:
            assert time.monotonic() < deadline, f"still unwritten: {_written(root)}"
            time.sleep(0.2)
        # A resume while the run itself still executes.
        during = oloproof("run", "--resume", run_id, cwd=root, timeout=60)
        assert during.code == 2, during.out + during.err
        assert during.err == (
            f"error: run {run_id} is being written by another process (pid {first.pid}); "
            "wait for it to finish (or stop it) and resume then\n"
        )
    finally:
        first.send_signal(signal.SIGKILL)  # a crash: the lock must die with the process
        first.communicate(timeout=60)
    # With no run_end, `runs` and `inspect --failures` count what the ledger holds of the run.
    written = _written(root)
    assert written == {"a", "b"}
    rows = json.loads(oloproof("runs", "--json", cwd=root).out)
    row = next(r for r in rows if r["run_id"] == run_id)
    assert (row["state"], row["cases"], row["errored"]) == ("interrupted", len(written), 0)
    listed = oloproof("inspect", run_id, "--failures", cwd=root)
    assert listed.lines[0] == f"{4 - len(written)} of 4 cases failed, errored or did not finish"
    assert [line for line in listed.lines if line in QUESTIONS] == [
        q for q in QUESTIONS if q not in written
    ]
    second = _start(root, "run", "--resume", run_id)
    try:
        # Two resumes at once: the second is refused while the first is alive.
        twice = oloproof("run", "--resume", run_id, cwd=root, timeout=60)
        assert twice.code == 2, twice.out + twice.err
        assert f"is being written by another process (pid {second.pid})" in twice.err
        (root / "GO").touch()
        out, err = second.communicate(timeout=120)
    finally:
        if second.poll() is None:
            second.kill()
            second.communicate()
    assert second.returncode == 0, out + err
    assert out.splitlines()[0] == f"Run {run_id} [DECIDED/COMPLETE]"
    with open_ledger(root / ".oloproof") as ledger:
        results = [e.body["case_id"] for _, e in ledger.events(ev.CASE_RESULT)]
        ends = [e.body["state"] for _, e in ledger.events(ev.RUN_END)]
        decisions = list(ledger.events(ev.DECISION))
    assert sorted(results) == sorted(QUESTIONS)  # each case executed and recorded once
    assert ends == ["complete"] and len(decisions) == 1
    assert not list((root / ".oloproof" / "locks").iterdir())  # the writer let go
    again = oloproof("run", "--resume", run_id, cwd=root)
    assert again.code == 2 and "is complete" in again.err


def test_a_second_writer_that_waited_out_the_first_finds_the_run_complete(
    tmp_path: Path,
) -> None:
    """A writer that planned a resume while another one ran, and starts after that one has
    finished the run: the run is complete by then, and it records nothing."""
    root = _project(tmp_path)
    (root / "GO").touch()
    first = oloproof("run", cwd=root)
    assert first.code == 0, first.err
    run_id = first.lines[0].split()[1]
    with open_project_ledger(root, create=False) as ledger:
        before = sum(1 for _ in ledger.events())
        stored = load_run(ledger, run_id)
        # What a writer holds once it has planned: the plan and the run's event.
        plan = plan_run(root / "oloproof.yaml")
        resume = (stored.run_id, stored.address, stored.body)
        with pytest.raises(ConfigError, match=f"run {run_id} is complete; there is nothing"):
            asyncio.run(execute_run(ledger, plan, resume=resume))
        assert sum(1 for _ in ledger.events()) == before
