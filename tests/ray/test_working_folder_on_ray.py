"""A system opening a file by a relative path finds it on Ray as it does locally.

A local run's system works in the folder ``oloproof`` runs in; a Ray replica worked in a
folder Ray made for it, so a system opening ``kb.txt`` errored every case on Ray
(FileNotFoundError) while it answered locally. Replicas now work in the driver's working
folder (its place in the shipped copy, with ``ship_project``).
"""

from __future__ import annotations

from pathlib import Path

from tests.ray.projects import callable_project
from tests.ray.support import RayCluster, content_events, report, run_id_of, run_records
from tests.support import oloproof

APP = """
def answer(case_input):
    with open("kb.txt", encoding="utf-8") as f:  # relative to the working folder
        return {"answer": f.read().strip() + " " + case_input["q"]}
"""


def test_a_system_opening_a_relative_path_runs_on_ray_as_locally(
    tmp_path: Path, cluster: RayCluster
) -> None:
    cases = [{"n": i, "q": f"question {i}"} for i in range(6)]
    engine = {"kind": "ray", "address": cluster.address, "replicas": 1}
    roots = [
        callable_project(tmp_path / "local", cases),
        callable_project(tmp_path / "ray", cases, engine=engine),
    ]
    for root in roots:
        (root / "app.py").write_text(APP, encoding="utf-8")
        (root / "kb.txt").write_text("from the knowledge base\n", encoding="utf-8")
    here = oloproof("run", cwd=roots[0])
    there = cluster.run("run", cwd=roots[1])
    assert there.code == here.code == 0, there.err
    assert "errored" not in there.out
    assert report(there) == report(here)
    assert content_events(roots[1]) == content_events(roots[0])
    assert run_records(roots[1], run_id_of(there)) == run_records(roots[0], run_id_of(here))
