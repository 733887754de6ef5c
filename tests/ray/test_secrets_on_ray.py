"""A secret the system reads on a Ray worker (an HTTP header's ``${ECHO_TOKEN}``) is known
there only: what the worker sends back is redacted on the worker, the driver counts the
replacements, and the run stores and prints what a local run does.

The echoing endpoint and its project are those of ``tests/cli/test_secrets.py``; here the
token is in the Ray workers' environment and not in the driver's.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.cli.test_secrets import TOKEN, assert_nowhere, echo_project, everything_printed
from tests.ray.support import RayCluster, content_events, report, run_id_of, run_records
from tests.support import oloproof

__all__ = ["echo_project"]  # the fixture, used by name


@pytest.fixture(scope="module")
def cluster() -> Iterator[RayCluster]:
    workers = {"ECHO_TOKEN": TOKEN, "BROKEN_ON_THE_WORKERS": f"{TOKEN}\n"}
    running = RayCluster(num_cpus=2, worker_env=workers).start()
    try:
        yield running
    finally:
        running.stop()


def test_a_secret_read_on_a_worker_is_redacted_there_and_counted(
    echo_project: Path, tmp_path: Path, cluster: RayCluster
) -> None:
    assert "ECHO_TOKEN" not in os.environ and "ECHO_TOKEN" not in cluster.env
    remote = tmp_path / "on-ray"
    shutil.copytree(echo_project, remote)
    here = oloproof("run", cwd=echo_project, env={"ECHO_TOKEN": TOKEN})
    there = cluster.run("run", "--engine", cluster.address, cwd=remote)
    assert here.code == there.code == 0, there.err
    assert "Redacted: 4 occurrences of configured secrets" in there.out
    assert report(there) == report(here)
    assert content_events(remote) == content_events(echo_project)
    assert run_records(remote, run_id_of(there)) == run_records(echo_project, run_id_of(here))
    shown = oloproof("inspect", run_id_of(there), "--case", "echo_ok", "--json", cwd=remote)
    assert "Bearer [redacted] (again: Bearer [redacted])" in json.dumps(json.loads(shown.out))
    archive = tmp_path / "ray.oloarchive"
    exported = oloproof("ledger", "export", "--all", "--to", str(archive), cwd=remote)
    assert exported.code == 0, exported.err
    assert_nowhere(TOKEN, remote, everything_printed(there, shown, exported), archive)


def test_a_variable_the_workers_lack_is_refused_before_the_run_starts(
    echo_project: Path, cluster: RayCluster
) -> None:
    config = echo_project / "oloproof.yaml"
    config.write_text(config.read_text().replace("${ECHO_TOKEN}", "${ONLY_ON_THE_DRIVER}"))
    refused = cluster.run(
        "run", "--engine", cluster.address, cwd=echo_project, env={"ONLY_ON_THE_DRIVER": "x" * 8}
    )
    assert refused.code == 2, refused.err
    assert refused.err.splitlines() == [
        f"error: {config}, line 9: system.http.headers.Authorization: environment variable "
        "ONLY_ON_THE_DRIVER is not set on the Ray workers, which read it there"
    ]
    listed = oloproof("runs", cwd=echo_project)
    assert "run_" not in listed.out  # nothing was recorded


def test_a_variable_no_header_can_carry_on_the_workers_is_refused_before_the_run_starts(
    echo_project: Path, cluster: RayCluster
) -> None:
    config = echo_project / "oloproof.yaml"
    config.write_text(config.read_text().replace("${ECHO_TOKEN}", "${BROKEN_ON_THE_WORKERS}"))
    refused = cluster.run("run", "--engine", cluster.address, cwd=echo_project)
    assert refused.code == 2, refused.err
    assert refused.err.splitlines() == [
        f"error: {config}, line 9: system.http.headers.Authorization: environment variable "
        "BROKEN_ON_THE_WORKERS holds a line break, which an HTTP header cannot carry (as the Ray "
        "workers read it)"
    ]
    assert TOKEN not in refused.out + refused.err
    listed = oloproof("runs", cwd=echo_project)
    assert "run_" not in listed.out  # nothing was recorded
