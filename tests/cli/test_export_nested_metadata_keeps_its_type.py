"""A metadata value that is a list or an object keeps its type in the exported tables.

The probe: two cases, one with the metadata `{"m": [1, 2], "n": {"k": 1}}`, the other with
`{"m": 5, "n": "{\\"k\\": 1}"}` (the text of an object, not an object). Exported, read back with
json and pyarrow, and compared with what `oloproof inspect RUN --case ID --json` shows the ledger
holds. Before:

- in JSON Lines (the table "for programs", holding "every value exactly, with its type") the
  list was the text `"[1, 2]"` and the object the text `'{"k": 1}'`, the very text the other
  case recorded: two different recorded values read back as one;
- in Parquet, the column `metadata.m` mixes a list and a number, so it is written as JSON text,
  but the list had already been made text, and was written as the JSON of that text,
  `'"[1, 2]"'`: read back, the list `[1, 2]` was the text "[1, 2]". The column `metadata.n`
  held `'{"k": 1}'` for both cases, the object and the text alike.

Now JSON Lines holds the list and the object as they are; Parquet writes a key with any list or
object value as JSON text, every value of it, so each reads back (json.loads) as recorded; a CSV
cell holds the JSON text of a list or an object, as it did.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
from tests.support import oloproof, write_project

APP = """
def answer(case):
    return {"answer": "a"}
"""
CONFIG = """\
system: {name: nested, version: "1", callable: app:answer}
dataset: cases.jsonl
evaluators:
  - {type: contains, criterion: answered, field: answer, expected_field: answer}
"""
METADATA = [
    {"m": [1, 2], "n": {"k": 1}, "t": {"deep": [{"x": None}]}},
    {"m": 5, "n": '{"k": 1}', "t": None},
]


def _recorded(root: Path, run_id: str, case_id: str) -> dict[str, Any]:
    done = oloproof("inspect", run_id, "--case", case_id, "--json", cwd=root)
    assert done.code == 0, done.err
    return dict(json.loads(done.out)["metadata"])


def test_nested_metadata_reads_back_as_recorded(tmp_path: Path) -> None:
    root = write_project(
        tmp_path / "p",
        app=APP,
        config=CONFIG,
        policy="version: 1\nrules: []\n",
        cases=(
            {"id": f"c{i}", "input": {}, "expected": {"answer": "a"}, "metadata": m}
            for i, m in enumerate(METADATA)
        ),
    )
    done = oloproof("run", "--json", cwd=root)
    assert done.code == 0, done.err
    run_id = json.loads(done.out)["run_id"]
    for fmt in ("jsonl", "parquet", "csv"):
        done = oloproof("export", run_id, "--format", fmt, "--output", fmt, cwd=root)
        assert (done.code, done.err) == (0, ""), done.err
    recorded = [_recorded(root, run_id, f"c{i}") for i in range(len(METADATA))]
    assert recorded == METADATA

    lines = (root / "jsonl" / "cases.jsonl").read_text(encoding="utf-8").splitlines()
    from_jsonl = [json.loads(line) for line in lines]
    # Was: "[1, 2]" and '{"k": 1}', text where a list and an object were recorded.
    assert [[row[f"metadata.{k}"] for k in ("m", "n", "t")] for row in from_jsonl] == [
        [m["m"], m["n"], m["t"]] for m in recorded
    ]

    table = pq.read_table(root / "parquet" / "cases.parquet")
    for key in ("m", "n", "t"):
        assert str(table.schema.field(f"metadata.{key}").type) == "string"
        cells = table.column(f"metadata.{key}").to_pylist()
        # Was: '"[1, 2]"' for the list (read back as text), '{"k": 1}' for object and text.
        assert [None if c is None else json.loads(c) for c in cells] == [m[key] for m in recorded]

    with (root / "csv" / "cases.csv").open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert [r["metadata.m"] for r in rows] == ["[1, 2]", "5"]
    assert [r["metadata.n"] for r in rows] == ['{"k": 1}', '{"k": 1}']
    assert [r["metadata.t"] for r in rows] == ['{"deep": [{"x": null}]}', ""]
