"""On a real Ray cluster, as locally: the model calls a case made before it errored come back
from its replica and are kept with its errored execution."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.cli import test_errored_model_calls_kept as errored
from tests.ray.support import RayCluster, content_events

ASKER = {"name": "asker", "version": "1", "callable": "app:ask"}


@pytest.fixture
def base() -> Iterator[str]:
    with errored.serving() as url:
        yield url


def test_an_errored_cases_model_calls_on_ray_are_a_local_runs(
    tmp_path: Path, cluster: RayCluster, base: str
) -> None:
    local = errored.project(tmp_path / "local", base, ASKER)
    remote = errored.project(tmp_path / "ray", base, ASKER)
    here = errored.oloproof("run", cwd=local)
    there = cluster.run("run", "--engine", cluster.address, cwd=remote)
    assert (here.code, there.code) == (0, 0), there.err
    assert errored.kept(remote) == {
        "good": ("ok", [errored.GOOD, errored.GOOD]),
        "length": ("errored", [errored.GOOD, errored.CUT]),
        "beside": ("errored", [errored.GOOD, errored.BESIDE]),
    }
    assert content_events(remote) == content_events(local)
