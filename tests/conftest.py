"""Fixtures shared by the test suites."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.support import copy_example


@pytest.fixture
def blackbox(tmp_path: Path) -> Path:
    return copy_example("blackbox_rag", tmp_path)


@pytest.fixture
def support(tmp_path: Path) -> Path:
    return copy_example("support_rag", tmp_path)
