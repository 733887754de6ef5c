"""On a real Ray cluster, as locally: the stages a case ran before it errored are counted and
linked (a replica sends them back with the error), and a generate that reads what its retrieve
left behind sees its own case's state under gold context, although one system on each
replica serves every child run of the diagnosis."""

from __future__ import annotations

from pathlib import Path

from tests.cli import test_diagnose_coupled_stages as coupled
from tests.cli import test_stages_of_errored_cases as errored
from tests.ray.support import RayCluster, content_events, run_id_of

ONE_REPLICA = "engine: {kind: ray, replicas: 1}\n"


def test_an_errored_cases_stages_on_ray_are_a_local_runs(
    tmp_path: Path, cluster: RayCluster
) -> None:
    local = errored.project(tmp_path / "local")
    remote = errored.project(tmp_path / "ray")
    here = errored.oloproof("run", cwd=local)
    there = cluster.run("run", "--engine", cluster.address, cwd=remote)
    assert (here.code, there.code) == (0, 0), there.err
    line = "Stages: retrieve 0 hit/8 miss; generate 0 hit/7 miss"
    assert errored.stages_line(there.out) == errored.stages_line(here.out) == line
    assert errored.errored_execution_stages(remote, run_id_of(there)) == ["retrieve"]
    assert content_events(remote) == content_events(local)


def test_a_coupled_generate_on_ray_sees_its_own_cases_state(
    tmp_path: Path, cluster: RayCluster
) -> None:
    root = coupled.project(tmp_path / "p")
    (root / "oloproof.yaml").write_text(coupled.CONFIG + ONE_REPLICA)
    ran = cluster.run("run", "--engine", cluster.address, cwd=root)
    assert ran.code == 0, ran.err
    done = cluster.run(
        "diagnose", run_id_of(ran), "--intervention", "gold-context", "--repeats", "2",
        "--criterion", "answer_correct", cwd=root,
    )  # fmt: skip
    assert done.code == 0, done.err
    for n, (label, child) in enumerate(coupled.child_runs(done.out)):
        recovers = label.startswith("gold context")
        assert coupled.outputs(root, child, tmp_path / f"out-{n}") == {
            q: {"answer": f"ANSWER-{q}" if recovers else "no idea", "state": q}
            for q in coupled.QUESTIONS
        }, label
