"""Fixtures shared by the test suites."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings
from tests.support import copy_example

# On GitHub Actions every command wraps what it prints in workflow-command stops (docs/ci.md);
# the tests read the output as a terminal or a pipe elsewhere gets it, and set the variable
# themselves where they check that.
os.environ.pop("GITHUB_ACTIONS", None)

# Hypothesis fails an example that takes over 200 ms, and a test whose examples are slow to
# generate, by default: timing assertions, which on a loaded machine fail tests whose code is
# right. Speed is measured in benchmarks/.
settings.register_profile("untimed", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("untimed")


@pytest.fixture
def blackbox(tmp_path: Path) -> Path:
    return copy_example("blackbox_rag", tmp_path)


@pytest.fixture
def support(tmp_path: Path) -> Path:
    return copy_example("support_rag", tmp_path)
