"""A run as tables other tools read: JSON Lines, CSV, Parquet, and TREC run and qrels files.

Requirements (``docs/export.md``):

1. Two tables. ``verdicts``: one row per case and criterion (``run_id, case_id, line,
   case_status, criterion, status, passed, value, reason, observed_repeats, missing_repeats,
   judgment``). ``cases``: one row per case (``run_id, case_id, line, status, input, expected,
   output, error_type, error_message, repeats, errored_repeats, execution, case_result``, then
   one ``metadata.KEY`` column per metadata key and one ``verdict.CRITERION`` column holding
   the case's value: 1 pass, 0 fail, a graded value, empty when missing or excluded).
   ``input``, ``expected`` and ``output`` are JSON text (``output`` empty for an errored
   execution, which returned nothing); a metadata list or object is itself in
   JSON Lines and JSON text in CSV and Parquet, never confused with a text that reads the
   same. The repeat columns are empty in a run without ``--repeats``; in one
   with, they count what ``oloproof.repeats.repeat_counts`` and the verdicts' ``m`` count, so
   an errored repeat never hides behind its case's ``ok``. A planned case the run holds no
   result for (interrupted, or still running) has its rows too: status ``not_run``, its
   verdicts missing for the reason ``not_run``, named from the cases file when that is the
   file the run read, else with an empty id and line. A partial run never reads as whole.
2. ``jsonl``, ``csv`` and ``parquet`` write ``verdicts.EXT`` and ``cases.EXT`` into the output
   folder; Parquet needs pyarrow (the ``parquet`` extra) and says so in one sentence without
   it. Each says exactly what the ledger holds, and takes text as hostile (a system wrote it):

   - Parquet columns are typed (booleans, floats, integers); a column Arrow cannot hold
     exactly in one type is JSON text, never rounded, never a crash.
   - A JSON Lines row is one line even to ``str.splitlines`` (U+0085, U+2028, U+2029 escaped).
   - CSV is for spreadsheets: rows end with CRLF, so a cell holding a bare carriage return is
     quoted and cannot start a row; a text cell that would start a formula, or that starts
     with ``'``, is written after a ``'``, so removing one leading ``'`` gives each text back.
     Numbers are not marked.
3. ``trec`` writes ``run.trec`` (``qid Q0 docno rank score tag``, from each case's last recorded
   retrieval, the one its evaluators scored, first occurrence of a document only) and
   ``qrels.trec`` (``qid 0 docno rel``, from ``expected.relevant``, a document's grade the
   largest of its entries). trec_eval orders a
   ranking by score, so the score written is derived from the recorded rank (N - rank + 1):
   trec_eval then evaluates exactly the order Oloproof did. A grade that is not a whole number
   is refused (trec_eval reads integer relevance).
4. Rows follow the dataset's order; the files are written whole (temporary file, then rename).
"""

from __future__ import annotations

import codecs
import csv
import heapq
import io
import json
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, BinaryIO

from ledger import Ledger
from oloproof import outfiles, redaction
from oloproof.bodies import CaseResultBody, not_run
from oloproof.display import first_few
from oloproof.errors import ConfigError, DatasetError
from oloproof.inspect import case_detail, json_line, read_planned_cases
from oloproof.metrics import SeenCases, case_results, result_entries
from oloproof.repeats import repeat_counts, value_of
from oloproof.stored_runs import StoredRun

FORMATS = ("jsonl", "csv", "parquet", "trec")
VERDICT_COLUMNS = (
    "run_id",
    "case_id",
    "line",
    "case_status",
    "criterion",
    "status",
    "passed",
    "value",
    "reason",
    "observed_repeats",
    "missing_repeats",
    "judgment",
)
CASE_COLUMNS = (
    "run_id",
    "case_id",
    "line",
    "status",
    "input",
    "expected",
    "output",
    "error_type",
    "error_message",
    "repeats",
    "errored_repeats",
    "execution",
    "case_result",
)
_STATUS = {"pass": "pass", "fail": "fail", "value": "value"}
# A planned case of an interrupted (or running) run that has no result: its case status, and
# the reason its verdicts are missing (the report's and `compare`'s word for them).
NOT_RUN = "not_run"


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _missing_repeats(body: CaseResultBody, summary: Mapping[str, Any]) -> int | None:
    """How many of a repeated case's repeats have no verdict on the criterion of ``summary``
    (all of them when its combined verdict is missing); None without repeats or excluded."""
    repeats = body.get("repeats")
    if not repeats or summary["s"] == "excluded":
        return None
    return len(repeats) if summary["s"] == "missing" else int(summary.get("m", 0))


