"""Every column a Parquet export always has is of its own type, empty in every row or not.

docs/export.md: "Parquet columns are typed (booleans, integers, floats, text)". The probe: a
run in which no case errored and every verdict was given, and a run of the same project with
`--repeats 2` in which one case errored, each exported as Parquet and read back with pyarrow.
Before: a column every row of a run leaves empty was of Arrow's type `null`: in the first run
`reason`, `observed_repeats` and `missing_repeats` of the verdicts, and `error_type`,
`error_message`, `repeats` and `errored_repeats` of the cases; so the same column was `null`
in one run's file and `string` or `int64` in another's, and `pyarrow.concat_tables` refused the
two runs' tables ("Schema at index 1 was different"). Now each column has its type in every
file (the verdict columns `double`), and the tables of the two runs make one table.
"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from tests.support import oloproof, write_project

APP = """
def answer(case):
    if case["q"] == "boom":
        raise RuntimeError("down")
    return {"answer": case["q"]}
"""
CONFIG = """\
system: {name: typed, version: "1", callable: app:answer}
dataset: cases.jsonl
evaluators:
  - {type: contains, criterion: mentions, field: answer, expected_field: answer}
"""
TYPES = {
    "verdicts": {
        "run_id": "string",
        "case_id": "string",
        "line": "int64",
        "case_status": "string",
        "criterion": "string",
        "status": "string",
        "passed": "bool",
        "value": "double",
        "reason": "string",
        "observed_repeats": "int64",
        "missing_repeats": "int64",
        "judgment": "string",
    },
    "cases": {
        "run_id": "string",
        "case_id": "string",
        "line": "int64",
        "status": "string",
        "input": "string",
        "expected": "string",
        "output": "string",
        "error_type": "string",
        "error_message": "string",
        "repeats": "int64",
        "errored_repeats": "int64",
        "execution": "string",
        "case_result": "string",
        "verdict.mentions": "double",
    },
}


def _exported(root: Path, cases: str, *args: str) -> dict[str, pa.Table]:
    (root / "cases.jsonl").write_text(cases)
    done = oloproof("run", "--json", *args, cwd=root)
    assert done.code == 0, done.err
    run_id = json.loads(done.out)["run_id"]
    out = f"out-{run_id}"
    done = oloproof("export", run_id, "--format", "parquet", "--output", out, cwd=root)
    assert done.code == 0, done.err
    return {name: pq.read_table(root / out / f"{name}.parquet") for name in TYPES}


def test_each_column_has_its_type_in_every_run(tmp_path: Path) -> None:
    root = write_project(
        tmp_path / "p", app=APP, config=CONFIG, policy="version: 1\nrules: []\n", cases=[]
    )
    line = '{{"id": "{0}", "input": {{"q": "{0}"}}, "expected": {{"answer": "a"}}}}\n'
    clean = _exported(root, line.format("a") + line.format("ab"))
    errored = _exported(root, line.format("a") + line.format("boom"), "--repeats", "2")
    for name, types in TYPES.items():
        for table in (clean[name], errored[name]):
            # Was: `null` for the columns every row of the clean run left empty.
            assert {f.name: str(f.type) for f in table.schema} == types
        assert pa.concat_tables([clean[name], errored[name]]).num_rows == 4
    assert clean["verdicts"].column("reason").to_pylist() == [None, None]
    assert errored["verdicts"].column("reason").to_pylist() == [None, "execution_errored"]
    assert errored["cases"].column("errored_repeats").to_pylist() == [0, 2]
