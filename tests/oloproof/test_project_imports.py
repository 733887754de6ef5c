"""Two projects evaluated in one process each run their own code.

Both projects have an ``app.py`` whose system imports a sibling module by the same name
(``helper``), as user projects do. Through the library, in one process, the second project's
run must execute the second project's ``helper``, not the module the first run imported.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from oloproof import events as ev
from oloproof.runner import execute_run, plan_run
from oloproof.store import open_project_ledger

APP = """
from helper import ANSWER

from oloproof import system


@system(name="answers", version="1")
def answer(case):
    return {"answer": ANSWER}
"""


@pytest.fixture(autouse=True)
def _restore_imports() -> Iterator[None]:
    path = list(sys.path)
    yield
    sys.path[:] = path
    for name in ("app", "helper"):
        sys.modules.pop(name, None)


def project(root: Path, answer: str) -> Path:
    root.mkdir(parents=True)
    (root / "app.py").write_text(APP)
    (root / "helper.py").write_text(f"ANSWER = {answer!r}\n")
    (root / "cases.jsonl").write_text(
        json.dumps({"id": "c0", "input": {"q": "?"}, "expected": {"answer": "?"}}) + "\n"
    )
    config = {
        "system": {"name": "answers", "version": "1", "callable": "app:answer"},
        "dataset": "cases.jsonl",
        "evaluators": [{"type": "contains", "criterion": "said", "field": "answer"}],
    }
    (root / "oloproof.yaml").write_text(yaml.safe_dump(config))
    return root


def answer_of(root: Path) -> str:
    with open_project_ledger(root) as ledger:
        asyncio.run(execute_run(ledger, plan_run(root / "oloproof.yaml")))
        ((_, execution),) = list(ledger.events(ev.EXECUTION))
    return str(execution.body["output"]["answer"])


def test_the_second_project_runs_its_own_modules(tmp_path: Path) -> None:
    assert answer_of(project(tmp_path / "first", "from the first")) == "from the first"
    assert answer_of(project(tmp_path / "second", "from the second")) == "from the second"
    assert answer_of(project(tmp_path / "third", "from the third")) == "from the third"
