"""An async system that holds its replica's event loop past a case's timeout, on a real Ray
cluster: the case times out as it does locally, and one that never gives the loop back is
stopped rather than hanging the run, even where it waits in a call no exception can reach."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.ray.projects import write_callable_config
from tests.ray.support import RayCluster, content_events, engine_record, run_id_of, run_records
from tests.support import oloproof

from ledger import open_ledger

APP = """
import asyncio
import time


async def answer(case_input):
    kind = case_input.get("do")
    if kind is not None and kind.startswith("block"):
        time.sleep(2)  # a blocking call in an async system: the loop waits with it
        if kind == "block-raise":
            raise ValueError("failed after blocking")
        if kind == "block-await":
            await asyncio.sleep(0)
    if kind == "spin":
        while True:  # never gives the loop back
            pass
    if kind == "sleep":
        time.sleep(3600)  # a blocking call that nothing raised in the thread can end
    if kind == "beside":
        await asyncio.sleep(0.5)
    return {"answer": f"echo {case_input['q']}"}
"""

HELD = {
    "type": "TimeoutError",
    "message": "the case took longer than 1 s and held up the event loop "
    "(blocking code in an async system)",
    "traceback": "",
}


def _project(root: Path, doings: dict[int, str], engine: dict[str, Any] | None = None) -> Path:
    root.mkdir(parents=True)
    (root / "app.py").write_text(APP, encoding="utf-8")
    lines = [
        json.dumps(
            {
                "id": f"c{n}",
                "input": {"q": f"q{n}", **({"do": doings[n]} if n in doings else {})},
                "expected": {"answer": f"q{n}"},
            }
        )
        for n in range(6)
    ]
    (root / "cases.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    write_callable_config(root, "async-echo", engine, timeout_s=1, policy="policy.yaml")
    (root / "policy.yaml").write_text(
        "version: 1\nrules:\n  - {id: floor, metric: answered, min: 0.9}\n", encoding="utf-8"
    )
    return root


def _errors(root: Path) -> dict[str, Any]:
    with open_ledger(root / ".oloproof") as ledger:
        return {
            e.body["input"]["q"]: e.body["error"]
            for _, e in ledger.events("oloproof.execution")
            if e.body["status"] == "errored"
        }


def test_a_case_that_held_the_loop_past_its_timeout_times_out_on_ray_as_locally(
    tmp_path: Path, cluster: RayCluster
) -> None:
    doings = {1: "block", 3: "block-raise", 4: "block-await"}
    local = _project(tmp_path / "local", doings)
    # One case at a time per replica: no case is woken late behind another's block.
    engine = {"kind": "ray", "address": cluster.address, "concurrency": 1}
    remote = _project(tmp_path / "ray", doings, engine=engine)
    here = oloproof("run", cwd=local)
    there = cluster.run("run", cwd=remote)
    assert here.code == there.code != 0, there.out + there.err
    assert "Gate: BLOCK" in there.out
    assert "3 of 6 cases errored" in there.out
    assert _errors(remote) == _errors(local) == {"q1": HELD, "q3": HELD, "q4": HELD}
    assert run_records(remote, run_id_of(there)) == run_records(local, run_id_of(here))
    assert content_events(remote) == content_events(local)
    # An errored execution is never reused: the same project run locally runs them again.
    again = oloproof("run", "--engine", "local", cwd=remote)
    assert again.code == here.code, again.out + again.err
    assert "Cache: execution 3 hit/3 miss" in again.out


def test_a_case_that_never_gives_the_loop_back_is_stopped_and_its_neighbour_runs_on(
    tmp_path: Path, cluster: RayCluster
) -> None:
    doings = {2: "spin"}
    local = _project(tmp_path / "local", doings)
    # One replica running two cases at once: the spinning case has a neighbour on its loop.
    engine = {"kind": "ray", "address": cluster.address, "replicas": 1, "concurrency": 2}
    remote = _project(tmp_path / "ray", doings, engine=engine)
    here = oloproof("run", cwd=local)
    there = cluster.run("run", cwd=remote, timeout=120)
    assert here.code == there.code != 0, there.out + there.err
    assert "1 of 6 cases errored" in there.out
    assert _errors(remote) == _errors(local) == {"q2": HELD}
    assert run_records(remote, run_id_of(there)) == run_records(local, run_id_of(here))


def test_a_case_stuck_in_a_blocking_call_is_stopped_by_the_driver_and_its_neighbour_runs_on(
    tmp_path: Path, cluster: RayCluster
) -> None:
    # time.sleep(3600) in an async system holds the replica's loop where the replica's own
    # watch cannot reach: the run waited for the hour. The driver now stops the replica once
    # the case has had twice its timeout and ten seconds more, sends again alone the cases it
    # held beside it, and records the case as timed out when it holds a replica on its own.
    doings = {0: "beside", 1: "sleep", 2: "beside"}
    engine = {"kind": "ray", "address": cluster.address, "replicas": 1, "concurrency": 3}
    remote = _project(tmp_path / "ray", doings, engine=engine)
    there = cluster.run("run", cwd=remote, timeout=150)
    assert there.code != 0, there.out + there.err
    assert _errors(remote) == {"q1": HELD}
    assert "1 of 6 cases errored" in there.out, there.out
    # Stopped twice (once holding all three cases, once holding the sleeping one alone), and
    # each time a replica started in its place.
    assert engine_record(remote, run_id_of(there)) == {
        "kind": "ray",
        "replicas": 3,
        "worker_deaths": 0,
        "replicas_stopped": 2,
        "resent": 3,
    }


def test_cases_that_each_hold_a_replica_are_each_recorded_and_the_run_goes_on(
    tmp_path: Path, cluster: RayCluster
) -> None:
    # A stopped replica counts toward a crash loop, as a worker death does; without a case
    # finished between them, two in a row stopped the run as a crash loop would
    # (engine.max_retries 0 on one replica), where a local run records each such case as timed
    # out and goes on.
    doings = {1: "sleep", 2: "sleep"}
    engine = {
        "kind": "ray",
        "address": cluster.address,
        "replicas": 1,
        "concurrency": 1,
        "max_retries": 0,
    }
    remote = _project(tmp_path / "ray", doings, engine=engine)
    there = cluster.run("run", cwd=remote, timeout=150)
    assert "2 of 6 cases errored" in there.out, there.out + there.err
    assert _errors(remote) == {"q1": HELD, "q2": HELD}
    record = engine_record(remote, run_id_of(there))
    assert record is not None
    assert (record["worker_deaths"], record["replicas_stopped"]) == (0, 2)
