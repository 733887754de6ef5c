"""Code that reads its own ``__file__`` keeps its identity wherever the project folder lives,
so a copy of the project elsewhere (another checkout, a Ray worker's copy) reuses its cache."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests.support import oloproof

APP = """
from pathlib import Path


def data_dir():
    return Path(__file__).resolve().parent / "data"


def answer(case_input):
    return {"answer": (data_dir() / "greeting.txt").read_text().strip()}
"""


def _project(root: Path, greeting: str) -> Path:
    (root / "data").mkdir(parents=True)
    (root / "data" / "greeting.txt").write_text(greeting)
    (root / "app.py").write_text(APP)
    (root / "cases.jsonl").write_text(json.dumps({"id": "a", "input": {"q": "hi"}}) + "\n")
    config = {"system": {"name": "greeter", "version": "1", "callable": "app:answer"}}
    (root / "oloproof.yaml").write_text(json.dumps(config))
    return root


def test_a_project_moved_elsewhere_keeps_its_identity(tmp_path: Path) -> None:
    first = _project(tmp_path / "here", "hello")
    assert oloproof("run", cwd=first).code == 0
    moved = tmp_path / "elsewhere" / "deeper"
    shutil.copytree(first, moved)
    again = oloproof("run", cwd=moved)
    assert again.code == 0, again.err
    assert "Cache: execution 1 hit/0 miss" in again.out


def test_editing_the_code_that_reads_its_file_still_executes_again(tmp_path: Path) -> None:
    root = _project(tmp_path / "p", "hello")
    assert oloproof("run", cwd=root).code == 0
    # The same answer, by other code: the function that reads ``__file__`` changed.
    edited = APP.replace(".resolve().parent", ".resolve().absolute().parent")
    assert edited != APP
    (root / "app.py").write_text(edited)
    again = oloproof("run", cwd=root)
    assert "Cache: execution 0 hit/1 miss" in again.out, again.out
