"""One real Ray cluster per test module: starting Ray is the slow part of these tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from tests.ray.support import RayCluster


@pytest.fixture(scope="module")
def cluster() -> Iterator[RayCluster]:
    # Four logical CPUs on however many cores: room for four one-CPU replicas.
    running = RayCluster(num_cpus=4).start()
    try:
        yield running
    finally:
        running.stop()
