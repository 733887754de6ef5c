"""``engine.ship_project: true`` sends the project folder with the run.

Ray takes a local folder to send only when the driver connects (``ray.init``), not in an
actor's options, where the engine gave it: every run with ``ship_project: true`` ended in
Ray's traceback (ValueError: ... is not a valid URI), exit 1, as if a rule had failed.
"""

from __future__ import annotations

from pathlib import Path

from tests.ray.projects import callable_project, many_cases
from tests.ray.support import RayCluster, content_events, report, run_id_of, run_records
from tests.support import oloproof


def test_a_shipped_project_runs_on_ray_as_locally(tmp_path: Path, cluster: RayCluster) -> None:
    cases = many_cases(40)
    local = callable_project(tmp_path / "local", cases)
    engine = {"kind": "ray", "address": cluster.address, "replicas": 1, "ship_project": True}
    shipped = callable_project(tmp_path / "shipped", cases, engine=engine)
    here = oloproof("run", cwd=local)
    there = cluster.run("run", cwd=shipped)
    assert there.code == here.code == 0, there.err
    assert report(there) == report(here)
    assert content_events(shipped) == content_events(local)
    assert run_records(shipped, run_id_of(there)) == run_records(local, run_id_of(here))