def _verdict_row(run_id: str, body: CaseResultBody, criterion: str) -> dict[str, Any]:
    summary = body["verdicts"].get(criterion, {"s": "missing", "r": "no_verdict"})
    status = summary["s"]
    value = value_of(summary)
    missing_repeats = _missing_repeats(body, summary)
    # A case whose judged repeats all passed while another has no verdict is not a pass: that
    # one might have failed (the gate counts such a case as missing). Any failed repeat fails it.
    unsettled = value == 1.0 and bool(missing_repeats)
    return {
        "run_id": run_id,
        "case_id": body["case_id"],
        "line": int(body.get("line", 0)),
        "case_status": body["status"],
        "criterion": criterion,
        "status": status,
        "passed": None if value is None or unsettled else value == 1.0,
        "value": value,
        "reason": summary.get("r"),
        "observed_repeats": summary.get("n"),
        "missing_repeats": missing_repeats,
        "judgment": body["judgments"].get(criterion),
    }


def _case_row(
    ledger: Ledger, run: StoredRun, criteria: Sequence[str], address: str, body: CaseResultBody
) -> dict[str, Any]:
    detail = case_detail(ledger, address, body)
    error = detail.error or {}
    counts = repeat_counts(body.get("repeats"))
    row: dict[str, Any] = {
        "run_id": run.run_id,
        "case_id": detail.case_id,
        "line": int(body.get("line", 0)),
        "status": detail.status,
        "input": _json(detail.input),
        "expected": _json(detail.expected),
        # An execution that raised returned nothing: empty, as a case not run is, where
        # "null" is the JSON text of a system that returned None.
        "output": None if detail.error is not None else _json(detail.output),
        "error_type": error.get("type"),
        "error_message": error.get("message"),
        "repeats": counts.executed if counts else None,
        "errored_repeats": counts.errored if counts else None,
        "execution": detail.execution,
        "case_result": address,
    }
    for key, value in detail.metadata.items():
        # As recorded: a list or an object made text here could not be told, in any
        # table, from a text that reads the same (each writer writes each as it can).
        row[f"metadata.{key}"] = value
    for criterion in criteria:
        row[f"verdict.{criterion}"] = value_of(body["verdicts"].get(criterion, {"s": "-"}))
    return row


@dataclass
class _Values:
    """What one metadata column's values are, as far as its Parquet type depends on them."""

    kinds: set[type] = field(default_factory=set)
    nested: bool = False
    low: int = 0  # the least and greatest integer met: Arrow refuses some beside others
    high: int = 0

    def add(self, value: Any) -> None:
        if value is None:
            return
        self.kinds.add(type(value))
        if not _is_scalar(value):
            self.nested = True
        elif type(value) is int:
            self.low, self.high = min(self.low, value), max(self.high, value)


@dataclass
class _Shape:
    """What a first pass over a run's case results finds before any row is written: the
    tables' columns (metadata keys in the order first met), each metadata column's values, the
    planned cases that did not run, and whether there is any case row at all."""

    metadata: dict[str, _Values]
    unrun: list[tuple[str | None, int | None]]
    rows: int


def _shape(ledger: Ledger, run: StoredRun, upto: int) -> _Shape:
    metadata: dict[str, _Values] = {}
    seen = SeenCases()
    for _, body in case_results(ledger, run.run_id, upto):
        seen.add(body)
        for key, value in body["metadata"].items():
            metadata.setdefault(key, _Values()).add(value)
    unrun = _not_run_cases(run, seen)
    return _Shape(metadata, unrun, seen.count + len(unrun))


def _rows(
    ledger: Ledger, run: StoredRun, criteria: Sequence[str], upto: int, unrun: Sequence[Any]
) -> Iterator[tuple[list[dict[str, Any]], dict[str, Any]]]:
    """Each case's verdict rows and case row, in the dataset's order, with rows for each planned
    case that did not run merged in by line (those that cannot be named last)."""
    ran = (
        (
            [_verdict_row(run.run_id, body, c) for c in criteria],
            _case_row(ledger, run, criteria, a, body),
        )
        for a, body in case_results(ledger, run.run_id, upto)
    )
    if not unrun:
        yield from ran
        return
    repeats = run.body.get("repeats")
    not_ran = (
        (
            [_not_run_verdict(run.run_id, case_id, line, c, repeats) for c in criteria],
            {"run_id": run.run_id, "case_id": case_id, "line": line, "status": NOT_RUN},
        )
        for case_id, line in unrun
    )
    # Case results come in line order, as do the cases not run: merged, as a stable sort of
    # the two after one another would put them.
    yield from heapq.merge(ran, not_ran, key=lambda rows: _file_order(rows[1]))


