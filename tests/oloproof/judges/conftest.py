"""Fixtures of the judge tests: a secret key in the environment and a scripted server."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from judge_helpers import KEY_ENV, SECRET

from oloproof.testing import ScriptedJudgeServer


@pytest.fixture
def secret(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv(KEY_ENV, SECRET)
    return SECRET


@pytest.fixture
def server() -> Iterator[ScriptedJudgeServer]:
    with ScriptedJudgeServer() as running:
        yield running
