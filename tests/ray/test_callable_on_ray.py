"""A plain callable system on a real Ray cluster: 5,000 cases, exceptions of every kind, a
malformed artifact, a worker killed mid-run, a worker that keeps dying, and Ctrl-C."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.ray.projects import callable_project, many_cases, staged_project
from tests.ray.support import (
    RayCluster,
    content_events,
    engine_record,
    report,
    run_id_of,
    run_records,
)
from tests.support import oloproof

from ledger import open_ledger

RAISED = {"ValueError", "SystemExit", "KeyboardInterrupt", "Odd", "CancelledError", "RuntimeError"}


def test_five_thousand_cases_on_ray_equal_a_local_run(tmp_path: Path, cluster: RayCluster) -> None:
    cases = many_cases(5_000)
    local = callable_project(tmp_path / "local", cases)
    remote = callable_project(tmp_path / "ray", cases)
    here = oloproof("run", cwd=local, timeout=600)
    there = cluster.run("run", "--engine", cluster.address, cwd=remote)
    assert (here.code, there.code) == (0, 0), there.err
    assert report(there) == report(here)
    assert "errored" in there.out  # the report counts the cases that raised
    events = content_events(remote)
    assert events == content_events(local)
    assert len(events["oloproof.execution"]) == 5_000
    assert run_records(remote, run_id_of(there)) == run_records(local, run_id_of(here))
    # Each kind of exception was recorded, with its traceback, as the same errored case.
    with open_ledger(remote / ".oloproof") as ledger:
        errors = [
            e.body["error"]
            for _, e in ledger.events("oloproof.execution")
            if e.body["status"] == "errored"
        ]
    assert {e["type"] for e in errors} == RAISED
    assert len(errors) == len([c for c in cases if "do" in c])
    # Tracebacks name files by their place on the import path, never the machine's folders.
    assert all(str(tmp_path) not in e["traceback"] for e in errors)
    assert any('File "app.py"' in e["traceback"] for e in errors)


def test_a_malformed_artifact_stops_the_run_on_ray_as_it_does_locally(
    tmp_path: Path, cluster: RayCluster
) -> None:
    cases = [{"n": i, "q": f"q{i}", **({"do": "malformed"} if i == 3 else {})} for i in range(6)]
    local = callable_project(tmp_path / "local", cases)
    remote = callable_project(tmp_path / "ray", cases)
    here = oloproof("run", cwd=local)
    there = cluster.run("run", "--engine", cluster.address, cwd=remote)
    assert (here.code, there.code) == (2, 2)
    assert there.err == here.err
    assert "case 'c00003': malformed Passage artifact: doc_id:" in there.err
    assert "Traceback" not in there.err
    assert _states(remote) == _states(local) == [("stopped", here.err.split(": ", 1)[1].strip())]


def test_a_killed_worker_costs_only_its_case_which_runs_again_elsewhere(
    tmp_path: Path, cluster: RayCluster
) -> None:
    cases = [{"n": i, "q": f"q{i}", **({"do": "victim"} if i == 2 else {})} for i in range(40)]
    local = callable_project(tmp_path / "local", cases)
    (local / "victim.pid").write_text("0")  # locally the victim does not wait
    here = oloproof("run", cwd=local)
    # One case at a time per replica: the victim is the only case its replica loses.
    remote = callable_project(
        tmp_path / "ray",
        cases,
        engine={"kind": "ray", "address": cluster.address, "concurrency": 1},
    )
    proc = _start(cluster, remote, "run")
    pid = int(_wait_for(lambda: _read(remote / "victim.pid"), proc))
    os.kill(pid, signal.SIGKILL)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == here.code == 0, err
    assert out.startswith("Run run_"), out  # nothing of Ray's on the report's stream
    run_id = out.splitlines()[0].split()[1]
    assert run_records(remote, run_id) == run_records(local, run_id_of(here))
    assert content_events(remote) == content_events(local)
    assert engine_record(remote, run_id) == {
        "kind": "ray",
        "replicas": 2,
        "worker_deaths": 1,
        "replicas_stopped": 0,
        "resent": 1,
    }


def test_a_case_that_keeps_killing_its_worker_errors_after_the_retry_limit(
    tmp_path: Path, cluster: RayCluster
) -> None:
    cases = [{"n": i, "q": f"q{i}", **({"do": "doom"} if i == 1 else {})} for i in range(10)]
    engine = {"kind": "ray", "address": cluster.address, "concurrency": 1, "max_retries": 1}
    remote = callable_project(tmp_path / "ray", cases, engine=engine)
    done = cluster.run("run", cwd=remote)
    assert done.code == 0, done.err
    assert "answered" in done.out
    with open_ledger(remote / ".oloproof") as ledger:
        errored = [
            e.body for _, e in ledger.events("oloproof.execution") if e.body["status"] == "errored"
        ]
    assert [e["input"]["n"] for e in errored] == [1]
    assert errored[0]["error"] == {
        "type": "WorkerDied",
        "message": "the Ray worker running the case died 2 times (engine.max_retries: 1)",
        "traceback": "",
    }
    record = engine_record(remote, run_id_of(done))
    assert record is not None
    assert (record["worker_deaths"], record["resent"]) == (2, 1)


def test_a_case_that_kills_its_worker_is_resent_alone_and_its_neighbours_are_not_blamed(
    tmp_path: Path, cluster: RayCluster
) -> None:
    # Four cases at once on one replica: the one that crashes it takes the three beside it
    # down each time. Sent again together, all four died again and all four were recorded
    # as WorkerDied; a case whose worker died is now sent again alone.
    cases = [{"n": 0, "q": "q0", "do": "crash"}]
    cases += [{"n": i, "q": f"q{i}", **({"do": "beside"} if i <= 3 else {})} for i in range(1, 8)]
    engine = {
        "kind": "ray",
        "address": cluster.address,
        "replicas": 1,
        "concurrency": 4,
        "max_retries": 1,
    }
    remote = callable_project(tmp_path / "ray", cases, engine=engine)
    done = cluster.run("run", cwd=remote)
    assert done.code == 0, done.err
    with open_ledger(remote / ".oloproof") as ledger:
        executions = [e.body for _, e in ledger.events("oloproof.execution")]
    errored = [e for e in executions if e["status"] == "errored"]
    assert [e["input"]["n"] for e in errored] == [0]
    assert errored[0]["error"]["message"] == (
        "the Ray worker running the case died 2 times (engine.max_retries: 1)"
    )
    assert sorted(e["input"]["n"] for e in executions if e["status"] == "ok") == list(range(1, 8))
    record = engine_record(remote, run_id_of(done))
    assert record is not None
    # The first crash took four cases down; the crashing case, sent again alone, died alone.
    assert (record["worker_deaths"], record["resent"]) == (2, 4)


def test_ctrl_c_stops_the_work_on_the_cluster_and_keeps_what_finished(
    tmp_path: Path, cluster: RayCluster
) -> None:
    cases = [{"n": i, "q": f"q{i}", **({"do": "block"} if i >= 5 else {})} for i in range(12)]
    local = callable_project(tmp_path / "local", cases)
    here = oloproof("run", cwd=local)
    engine = {"kind": "ray", "address": cluster.address, "concurrency": 1}
    remote = callable_project(tmp_path / "ray", cases, engine=engine)
    (remote / "hold").write_text("")
    proc = _start(cluster, remote, "run")
    # Two replicas, one case each: once two cases hold, the five before them have finished.
    blocked = _wait_for(lambda: _holding(remote, 2), proc)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 130, err
    assert "interrupted: finished cases are kept; finish with: oloproof run --resume run_" in err
    run_id = err.rsplit("--resume ", 1)[1].split()[0]
    with open_ledger(remote / ".oloproof") as ledger:
        finished = [e.body["case_id"] for _, e in ledger.events("oloproof.case_result")]
    assert sorted(finished) == [f"c{i:05d}" for i in range(5)]
    # Two replicas running one case each: no more than two cases were ever in flight (every
    # holding case sent to a replica announces itself).
    assert blocked == _holding(remote, 0)
    assert len(blocked) == 2
    for pid in blocked:  # the replicas holding the cases were stopped with the run
        _wait_for(lambda pid=pid: not _alive(pid), None)
    (remote / "hold").unlink()
    resumed = cluster.run("run", "--resume", run_id, cwd=remote)
    assert resumed.code == here.code == 0, resumed.err
    mine, theirs = run_records(remote, run_id), run_records(local, run_id_of(here))
    assert mine["cases"] == theirs["cases"]
    # The resumed end record counts every case of the run, the five of the first go and the
    # seven the resume executed, as the run made without a stop does.
    mine_end, theirs_end = dict(mine["ends"][-1]), dict(theirs["ends"][-1])
    assert mine_end["cache"]["execution"] == [0, 12, 0]
    assert mine_end == theirs_end


def _start(cluster: RayCluster, root: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "oloproof", *args],
        cwd=root,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **cluster.env},
    )


def _wait_for(probe: Callable[[], Any], proc: subprocess.Popen[str] | None) -> Any:
    """Poll ``probe`` until it gives something, failing if ``proc`` ends first or it takes
    minutes (the cluster's state is only visible through the project folder)."""
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        found = probe()
        if found:
            return found
        if proc is not None and proc.poll() is not None:
            raise AssertionError(f"the run ended first: {proc.communicate()}")
        time.sleep(0.05)
    raise AssertionError("waited five minutes")


def _read(path: Path) -> str | None:
    return path.read_text() if path.exists() else None


def _holding(root: Path, count: int) -> list[int] | None:
    found = sorted(root.glob("blocked-*"))
    found = [p for p in found if not p.name.endswith(".tmp")]
    return [int(p.read_text()) for p in found] if len(found) >= count else None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def _states(root: Path) -> list[tuple[str, str]]:
    with open_ledger(root / ".oloproof") as ledger:
        return [(e.body["state"], e.body["reason"]) for _, e in ledger.events("oloproof.run_end")]


def test_each_replica_builds_a_staged_system_once_and_the_driver_never(
    tmp_path: Path, cluster: RayCluster
) -> None:
    local = staged_project(tmp_path / "local", 40)
    here = oloproof("run", cwd=local)
    engine = {"kind": "ray", "address": cluster.address, "replicas": 2, "concurrency": 2}
    remote = staged_project(tmp_path / "ray", 40, engine=engine)
    there = cluster.run("run", cwd=remote)
    assert (here.code, there.code) == (0, 0), there.err
    assert report(there) == report(here)
    assert content_events(remote) == content_events(local)
    assert len(list(local.glob("built-*"))) == 1  # locally: once, in the one process
    built = sorted(remote.glob("built-*"))
    # Forty cases on two replicas: two constructions, one in each replica's process, none in
    # the driver's (which would be a third file).
    assert len(built) == 2, built
    assert all(p.read_text() == "built\n" for p in built)
