"""Read a run back: one case in full, the failures, and the export bundle."""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from ledger import FormatError, Ledger
from oloproof.bodies import (
    CaseResultBody,
    VerdictCopy,
    execution_body,
    judgment_body,
    not_run,
    planned_cases,
    verdict_copy,
)
from oloproof.errors import ConfigError, DatasetError, UnknownIdError
from oloproof.events import plain, problem_kinds
from oloproof.idtext import same_text
from oloproof.metrics import SeenCases, case_results
from oloproof.redaction import redact_shown
from oloproof.stored_runs import StoredRun

if TYPE_CHECKING:
    from oloproof.dataset import Case
    from oloproof.run_list import RunRow


@dataclass(frozen=True)
class CaseDetail:
    """One case of a run: what went in, what was expected, what came out, every judgment.

    With ``--repeats``, ``output``, ``artifacts``, ``error``, ``judgments`` and ``execution``
    are those of its first repeat and ``verdicts`` the combined ones; ``repeats``, when asked
    for, holds each repeat in full (``repeat_details``).
    """

    case_id: str
    status: str
    input: Any
    expected: Mapping[str, Any]
    metadata: Mapping[str, Any]
    output: Any
    artifacts: Mapping[str, list[Any]]
    error: Mapping[str, Any] | None
    verdicts: Mapping[str, VerdictCopy]
    judgments: Mapping[str, str]
    execution: str
    address: str
    repeats: list[dict[str, Any]] | None = None

    def to_json(self) -> dict[str, Any]:
        """As ``--json`` prints it (``repeats`` only for a repeated case)."""
        data = dict(self.__dict__)
        if self.repeats is None:
            del data["repeats"]
        return data


def case_detail(
    ledger: Ledger, address: str, body: CaseResultBody, *, repeats: bool = False
) -> CaseDetail:
    """The case of ``body``; with ``repeats``, a repeated case's every repeat as well."""
    execution = execution_body(ledger.get(body["execution"]))
    _check_verdicts(ledger, body)
    stored: Sequence[Mapping[str, Any]] | None = body.get("repeats")
    return CaseDetail(
        case_id=body["case_id"],
        status=body["status"],
        input=execution["input"],
        expected=body["expected"],
        metadata=body["metadata"],
        output=execution["output"],
        artifacts=execution["artifacts"],
        error=execution.get("error"),
        verdicts=body["verdicts"],
        judgments=body["judgments"],
        execution=body["execution"],
        address=address,
        repeats=repeat_details(ledger, stored) if repeats and stored else None,
    )