def _not_run_cases(run: StoredRun, seen: SeenCases) -> list[tuple[str | None, int | None]]:
    """The cases ``run`` planned and holds no result for (an interrupted or running run's), as
    (id, line) in file order, named as ``inspect --failures`` names them: from the cases file,
    when it is the very file the run read. Each that cannot be named is (None, None)."""
    missing = not_run(run.body, seen.count)
    if not missing:
        return []
    chosen, _ = read_planned_cases(run)
    # These ids come from the cases file, not from the ledger, where secrets are replaced as
    # they are recorded: the ones the run kept out are kept out of them the same way.
    redaction.register_environment((run.body.get("config") or {}).get("secrets") or ())
    named: list[tuple[str | None, int | None]] = [
        (redaction.redact_text(case.id), case.line)
        for case in chosen or ()
        if not seen.has(case.id, case.line)
    ]
    return named[:missing] + [(None, None)] * (missing - len(named))


def _not_run_verdict(
    run_id: str, case_id: str | None, line: int | None, criterion: str, repeats: int | None
) -> dict[str, Any]:
    row: dict[str, Any] = dict.fromkeys(VERDICT_COLUMNS)
    row.update(run_id=run_id, case_id=case_id, line=line, case_status=NOT_RUN)
    row.update(criterion=criterion, status="missing", reason=NOT_RUN, missing_repeats=repeats)
    return row


def _file_order(row: Mapping[str, Any]) -> tuple[bool, int]:
    """Rows by their line in the cases file; those of cases that cannot be named last."""
    return row["line"] is None, row["line"] or 0


def _is_scalar(value: Any) -> bool:
    return value is None or isinstance(value, str | int | float | bool)


def export_tables(
    ledger: Ledger, run: StoredRun, fmt: str, folder: Path
) -> tuple[list[Path], list[str]]:
    """Write the run's tables (or TREC files) in ``fmt`` into ``folder``: the paths written,
    and the ids of the labelled cases the TREC run file holds no ranking for (``_write_trec``).

    Tables are streamed, a case at a time, after a first pass over the case results that
    finds their columns: memory stays flat in the number of cases."""
    if fmt not in FORMATS:
        raise ConfigError(f"unknown export format {fmt!r} (formats: {', '.join(FORMATS)})")
    if fmt == "parquet":
        _pyarrow()
    kinds = (
        outfiles.TREC
        if fmt == "trec"
        else {f"{name}.{fmt}": outfiles.TABLES[fmt] for name in ("verdicts", "cases")}
    )
    for name, kind in kinds.items():  # before any is written: all of them, or none
        outfiles.check(folder / name, kind)
    if fmt == "trec":
        paths = [folder / "run.trec", folder / "qrels.trec"]
        with outfiles.open_all(paths) as handles:  # both files, or neither
            unranked = _write_trec(ledger, run, list(zip(paths, handles, strict=True)))
        return paths, unranked
    criteria = [e["criterion"] for e in run.body["evaluators"]]
    # Both passes read the results the run held when the export began: a running run's later
    # ones would be rows without their columns, or cases listed both as run and as not run.
    upto = result_entries(ledger, run.run_id)
    shape = _shape(ledger, run, upto)
    columns = [
        *CASE_COLUMNS,
        *(f"metadata.{k}" for k in shape.metadata),
        *(f"verdict.{c}" for c in criteria),
    ]
    # Secrets are kept out of the rows' keys too: the columns are named as the rows' keys.
    shown = {c: redaction.redact_shown(c) for c in columns}
    metadata = {shown[f"metadata.{k}"]: values for k, values in shape.metadata.items()}
    case_columns = list(dict.fromkeys(shown.values())) if shape.rows else list(CASE_COLUMNS)
    paths = [folder / f"verdicts.{fmt}", folder / f"cases.{fmt}"]
    with outfiles.open_all(paths) as (verdicts_out, cases_out):
        tables = (
            _table(fmt, paths[0], verdicts_out, list(VERDICT_COLUMNS), {}),
            _table(fmt, paths[1], cases_out, case_columns, metadata),
        )
        for verdicts, case in _rows(ledger, run, criteria, upto, shape.unrun):
            verdicts, case = redaction.redact_shown((verdicts, {c: case.get(c) for c in columns}))
            for row in verdicts:
                tables[0].add(row)
            tables[1].add(case)
        for table in tables:
            table.close()
    return paths, []


