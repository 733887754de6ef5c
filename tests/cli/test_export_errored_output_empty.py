"""An errored case's `output` cell is empty in every table, not the `null` of a None returned.

The probe: one case whose system raised and one whose system returned None, exported with
`--format jsonl`, `csv` and `parquet`: both had the `output` text `null` (a JSON text, in the
column docs/export.md describes as the output as JSON text), although only the second returned
anything; the first has no output at all, as a case that did not run has none (its cell is
empty). A reader filtering on `output` counted the errored case as one that answered None. Now
an errored case's `output` is empty (null in JSON Lines and Parquet, an empty cell in CSV), as
a not-run case's is, and `null` says a system returned None; the column keeps its one type.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pyarrow.parquet as pq
from tests.support import SERIAL_TOY_CONFIG, oloproof, write_project

APP = """
from oloproof import system

@system(name="toy", version="1")
def run(case):
    if case["q"] == "boom":
        raise RuntimeError("exploded")
    if case["q"] == "none":
        return None
    return {"answer": case["q"]}
"""
WANTED = {"a": '{"answer": "a"}', "raised": None, "returned_none": "null"}


def _project(tmp_path: Path, *args: str) -> Path:
    cases = [
        {"id": case_id, "input": {"q": q}, "expected": {"answer": "a"}}
        for case_id, q in (("a", "a"), ("raised", "boom"), ("returned_none", "none"))
    ]
    root = write_project(tmp_path / "p", app=APP, config=SERIAL_TOY_CONFIG, policy="", cases=cases)
    done = oloproof("run", *args, cwd=root)
    assert done.code == 0, done.out + done.err
    return root


def _export(root: Path, fmt: str) -> Path:
    done = oloproof("export", "latest", "--format", fmt, "--output", fmt, cwd=root)
    assert done.code == 0, done.out + done.err
    return root / fmt / f"cases.{fmt}"


def test_an_errored_case_has_no_output_in_any_table(tmp_path: Path) -> None:
    root = _project(tmp_path)
    rows = [json.loads(line) for line in _export(root, "jsonl").read_text().splitlines()]
    assert {r["case_id"]: r["output"] for r in rows} == WANTED  # was: "null" for raised
    with _export(root, "csv").open(newline="") as handle:
        cells = {r["case_id"]: r["output"] for r in csv.DictReader(handle)}
    assert cells == {**WANTED, "raised": ""}
    table = pq.read_table(_export(root, "parquet")).to_pylist()
    assert {r["case_id"]: r["output"] for r in table} == WANTED
    assert {r["case_id"]: r["error_type"] for r in rows}["raised"] == "RuntimeError"


def test_a_repeated_case_whose_first_repeat_errored_has_no_output(tmp_path: Path) -> None:
    """The columns are the first repeat's (docs/export.md): an errored one has no output."""
    root = _project(tmp_path, "--repeats", "2")
    rows = [json.loads(line) for line in _export(root, "jsonl").read_text().splitlines()]
    assert {r["case_id"]: r["output"] for r in rows} == WANTED
