"""A cluster that goes away in the middle of a run.

The calls to its replicas then never end, and Ray waited a minute for the cluster to come back
before it ended the process itself: exit 1 (as if a rule had failed), Ray's own message, no
report and no end record. The run now notices within seconds, stops with one sentence (exit 2),
keeps the cases that finished, and ``--resume`` finishes the rest.
"""

from __future__ import annotations

import time
from pathlib import Path

from tests.ray.projects import callable_project
from tests.ray.support import RayCluster, run_records
from tests.ray.test_callable_on_ray import _holding, _start, _states, _wait_for
from tests.support import oloproof

from ledger import open_ledger


def test_a_cluster_gone_mid_run_stops_the_run_in_one_sentence_and_keeps_what_finished(
    tmp_path: Path,
) -> None:
    cases = [{"n": i, "q": f"q{i}", **({"do": "block"} if i == 5 else {})} for i in range(8)]
    local = callable_project(tmp_path / "local", cases)
    here = oloproof("run", cwd=local)
    cluster = RayCluster(num_cpus=2).start()
    try:
        engine = {"kind": "ray", "address": cluster.address, "replicas": 1, "concurrency": 1}
        remote = callable_project(tmp_path / "ray", cases, engine=engine)
        (remote / "hold").write_text("")
        proc = _start(cluster, remote, "run")
        # One case at a time: once the sixth holds its replica, the five before it finished.
        _wait_for(lambda: _holding(remote, 1), proc)
    finally:
        cluster.stop()
    began = time.monotonic()
    out, err = proc.communicate(timeout=120)
    assert time.monotonic() - began < 45  # Ray alone gives up after a minute
    assert proc.returncode == 2, err
    assert err.startswith(f"error: the Ray cluster at {cluster.address} stopped answering "), err
    assert err.rstrip("\n").endswith("; the cases that finished are kept")
    assert len(err.splitlines()) == 1 and out == ""
    with open_ledger(remote / ".oloproof") as ledger:
        (run_id,) = [e.body["run_id"] for _, e in ledger.events("oloproof.run")]
        finished = sorted(e.body["case_id"] for _, e in ledger.events("oloproof.case_result"))
    assert finished == [f"c{i:05d}" for i in range(5)]
    assert [state for state, _ in _states(remote)] == ["stopped"]
    (remote / "hold").unlink()
    resumed = oloproof("run", "--resume", run_id, "--engine", "local", cwd=remote)
    assert resumed.code == here.code, resumed.err
    here_id = here.out.split()[1]
    assert run_records(remote, run_id)["cases"] == run_records(local, here_id)["cases"]