class _Jsonl:
    def __init__(self, path: Path, out: BinaryIO) -> None:
        self._path, self._out = path, out

    def add(self, row: Mapping[str, Any]) -> None:
        outfiles.written(self._path, lambda: self._out.write(json_line(row).encode()))

    def close(self) -> None:
        outfiles.written(self._path, self._out.flush)


class _Csv:
    def __init__(self, path: Path, out: BinaryIO, columns: list[str]) -> None:
        self._path = path
        # CRLF ends a row, as RFC 4180 has it. It also makes the writer quote a cell holding a
        # carriage return: with "\n" it quoted only cells holding a line feed, and every
        # reader started a new row at a bare "\r" in a system's text.
        self._text = io.TextIOWrapper(out, encoding="utf-8", newline="")
        self._writer = csv.DictWriter(self._text, fieldnames=columns, lineterminator="\r\n")
        outfiles.written(path, self._writer.writeheader)

    def add(self, row: Mapping[str, Any]) -> None:
        cells = {k: _spreadsheet_text(_cell(v)) for k, v in row.items()}
        outfiles.written(self._path, lambda: self._writer.writerow(cells))

    def close(self) -> None:
        outfiles.written(self._path, self._text.flush)
        self._text.detach()  # the handle is the caller's to close


def _table(
    fmt: str, path: Path, out: BinaryIO, columns: list[str], metadata: Mapping[str, _Values]
) -> _Jsonl | _Csv | _Parquet:
    if fmt == "jsonl":
        return _Jsonl(path, out)
    if fmt == "csv":
        return _Csv(path, out, columns)
    return _Parquet(path, out, columns, metadata)


def _cell(value: Any) -> Any:
    """A CSV cell: a metadata list or object as its JSON text (csv would write Python's)."""
    return value if _is_scalar(value) else _json(value)


# What makes a spreadsheet read a cell as a formula (OWASP's list), after any white space
# some programs trim when they import; a tab or carriage return first is suspect on its own.
_FORMULA_OPENERS = ("=", "+", "-", "@")
_SUSPECT_FIRST = ("\t", "\r", "\n", "'")


def _spreadsheet_text(value: Any) -> Any:
    """A text cell a spreadsheet would run as a formula, with a ``'`` in front: it shows the
    text instead. One that starts with ``'`` gets one too, so that removing one leading ``'``
    from each cell gives back every text exactly. Numbers are left as they are."""
    if isinstance(value, str) and (
        value.startswith(_SUSPECT_FIRST) or value.lstrip().startswith(_FORMULA_OPENERS)
    ):
        return "'" + value
    return value


def _pyarrow() -> None:
    try:
        import pyarrow  # noqa: F401  # only asked whether it is installed
    except ImportError:
        raise ConfigError(
            "writing Parquet needs pyarrow, which is not installed: pip install 'oloproof[parquet]'"
        ) from None


# The type of each column the tables always have. Inferred from the values, a column every
# row leaves empty (``reason`` in a run with no verdict missing, the repeat columns in a run
# without ``--repeats``) was of Arrow's type null: no type of those the tables promise, and
# one that made the tables of two runs differ in schema (``pyarrow.concat_tables`` refused
# them).
_PARQUET_TYPES: dict[str, str] = {
    **dict.fromkeys({*VERDICT_COLUMNS, *CASE_COLUMNS}, "string"),
    **dict.fromkeys(
        ("line", "observed_repeats", "missing_repeats", "repeats", "errored_repeats"), "int64"
    ),
    "passed": "bool",
    "value": "double",
}


_ROW_GROUP = 16_384  # Parquet rows held before they are written as one row group


