"""The staged support_rag example on a real Ray cluster gives what a local run gives.

Each project is copied twice, one copy run locally and one on Ray, so neither run can reuse
the other's cache: both execute every case and every stage.
"""

from __future__ import annotations

import re
from pathlib import Path

from tests.ray.support import (
    RayCluster,
    content_events,
    engine_record,
    report,
    result_addresses,
    run_id_of,
    run_records,
)
from tests.support import copy_example, normalise, oloproof

CHILD_RUNS = re.compile(r"^Child runs: .*", re.MULTILINE)
RUN_ID = re.compile(r"run_[0-9A-Z]{26}")


def test_a_staged_run_on_ray_equals_a_local_run_event_for_event(
    tmp_path: Path, cluster: RayCluster
) -> None:
    local = copy_example("support_rag", tmp_path / "local")
    remote = copy_example("support_rag", tmp_path / "ray")
    here = oloproof("run", cwd=local)
    there = cluster.run("run", "--engine", cluster.address, cwd=remote)
    assert (here.code, there.code) == (3, 3), there.err
    assert report(there) == report(here)
    assert "Stages: retrieve 0 hit/13 miss; generate 0 hit/13 miss" in there.out
    # Executions, stage outputs and judgments are the very same events (the same bytes)...
    events = content_events(remote)
    assert events == content_events(local)
    assert [len(events[k]) for k in sorted(events)] == [13, 65, 26]
    # ...and each case result, end record and decision differs only by the run it belongs to.
    here_id, there_id = run_id_of(here), run_id_of(there)
    assert run_records(remote, there_id) == run_records(local, here_id)
    assert engine_record(local, here_id) is None
    assert engine_record(remote, there_id) == {
        "kind": "ray",
        "replicas": 2,
        "worker_deaths": 0,
        "replicas_stopped": 0,
        "resent": 0,
    }

    # A second run on Ray finds everything in the driver's cache: nothing is sent.
    again = cluster.run("run", "--engine", cluster.address, cwd=remote)
    assert "Cache: execution 13 hit/0 miss; judgment 65 hit/0 miss" in again.out
    assert content_events(remote) == events

    # The Ray run, merged into the local ledger through a verified archive, compares as equal.
    archive = tmp_path / "ray-run.oloarchive"
    whole = result_addresses(remote, there_id)
    exported = oloproof("ledger", "export", there_id, *whole, "--to", str(archive), cwd=remote)
    assert exported.code == 0, exported.err
    imported = oloproof("ledger", "import", str(archive), cwd=local)
    assert imported.code == 0, imported.err
    assert oloproof("verify", cwd=local).code == 0
    compared = oloproof("compare", there_id, here_id, cwd=local)
    assert compared.code == 0, compared.err
    metric_lines = [line for line in compared.lines if " points " in line]
    assert len(metric_lines) == 5, compared.out
    assert all(" +0.0 points " in line for line in metric_lines), compared.out


def test_diagnose_child_runs_execute_on_the_engine_of_the_run(
    tmp_path: Path, cluster: RayCluster
) -> None:
    local = copy_example("support_rag", tmp_path / "local")
    remote = copy_example("support_rag", tmp_path / "ray")
    assert oloproof("run", cwd=local).code == 3
    assert cluster.run("run", "--engine", cluster.address, cwd=remote).code == 3
    gold = ("diagnose", "latest", "--intervention", "gold-context", "--criterion", "answer_correct")
    # top-k replays the retrieval the parent recorded: the replica gets each case's share.
    wider = ("diagnose", "latest", "--intervention", "top-k", "--top-k", "4")
    wider += ("--criterion", "answer_correct")
    for args in (gold, wider):
        here = oloproof(*args, cwd=local)
        # No --engine: the child runs go where the diagnosed run ran, as it recorded.
        there = cluster.run(*args, cwd=remote)
        assert (here.code, there.code) == (0, 0), there.err
        assert normalise(there.out) == normalise(here.out)
        for here_id, there_id in zip(_children(here.out), _children(there.out), strict=True):
            assert run_records(remote, there_id) == run_records(local, here_id)
            assert (engine_record(remote, there_id) or {}).get("kind") == "ray"
    assert content_events(remote) == content_events(local)


def _children(out: str) -> list[str]:
    found = CHILD_RUNS.search(out)
    assert found, out
    return RUN_ID.findall(found.group(0))
