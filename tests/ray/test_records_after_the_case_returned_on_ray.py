"""Records a system makes on a Ray replica after its case returned, through the real CLI.

The probe: the local engine's late records (tests/cli/test_records_after_the_case_returned.py)
on a real Ray cluster. An async system that hands ``current_case()`` to a task it starts and
does not await, the task recording the case's retrieval a moment later: on Ray the replica read
the case's records when it returned, the task's record raised where nobody looked, and 3 of 4
cases read ``no_retrieval_recorded``: ``mrr_at_5`` '1 / 1 observed · 0 missing · 3 excluded',
gate PASS, exit 0; so with a task recording while its replica ran the next case ('3 / 3
observed · 1 excluded'), a thread's or an executor call's late record, and a task still
running when the run decided (never waited for), holding its replica's loop, or ending its
replica's process: the same PASS.

Now each replica watches its cases' work as a local run does: a late record stops the run at
the replica's next case, or when the run, before it decides, asks every replica to wait (up to
the case timeout) for the work its cases started; work still running then stops it too. The
same one line as locally, exit 2, the run stopped with no gate. A replica that does not answer
within the driver's held limit (its loop blocked), or that died since its last case, stops the
run too: what that work records, or recorded, cannot count.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.cli.test_records_after_the_case_returned import (
    ERRORED_APP,
    LATE,
    TASK_APP,
    THREAD_APP,
    _project,
)
from tests.ray.support import RayCluster
from tests.support import oloproof


def _on_ray(tmp_path: Path, app: str, cluster: RayCluster, **engine: Any) -> Path:
    root = _project(tmp_path, app)
    settings = {"kind": "ray", "address": cluster.address, **engine}
    with (root / "oloproof.yaml").open("a") as f:
        f.write(f"engine: {json.dumps(settings)}\n")
    return root


def _stopped(root: Path, cluster: RayCluster, ending: str) -> str:
    """The line the run stopped with (it ends with ``ending``), having checked that it stopped
    with no gate, and that the run is recorded as stopped."""
    result = cluster.run("run", cwd=root, timeout=300)
    assert result.code == 2, result.out + result.err
    assert "Gate:" not in result.out, result.out
    said = [line for line in result.err.splitlines() if line.startswith("error:")]
    assert len(said) == 1, result.err
    assert said[0].startswith("error: case 'c"), said[0]
    assert said[0].endswith(ending), said[0]
    runs = oloproof("runs", cwd=root)
    assert " STOPPED " in runs.out, runs.out
    return said[0]


def test_a_task_recording_after_every_case_returned_stops_the_run_on_ray(
    tmp_path: Path, cluster: RayCluster
) -> None:
    # Every case returns before any task records: the replicas are asked before the run ends.
    app = TASK_APP.format(delay=0.3, takes=0, quick="")
    _stopped(_on_ray(tmp_path, app, cluster, replicas=2), cluster, LATE)


def test_a_task_recording_while_its_replica_runs_a_later_case_stops_the_run(
    tmp_path: Path, cluster: RayCluster
) -> None:
    # c1 returns at once, and its task records while c2 runs on the same replica.
    app = TASK_APP.format(delay=0.05, takes=0.3, quick="q1")
    said = _stopped(_on_ray(tmp_path, app, cluster, replicas=1, concurrency=1), cluster, LATE)
    assert said.startswith("error: case 'c1'"), said


def test_a_thread_recording_after_its_case_returned_stops_the_run_on_ray(
    tmp_path: Path, cluster: RayCluster
) -> None:
    # A sync system: c0 returns before its thread records, which it does while c1 runs.
    said = _stopped(_on_ray(tmp_path, THREAD_APP, cluster, replicas=1), cluster, LATE)
    assert said.startswith("error: case 'c0'"), said


def test_a_task_still_running_on_a_replica_when_the_run_would_end_stops_it(
    tmp_path: Path, cluster: RayCluster
) -> None:
    app = TASK_APP.format(delay=60, takes=0, quick="")
    _stopped(
        _on_ray(tmp_path, app, cluster, replicas=1),
        cluster,
        ": the system started an asyncio task (or executor call) that was still running 2 s "
        "after the last case returned; what it records once the run has ended cannot count "
        "for the case; wait for it before returning",
    )


def test_an_executor_call_recording_after_every_case_returned_stops_the_run_on_ray(
    tmp_path: Path, cluster: RayCluster
) -> None:
    app = TASK_APP.format(delay=0.05, takes=0, quick="").replace(
        "asyncio.create_task(later(current_case(), case))",
        "asyncio.get_running_loop().run_in_executor(None, recorded, current_case(), case)",
    )
    app += (
        "\n\ndef recorded(recorder, case):\n    import time\n\n    time.sleep(0.05)\n"
        "    recorder.retrieval(retrieval(case))\n"
    )
    _stopped(_on_ray(tmp_path, app, cluster, replicas=2), cluster, LATE)


def _stopped_by_the_engine(root: Path, cluster: RayCluster) -> str:
    """The one line a run stopped by the Ray engine itself said (no case to name)."""
    result = cluster.run("run", cwd=root, timeout=300)
    assert result.code == 2, result.out + result.err
    assert "Gate:" not in result.out, result.out
    said = [line for line in result.err.splitlines() if line.startswith("error:")]
    assert len(said) == 1, result.err
    assert " STOPPED " in oloproof("runs", cwd=root).out
    return said[0]


def test_a_task_holding_its_replica_s_loop_after_every_case_returned_stops_the_run(
    tmp_path: Path, cluster: RayCluster
) -> None:
    # It blocks the loop the replica would wait on: the driver stops waiting at the held limit
    # (2 s timeout: 12 s) rather than for as long as it blocks.
    app = TASK_APP.format(delay=1, takes=0, quick="").replace(
        "    await asyncio.sleep(DELAY)\n",
        "    await asyncio.sleep(DELAY)\n    __import__('time').sleep(60)\n",
    )
    said = _stopped_by_the_engine(_on_ray(tmp_path, app, cluster, replicas=1), cluster)
    assert said == (
        "error: a Ray replica held up its event loop for 12 s after its cases returned "
        "(blocking code in a task a case started); what it records once the run has ended "
        "cannot count for its case; wait for it before returning"
    ), said


def test_a_replica_that_died_after_its_cases_returned_stops_the_run(
    tmp_path: Path, cluster: RayCluster
) -> None:
    # Its process ended by a task a case left running: whatever that work recorded is gone.
    app = TASK_APP.format(delay=1, takes=0, quick="").replace(
        "    await asyncio.sleep(DELAY)\n",
        "    await asyncio.sleep(DELAY)\n    __import__('os')._exit(1)\n",
    )
    said = _stopped_by_the_engine(_on_ray(tmp_path, app, cluster, replicas=1), cluster)
    assert said == (
        "error: a Ray replica died after its cases returned: what the work they started "
        "recorded, if anything, was lost with it"
    ), said


def test_records_made_in_time_on_ray_count(tmp_path: Path, cluster: RayCluster) -> None:
    app = TASK_APP.format(delay=0.01, takes=0.2, quick="")
    result = cluster.run("run", cwd=_on_ray(tmp_path, app, cluster, replicas=2), timeout=300)
    assert result.code == 0, result.out + result.err
    assert "4 / 4 observed · 0 missing · 0 excluded" in result.out, result.out


def test_a_task_of_a_case_that_errored_on_ray_stops_nothing(
    tmp_path: Path, cluster: RayCluster
) -> None:
    # c1 errored: nothing it records counts, so its task's late record loses nothing.
    result = cluster.run("run", cwd=_on_ray(tmp_path, ERRORED_APP, cluster), timeout=300)
    assert result.code == 0, result.out + result.err
    assert "3 / 3 observed · 1 missing · 0 excluded" in result.out, result.out