class _Parquet:
    """A Parquet table written a row group at a time, its schema fixed before the first row:
    each column of its own type (``_PARQUET_TYPES``), each ``verdict.CRITERION`` a number, and
    each metadata column typed by what the first pass found of its values
    (``_metadata_type``)."""

    def __init__(
        self, path: Path, out: BinaryIO, columns: list[str], metadata: Mapping[str, _Values]
    ) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        self._path = path
        self._types = {c: _column_type(c, metadata.get(c)) for c in columns}
        schema = pa.schema([(c, pa.string() if t is None else t) for c, t in self._types.items()])
        self._schema = schema
        self._rows: list[Mapping[str, Any]] = []
        self._writer = outfiles.written(path, lambda: pq.ParquetWriter(out, schema))

    def add(self, row: Mapping[str, Any]) -> None:
        self._rows.append(row)
        if len(self._rows) == _ROW_GROUP:
            self._flush()

    def _flush(self) -> None:
        import pyarrow as pa

        arrays = [
            _parquet_column([r.get(c) for r in self._rows], t) for c, t in self._types.items()
        ]
        self._rows = []
        table = pa.Table.from_arrays(arrays, schema=self._schema)
        outfiles.written(self._path, lambda: self._writer.write_table(table))

    def close(self) -> None:
        if self._rows:
            self._flush()
        outfiles.written(self._path, self._writer.close)


def _column_type(column: str, values: _Values | None) -> Any:
    """The Arrow type of a column, None for one written as JSON text."""
    import pyarrow as pa

    known = "double" if column.startswith("verdict.") else _PARQUET_TYPES.get(column)
    if known is not None:
        return pa.type_for_alias(known)
    return _metadata_type(values or _Values())


def _metadata_type(values: _Values) -> Any:
    """A metadata column's Arrow type, typed from its values, or None (JSON text) when Arrow
    cannot hold each of them exactly in one type: values that mix types, an integer beyond
    64-bit signed, or one beyond 2**53 beside fractions (Arrow refuses each, as it should), and
    a list or an object (a struct column would give every object the keys of all). Arrow is
    asked about the values that decide it: the least and greatest integer, and one value of
    each other kind."""
    import pyarrow as pa

    kinds = values.kinds
    if values.nested or not (len(kinds) <= 1 or kinds == {int, float}):
        return None
    deciding: list[Any] = [values.low, values.high] if int in kinds else []
    deciding += [_OF_KIND[kind] for kind in kinds - {int}]
    try:
        return pa.array(deciding).type
    except (pa.ArrowInvalid, OverflowError):
        return None


_OF_KIND: dict[type, Any] = {str: "", float: 0.5, bool: True}


def _parquet_column(values: list[Any], kind: Any) -> Any:
    """``values`` as one Arrow column of type ``kind`` (None: as JSON text)."""
    import pyarrow as pa

    if kind is None:
        return pa.array([None if v is None else _json(v) for v in values], pa.string())
    return pa.array(values, type=kind)


# ------------------------------------------------------------------------------------ TREC


def _write_trec(
    ledger: Ledger, run: StoredRun, files: Sequence[tuple[Path, BinaryIO]]
) -> list[str]:
    """Write the run file and the qrels file of a run (see requirement 3), a case at a time,
    into ``files``; return the ids of the labelled cases the run file has no line for (they
    errored, recorded no retrieval or an empty one): trec_eval averages over the run file's
    queries alone unless given ``-c``, so it leaves them out where Oloproof counts them."""
    tag = run.run_id
    unranked: list[str] = []
    for address, body in case_results(ledger, run.run_id):
        detail = case_detail(ledger, address, body)
        qid = _trec_word(detail.case_id, "case id")
        labels = list(_qrels_lines(qid, detail.expected))
        ranking = _ranking(detail.artifacts)
        if labels and not ranking:
            unranked.append(detail.case_id)
        ranked = [
            f"{qid} Q0 {_trec_word(doc, 'doc_id')} {rank} {len(ranking) - rank + 1} {tag}"
            for rank, doc in enumerate(ranking, start=1)
        ]
        for (path, out), lines in zip(files, (ranked, labels), strict=True):
            # A run recorded before a secret was declared holds it (``keep_out_declared``).
            text = redaction.redact_text("".join(line + "\n" for line in lines))
            outfiles.written(path, partial(out.write, text.encode()))
    return unranked


