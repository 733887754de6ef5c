"""An export reads a run's results twice (once for the tables' columns, once for the rows). A
run resumed between the two passes adds results the first pass never saw: each case was then
listed twice, once as run and once as not run, and a new metadata key lost its column. Both
passes now read the results the run held when the export began."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from tests.support import HOLDING_APP, interrupted_while_held, write_project

from oloproof import tabular
from oloproof.store import open_project_ledger
from oloproof.stored_runs import load_run

APP = (
    HOLDING_APP
    + """

def answer(case):
    if case["q"] == "q3" and not (HERE / "resumed").exists():  # interrupted here
        hold("sleeping")
    return {"answer": case["q"]}
"""
)


@pytest.fixture
def interrupted(tmp_path: Path) -> tuple[Path, str]:
    root = write_project(
        tmp_path / "p",
        app=APP,
        config="system: {name: toy, version: '1', callable: app:answer}\ndataset: cases.jsonl\n"
        "policy: policy.yaml\nconcurrency: 1\nevaluators:\n"
        "  - {type: contains, criterion: echo, field: answer, expected_field: answer}\n",
        policy="version: 1\nrules:\n  - {id: floor, metric: echo, min: 0.5}\n",
        cases=(
            {"id": f"c{i}", "input": {"q": f"q{i}"}, "expected": {"answer": f"q{i}"}}
            | ({"metadata": {"late": i}} if i >= 4 else {})
            for i in range(6)
        ),
    )
    return root, interrupted_while_held(root, "sleeping\n")


def _rows(folder: Path, fmt: str, name: str) -> list[dict[str, Any]]:
    if fmt == "parquet":
        rows: list[dict[str, Any]] = pq.read_table(folder / f"{name}.parquet").to_pylist()
        return rows
    return [json.loads(line) for line in (folder / f"{name}.jsonl").read_text().splitlines()]


@pytest.mark.parametrize("fmt", ["jsonl", "parquet"])
def test_a_run_resumed_between_the_passes_is_exported_as_it_was(
    interrupted: tuple[Path, str], monkeypatch: pytest.MonkeyPatch, fmt: str
) -> None:
    root, run_id = interrupted
    first_pass = tabular._shape

    def then_resumed(*args: Any) -> Any:
        shape = first_pass(*args)
        (root / "resumed").touch()
        done = subprocess.run(
            [sys.executable, "-m", "oloproof", "run", "--resume", run_id],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr  # every case has a result now
        return shape

    monkeypatch.setattr(tabular, "_shape", then_resumed)
    with open_project_ledger(root, create=False, only_reads=True) as ledger:
        run = load_run(ledger, run_id)
        tabular.export_tables(ledger, run, fmt, root / "out")
    cases = _rows(root / "out", fmt, "cases")
    verdicts = _rows(root / "out", fmt, "verdicts")
    assert [r["case_id"] for r in cases] == [f"c{i}" for i in range(6)]
    assert [r["case_id"] for r in verdicts] == [f"c{i}" for i in range(6)]
    ran = [r["case_id"] for r in cases if r["status"] != "not_run"]
    assert ran == ["c0", "c1", "c2"] or ran == ["c0", "c1", "c2", "c3"]
    assert all("metadata.late" not in r for r in cases)  # no result held it at the start
