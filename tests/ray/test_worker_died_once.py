"""A case whose worker died once (``engine.max_retries: 0``) was stored as errored with the
message "died 1 times"; it now reads "died 1 time"."""

from __future__ import annotations

from pathlib import Path

from tests.ray.projects import callable_project
from tests.ray.support import RayCluster

from ledger import open_ledger


def test_a_worker_that_died_once_is_said_to_have_died_one_time(
    tmp_path: Path, cluster: RayCluster
) -> None:
    cases = [{"n": i, "q": f"q{i}", **({"do": "doom"} if i == 1 else {})} for i in range(3)]
    # One case at a time, and the first death errors the case.
    engine = {
        "kind": "ray",
        "address": cluster.address,
        "replicas": 1,
        "concurrency": 1,
        "max_retries": 0,
    }
    root = callable_project(tmp_path / "ray", cases, engine=engine)
    done = cluster.run("run", cwd=root)
    assert done.code == 0, done.err
    with open_ledger(root / ".oloproof") as ledger:
        errors = [
            e.body["error"]
            for _, e in ledger.events("oloproof.execution")
            if e.body["status"] == "errored"
        ]
    assert errors == [
        {
            "type": "WorkerDied",
            "message": "the Ray worker running the case died 1 time (engine.max_retries: 0)",
            "traceback": "",
        }
    ]