def _ranking(artifacts: Mapping[str, list[Any]]) -> list[str]:
    """Document ids of the case's last recorded retrieval, the one its evaluators read
    (``CaseView.artifact``; a reranker's order comes after the one it reranked), first
    occurrence of each only."""
    retrievals = artifacts.get("retrieval/v1") or []
    if not retrievals:
        return []
    seen: dict[str, None] = {}
    for candidate in retrievals[-1].get("candidates", []):
        seen.setdefault(str(candidate["doc_id"]), None)
    return list(seen)


def _qrels_lines(qid: str, expected: Mapping[str, Any]) -> Iterator[str]:
    grades: dict[str, float] = {}
    for entry in expected.get("relevant") or []:
        doc = str(entry["doc_id"])
        grades[doc] = max(grades.get(doc, float("-inf")), float(entry.get("grade", 1)))
    for doc, grade in grades.items():
        if grade != int(grade):
            raise ConfigError(
                f"case {qid!r}: relevance grade {grade:g} of {doc!r} is not a whole number, "
                "and trec_eval reads whole-number relevance"
            )
        yield f"{qid} 0 {_trec_word(doc, 'doc_id')} {int(grade)}"


def _trec_word(text: str, what: str) -> str:
    if not text or any(c.isspace() for c in text):
        raise ConfigError(f"{what} {text!r} contains white space, which TREC files cannot hold")
    return text


# ------------------------------------------------------------------------- qrels to cases


_GRADE = re.compile(r"-?[0-9]+")
_TREC_FIELDS = re.compile(r"[^ \t\v\f\r]+")
# Far beyond any grading scale, and within what a case file (and the ledger) holds.
# Read whole into memory: MS MARCO's half a million training judgments take about 10 MB.
_QRELS_BYTES = 256 << 20


def read_qrels(path: Path) -> dict[str, dict[str, int]]:
    """A TREC qrels file (``qid iter docno rel`` a line) as {qid: {docno: rel}}, each qid as a
    reader sees it (``same_text``), the way case ids are compared."""
    from oloproof.dataset import GRADE_LIMIT
    from oloproof.idtext import same_text
    from oloproof.yamlfile import read_file

    raw = read_file(path, _QRELS_BYTES, "a qrels file")
    # An editor's byte-order mark opens the file, not its first qid.
    body = raw.removeprefix(codecs.BOM_UTF8)
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        at = len(raw) - len(body) + exc.start
        number = raw[:at].count(b"\n") + 1
        raise ConfigError(f"{path}, line {number}: not UTF-8 text (byte {at})") from None
    qrels: dict[str, dict[str, int]] = {}
    lines: dict[tuple[str, str], int] = {}
    # Lines and fields as trec_eval reads them: ASCII white space only, so a docno holding a
    # no-break space, or one of Unicode's line separators, stays one field of one line.
    for number, line in enumerate(text.split("\n"), start=1):
        parts = _TREC_FIELDS.findall(line)
        if not parts:
            continue
        if "\ufeff" in line:  # the first line's was read as the file's own (utf-8-sig)
            raise ConfigError(
                f"{path}, line {number}: a byte-order mark (U+FEFF) inside the file, left there "
                "by joining files: remove it"
            )
        if len(parts) != 4:
            raise ConfigError(
                f"{path}, line {number}: a qrels line has 4 fields (qid iter docno rel), "
                f"this has {len(parts)}"
            )
        qid, doc, rel = same_text(parts[0]), parts[2], parts[3]
        # Digits as trec_eval reads them: Python's int() would also take "1_0", "+1" and
        # other scripts' digits, each a grade trec_eval reads otherwise.
        if not _GRADE.fullmatch(rel):
            raise ConfigError(f"{path}, line {number}: relevance {rel!r} is not an integer")
        grade = int(rel)
        if not -GRADE_LIMIT <= grade <= GRADE_LIMIT:
            raise ConfigError(
                f"{path}, line {number}: relevance {rel} is beyond ±{GRADE_LIMIT:,}, which no "
                "grade needs"
            )
        judged = qrels.setdefault(qid, {})
        if judged.get(doc, grade) != grade:
            raise ConfigError(
                f"{path}, line {number}: query {qid!r}, document {doc!r} was judged "
                f"{judged[doc]} on line {lines[qid, doc]} and {grade} here"
            )
        judged[doc] = grade
        lines.setdefault((qid, doc), number)
    if not qrels:
        raise ConfigError(f"{path}: holds no judgment (qid iter docno rel lines)")
    return qrels


