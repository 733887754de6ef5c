"""Fixtures shared by the test suites."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from tests.support import copy_example

# On GitHub Actions every command wraps what it prints in workflow-command stops (docs/ci.md);
# the tests read the output as a terminal or a pipe elsewhere gets it, and set the variable
# themselves where they check that.
os.environ.pop("GITHUB_ACTIONS", None)


@pytest.fixture
def blackbox(tmp_path: Path) -> Path:
    return copy_example("blackbox_rag", tmp_path)


@pytest.fixture
def support(tmp_path: Path) -> Path:
    return copy_example("support_rag", tmp_path)