def repeat_details(ledger: Ledger, repeats: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Each repeat of a case: its number (from 1), status, output, artifacts, error (type,
    message and traceback, for one that errored), verdicts, judgments and execution."""
    executions = ledger.get_many(str(r["execution"]) for r in repeats)
    details = []
    for number, (repeat, event) in enumerate(zip(repeats, executions, strict=True), start=1):
        execution = execution_body(event)
        detail: dict[str, Any] = {
            "repeat": number,
            "status": repeat["status"],
            "output": execution["output"],
            "artifacts": execution["artifacts"],
        }
        if "error" in execution:
            detail["error"] = execution["error"]
        detail |= {
            "verdicts": repeat["verdicts"],
            "judgments": repeat["judgments"],
            "execution": repeat["execution"],
        }
        details.append(detail)
    return details


def _check_verdicts(ledger: Ledger, body: CaseResultBody) -> None:
    """Read the judgments behind ``body``'s verdicts, each checked against its address, and
    hold each verdict copy to its judgment: a case shown in full shows what its judges said,
    not a copy whose judgment is damaged. (With repeats, each repeat's copies; the case's own
    verdicts combine those.)"""
    repeats: Sequence[Mapping[str, Any]] = body.get("repeats") or []
    for group in repeats or [cast(Mapping[str, Any], body)]:
        pointers: Mapping[str, str] = group["judgments"]
        for (criterion, pointer), event in zip(
            pointers.items(), ledger.get_many(pointers.values()), strict=True
        ):
            judgment = judgment_body(event)
            said = verdict_copy(judgment["status"], judgment["value"], judgment["reason"])
            if judgment["criterion"] != criterion or said != plain(group["verdicts"][criterion]):
                raise FormatError(
                    f"case {body['case_id']}: its {criterion} verdict is not what judgment "
                    f"{pointer} says; `oloproof verify` lists what else is damaged"
                )


def find_case(ledger: Ledger, run: StoredRun, case_id: str) -> CaseDetail:
    """The case of ``run`` whose id reads as ``case_id``: an id typed back from where it was
    printed may encode its accents the other way (``idtext.same_text``), and a cases file
    refuses two ids that read alike, so it names one case."""
    typed = same_text(case_id)
    seen = SeenCases()
    alike: tuple[str, CaseResultBody] | None = None
    for address, body in case_results(ledger, run.run_id):
        if body["case_id"] == case_id:
            return case_detail(ledger, address, body, repeats=True)
        if alike is None and same_text(body["case_id"]) == typed:
            alike = address, body
        seen.add(body)
    if alike is not None:
        return case_detail(ledger, *alike, repeats=True)
    unfinished = unfinished_case(run, case_id) if not_run(run.body, seen.count) else None
    raise UnknownIdError(unfinished or f"run {run.run_id} has no case {case_id!r}")


def unfinished_case(run: StoredRun, case_id: str) -> str | None:
    """Why ``run`` holds no result for ``case_id`` when it planned the case and did not
    finish it (one ``--failures`` lists as not finished), else None: not an id the run does
    not know, which would read as mistyped or never planned."""
    chosen, _ = read_planned_cases(run)
    typed = same_text(case_id)
    if chosen is None or all(same_text(case.id) != typed for case in chosen):
        return None
    return (
        f"run {run.run_id} holds no result for case {case_id!r}: the run did not finish it (it "
        "was interrupted, or is still running; `oloproof runs` says which)"
    )


def is_problem(body: CaseResultBody) -> bool:
    """Whether a case is one ``--failures`` lists: it errored, failed or has a missing verdict,
    or (repeated) one of its repeats errored, failed or has no verdict on some criterion. The
    viewer's failures indexes file the same cases (``events.problem_kinds``)."""
    kinds, _, _ = problem_kinds(body)
    return bool(kinds)


@dataclass(frozen=True)
class Failures:
    """A run's problem cases: those that failed or errored, in file order, and those planned
    that never finished. The ledger says how many never finished; their ids come from the
    cases file, and only from the very file the run read."""

    failed: list[CaseDetail]
    unfinished: list[str]
    unnamed: int  # cases that never finished whose ids cannot be known
    why_unnamed: str | None
    planned: int


def failures(ledger: Ledger, run: StoredRun) -> Failures:
    failed: list[CaseDetail] = []
    seen = SeenCases()
    for address, body in case_results(ledger, run.run_id):  # in file order
        seen.add(body)
        if is_problem(body):
            failed.append(case_detail(ledger, address, body, repeats=True))
    planned = planned_cases(run.body)
    missing = not_run(run.body, seen.count)
    unfinished: list[str] = []
    why: str | None = None
    if missing:
        chosen, why = read_planned_cases(run)
        if chosen is not None:
            unfinished = [case.id for case in chosen if not seen.has(case.id, case.line)]
    unnamed = max(missing - len(unfinished), 0)
    return Failures(failed, unfinished, unnamed, why, planned)


def read_planned_cases(run: StoredRun) -> tuple[list[Case] | None, str | None]:
    """The cases ``run`` planned, in file order, read from the very cases file the run read;
    else ``None`` and why not."""
    if run.body.get("parent") is not None:
        return None, "a diagnosis's child run re-executes cases its parent ran"
    from oloproof.dataset import load_dataset  # only here: `inspect RUN` starts without it
    from oloproof.subset import Selection, select

    block = run.body["dataset"]
    try:
        dataset = load_dataset(Path(block["path"]))
    except DatasetError:
        return None, f"{block['path']} cannot be read as the cases file it was"
    if dataset.digest != block["sha256"]:
        return None, f"{block['path']} has changed since the run read it"
    chosen = select(dataset.cases, Selection.from_body(run.body.get("subset")), recorded=True)
    return chosen, None


ARTIFACT_ORDER = ("retrieval/v1", "context/v1", "citations/v1")


def _sorted(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _sorted(value[k]) for k in sorted(value)}
    if isinstance(value, list):
        return [_sorted(v) for v in value]
    return value


def ordered_artifacts(artifacts: Mapping[str, Any]) -> dict[str, Any]:
    """Artifacts in pipeline order (retrieval, context, citations, then others by name),
    each with its keys sorted: the stable shape of an export."""
    rank = {kind: i for i, kind in enumerate(ARTIFACT_ORDER)}
    kinds = sorted(artifacts, key=lambda k: (rank.get(k, len(rank)), k))
    return {kind: _sorted(artifacts[kind]) for kind in kinds}


def export_run(ledger: Ledger, run: StoredRun, root: Path, row: RunRow) -> Path:
    """Write ``.oloproof/bundles/RUN_ID/`` (cases.jsonl and manifest.json); return the folder.

    Each line of cases.jsonl is one case: id, input, expected, metadata, status, output,
    artifacts (kind → list, as recorded), verdicts and the addresses behind them. The manifest
    names the run's address and the SHA-256 of cases.jsonl, so the bundle can be checked
    against the ledger, and (from ``row``) the run's state and how many of its planned cases
    never ran, which the bundle cannot hold. A folder that cannot be written (the project on
    a read-only file system, say) is a ``ConfigError`` naming it.
    """
    folder = root / ".oloproof" / "bundles" / run.run_id
    try:
        _write_bundle(ledger, run, row, folder)
    except OSError as exc:
        raise ConfigError(
            f"cannot write the bundle of {run.run_id} into {folder}: {exc.strerror or exc} "
            "(`--format jsonl --output DIR` writes the run's tables to a folder of your choice)"
        ) from None
    return folder


def _write_bundle(ledger: Ledger, run: StoredRun, row: RunRow, folder: Path) -> None:
    import fcntl

    folder.mkdir(parents=True, exist_ok=True)
    # One export of a run at a time: two writing the same folder at once would mix their
    # cases, or pair one's manifest with the other's cases. The folder itself is locked (no
    # lock file in the bundle), and the lock goes with the process.
    held = os.open(folder, os.O_RDONLY)
    try:
        fcntl.flock(held, fcntl.LOCK_EX)
        _write_bundle_files(ledger, run, row, folder)
    finally:
        os.close(held)


def _write_bundle_files(ledger: Ledger, run: StoredRun, row: RunRow, folder: Path) -> None:
    """Both files written beside their places, then renamed in: a failed write (a full
    device) leaves the bundle that was there, and no temporary file taking the room that the
    ledger and the next export need."""
    tmp, written = folder / "cases.jsonl.tmp", folder / "manifest.json.tmp"
    try:
        manifest = _write_bundle_cases(ledger, run, row, tmp)
        written.write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    except BaseException:
        for leftover in (tmp, written):
            with contextlib.suppress(OSError):  # the error that stopped the write is the one said
                leftover.unlink(missing_ok=True)
        raise
    tmp.replace(folder / "cases.jsonl")
    written.replace(folder / "manifest.json")  # a reader sees the whole manifest or the last


def _write_bundle_cases(ledger: Ledger, run: StoredRun, row: RunRow, tmp: Path) -> dict[str, Any]:
    """Write the bundle's cases into ``tmp``; return the manifest that describes them."""
    import hashlib

    digest = hashlib.sha256()
    count = 0
    with tmp.open("wb") as out:  # a case at a time: the bundle is never whole in memory
        for address, body in case_results(ledger, run.run_id):
            # A run recorded before a secret was declared holds it (``keep_out_declared``).
            line = json_line(redact_shown(_bundle_record(ledger, address, body)))
            data = line.encode("utf-8")
            digest.update(data)
            out.write(data)
            count += 1
        if count == 0:  # an empty bundle is one empty line, as it always was
            digest.update(b"\n")
            out.write(b"\n")
    return {
        "run_id": run.run_id,
        "run": run.address,
        "cases": count,
        "cases_sha256": digest.hexdigest(),
        "execution_state": row.execution_state,
        "planned_cases": row.planned,
        "not_run": row.not_run,
    }


# Python's str.splitlines (and every reader built on it) ends a line at U+0085, U+2028 and
# U+2029, which JSON leaves raw inside a string: written escaped, an output holding one cannot
# split its row in two.
_RAW_BREAKS = str.maketrans({"\x85": "\\u0085", "\u2028": "\\u2028", "\u2029": "\\u2029"})


def json_line(value: Any) -> str:
    """``value`` as one line of JSON Lines, ``\\n`` included: non-ASCII text as it is, but for
    the three characters above, escaped (the same value to any JSON reader)."""
    return json.dumps(value, ensure_ascii=False).translate(_RAW_BREAKS) + "\n"


def _bundle_record(ledger: Ledger, address: str, body: CaseResultBody) -> dict[str, Any]:
    detail = case_detail(ledger, address, body, repeats=True)
    record = {
        "id": detail.case_id,
        "input": detail.input,
        "expected": detail.expected,
        "metadata": detail.metadata,
        "status": detail.status,
        "output": detail.output,
        "artifacts": ordered_artifacts(detail.artifacts),
        "verdicts": detail.verdicts,
        "case_result": address,
        "execution": detail.execution,
        "judgments": detail.judgments,
    }
    if detail.error is not None:
        record["error"] = detail.error
    if detail.repeats is not None:
        record["repeats"] = [
            {**r, "artifacts": ordered_artifacts(r["artifacts"])} for r in detail.repeats
        ]
    return record