def label_cases(qrels_path: Path, cases_path: Path, output: Path, *, replace: bool) -> Labelled:
    """Write ``cases_path`` to ``output`` with each case's ``expected.relevant`` from the
    qrels file ``qrels_path`` (the case id, as a reader sees it, is the qid): every judged
    document, its relevance as grade.

    A judgment of 0 or below is kept: a query judged to hold nothing relevant is then excluded
    from the retrieval metrics as ``all_labels_non_relevant``, not taken for one never judged
    (``no_relevance_labels``), and ``export --format trec`` writes every judgment back.
    A case that already has ``expected.relevant`` is refused unless ``replace``; other lines
    are copied unchanged. Qrels none of whose qids is a case are refused: they are another
    dataset's. Both files are checked first (``read_qrels``, ``load_dataset``), and an output
    that holds other cases (``_refuse_other_cases``); the output is written whole.
    """
    from oloproof.dataset import load_dataset
    from oloproof.idtext import same_text

    if output.resolve() == qrels_path.resolve():
        raise ConfigError(
            f"--output {output} is the qrels file: give the cases a file of their own"
        )
    if output.resolve() != cases_path.resolve():  # rewriting the cases file in place is asked for
        outfiles.check(output, outfiles.CASES)
    qrels = read_qrels(qrels_path)
    dataset = load_dataset(cases_path)
    if output.resolve() != cases_path.resolve():
        _refuse_other_cases(output, cases_path, [case.id for case in dataset.cases])
    by_text = {same_text(case.id): case.id for case in dataset.cases}
    unknown = sorted(q for q in qrels if q not in by_text)
    if len(unknown) == len(qrels):
        qids, ids = first_few(unknown, 3, repr), first_few(list(by_text.values()), 3, repr)
        raise ConfigError(
            f"{qrels_path}: none of its {len(qrels)} qids is a case id in {cases_path} (qids "
            f"{qids}; case ids {ids}): is it the qrels file of these cases?"
        )
    # Split as the loader counts lines, at line feeds alone: read as text, a carriage return
    # (JSON whitespace, inside a case's line) would end a line too, and shift every case after.
    raw = cases_path.read_bytes().decode("utf-8").split("\n")
    labelled, unlabelled, nothing_relevant = 0, 0, 0
    for case in dataset.cases:
        judged = qrels.get(same_text(case.id))
        if judged is None:
            unlabelled += 1
            continue
        if "relevant" in case.expected and not replace:
            raise ConfigError(
                f"{cases_path}, line {case.line}: case {case.id!r} already has "
                "expected.relevant; give --replace to overwrite it"
            )
        relevant = [{"doc_id": d, "grade": r} for d, r in judged.items()]
        record = {
            "id": case.id,
            "input": case.input,
            "expected": {**case.expected, "relevant": relevant},
            "metadata": case.metadata,
        }
        raw[case.line - 1] = json.dumps(record, ensure_ascii=False, separators=(",", ":"))
        labelled += 1
        nothing_relevant += all(r <= 0 for r in judged.values())
    outfiles.write(output, "\n".join(raw).encode())
    return Labelled(labelled, unlabelled, nothing_relevant, unknown)


def _refuse_other_cases(output: Path, cases_path: Path, ids: list[str]) -> None:
    """Refuse an ``output`` that holds cases other than ``ids``, those of ``cases_path``.

    ``outfiles.check`` lets a cases file be written over, so that labelling the same cases
    again replaces the earlier labelled copy; but any other cases file is the user's own (a
    test split named by mistake), and only an earlier labelling of these very cases is ours.
    """
    from oloproof.dataset import load_dataset

    if not output.is_file() or output.stat().st_size == 0:
        return  # a new file, an empty one, or a device: nothing of the user's is replaced
    try:
        held: list[str] | None = [case.id for case in load_dataset(output).cases]
    except DatasetError:
        held = None
    if held == ids:
        return
    what = "cases Oloproof cannot read" if held is None else f"{len(held)} cases"
    first = f", the first {held[0]!r}" if held else ""
    raise ConfigError(
        f"will not write the labelled cases over {output}: it holds other cases than "
        f"{cases_path} ({what}{first}), not an earlier labelling of them; give another path, "
        "or remove the file first"
    )


@dataclass(frozen=True)
class Labelled:
    """What ``label_cases`` did: cases labelled, cases without qrels, labelled cases with no
    document judged relevant, and the qids no case has."""

    cases: int
    unlabelled: int
    nothing_relevant: int
    unknown: list[str]
