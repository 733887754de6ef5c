"""Everything the viewer reads from the ledger, and the only viewer module that reads it.

Requirements this module meets:

1. The ledger is opened read-only, once per viewer; every page reads in fresh read
   transactions, so events a run is still writing appear on the next request.
2. Lists are paged in the ledger's indexes: the runs from the run type index; a run's problem
   cases (errored, or with a failed or missing verdict, in any of a repeated case's repeats)
   from the ``failures`` indexes of ``oloproof.events``, filtered by kind and criterion on
   index entries alone; a case by ``run_case``; a comparison's flips among the cases each run
   failed in a verdict or a repeat (``failures_criterion``), decided one by one by
   ``oloproof.flips`` as ``compare --cases`` decides them. Only the cases of the
   page shown are read. A ledger whose indexes older rules filed is refused when opened
   (``StaleIndexesError``): a read-only open cannot refile them, and a list read from them
   could be short.
3. A run's metrics and slices need a replay of its case results (``stored_runs.read_run_report``);
   the report is kept per run while the run's last case result and last run_end/decision stay
   the same, so a second look costs nothing and a run in progress is replayed again once it
   has moved on. What the stored summaries hold (state, gate, rules, cache counts, judge usage)
   is shown without a replay.
4. Nothing here renders: every function returns plain values (mappings, dataclasses) that the
   pages (``oloproof.view.pages``) lay out. Event bodies are read by key here and nowhere else
   in the viewer, so a change of a body's shape touches this module alone.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ledger import Event, Ledger, LedgerError
from oloproof import events as ev
from oloproof.bodies import (
    CaseResultBody,
    ComparisonBody,
    DecisionBody,
    DiagnosisBody,
    JudgmentBody,
    Map,
    RunBody,
    RunEndBody,
    StageRef,
    comparison_body,
    decision_body,
    diagnosis_body,
    execution_body,
    judgment_body,
    not_run,
    planned_cases,
    run_body,
    run_end_body,
)
from oloproof.diagnosis.labels import intervention_label
from oloproof.diagnosis.lines import count_lines, stopped_lines
from oloproof.diagnosis.scope import Exclusion, exclusions, selected_line
from oloproof.display import an_event
from oloproof.errors import UnknownIdError
from oloproof.flips import Flip, case_flips, in_listed_order
from oloproof.inspect import CaseDetail, case_detail, unfinished_case
from oloproof.latest import index_disagreement, listed_runs
from oloproof.metrics import (
    RecordedCases,
    case_result_body,
    case_result_of,
    slice_value,
    stream_case_results,
)
from oloproof.relevance import retrieval_units, run_unit
from oloproof.repeats import repeat_counts
from oloproof.report import (
    JudgeUsageRow,
    RunReport,
    judge_usage_rows,
    repeats_text,
)
from oloproof.report import rule_note as report_rule_note
from oloproof.run_list import newest_first, run_row
from oloproof.runlock import writer_of
from oloproof.store import LEDGER_DIR, open_read_only
from oloproof.stored_runs import StoredRun, check_case_index, standing_decision
from oloproof.subset import Selection

if TYPE_CHECKING:
    from oloproof.diagnosis.derive import Reused

PAGE_SIZE = 50
KINDS = ("errored", "failed", "missing")


class ViewError(UnknownIdError):
    """A page names something the ledger does not hold (the viewer answers 404)."""


# ----------------------------------------------------------------------------- the ledger


class Reader:
    """The project's ledger, opened read-only, with the caches that make pages fast."""

    def __init__(self, root: Path) -> None:
        path = root / LEDGER_DIR
        if not (path / "ledger" / "data.mdb").exists():
            raise UnknownIdError(f"no ledger in {root} (expected {path}); run `oloproof run` first")
        try:
            self.ledger: Ledger = open_read_only(path)
        except LedgerError as exc:
            raise UnknownIdError(str(exc)) from None
        self.root = root
        self._lock = threading.Lock()
        self._reports: dict[str, tuple[tuple[str | bool | None, ...], RunReport]] = {}
        self._flips: dict[str, list[Flip]] = {}
        self._filed: dict[str, tuple[tuple[str | bool | None, ...], Counter[tuple[str, str]]]] = {}
        # A static export lists only the runs it was asked for, all on one page.
        self.only_runs: set[str] | None = None

    def close(self) -> None:
        self.ledger.close()

    def resolve(self, text: str) -> str:
        try:
            return self.ledger.resolve(text)
        except LedgerError as exc:
            raise ViewError(str(exc)) from None

    def event(self, address: str) -> Event:
        try:
            return self.ledger.get(address)
        except LedgerError as exc:
            raise ViewError(str(exc)) from None

    def run_event(self, text: str) -> tuple[str, RunBody]:
        """The address and body of the run named by ``text`` (id, ref or address)."""
        address = self.resolve(text)
        event = self.event(address)
        if event.type != ev.RUN:
            raise ViewError(f"{text} is {an_event(event.type)}, not a run")
        return address, run_body(event)

    def run_meta(self, run_id: str) -> tuple[RunEndBody | None, DecisionBody | None]:
        """The latest run_end of a run and the decision its reports show
        (``standing_decision``), as bodies (either may be None)."""
        end: RunEndBody | None = None
        meta = list(self.ledger.lookup_events("run_meta", run_id))
        for _, event in meta:
            if event.type == ev.RUN_END:
                end = run_end_body(event)
        decision = standing_decision(meta)
        return end, None if decision is None else decision_body(decision)


def warm_up() -> None:
    """Load what a run's report needs (numpy, scipy's special functions and root finder) once,
    so the first run page a person opens does not also wait for those imports."""
    from collections import Counter

    from oloproof.stats import betting_interval_counts, clopper_pearson

    clopper_pearson(1, 2, 0.95)
    betting_interval_counts(Counter({0.5: 2}), 0.95)


# ---------------------------------------------------------------------------------- runs


@dataclass
class RunRow:
    run_id: str
    address: str
    created_at: str
    system: str
    version: str
    fingerprint: str | None
    state: str
    gate: str | None
    exit_code: int
    observed: int
    missing: int
    planned: int
    parent: Map | None
    children: list[DiagnosisRow] = field(default_factory=list)
    repeats_errored: int = 0
    """With ``--repeats``: how many of the ``repeats_executed`` executions errored."""
    repeats_executed: int = 0
    let_through: str | None = None
    """What a passed gate let through (``run_list.RunRow.let_through_said``)."""


@dataclass
class DiagnosisRow:
    address: str
    intervention: str
    criterion: str
    runs: list[RunRow]


def _run_row(reader: Reader, address: str, body: RunBody) -> RunRow:
    # The same state, gate and counts as `oloproof runs` shows: one definition of each.
    listed = run_row(reader.ledger, address, body)
    return RunRow(
        run_id=listed.run_id,
        address=address,
        created_at=listed.created_at,
        system=str(body["system"].get("name")),
        version=str(body["system"].get("version")),
        fingerprint=listed.code,
        state=listed.execution_state,
        gate=listed.gate,
        exit_code=listed.exit_code,
        observed=listed.observed,
        missing=listed.missing,
        planned=listed.planned,
        parent=body.get("parent"),
        repeats_errored=listed.repeats_errored,
        repeats_executed=listed.repeats_executed,
        let_through=listed.let_through_said,
    )


@dataclass
class RunsPage:
    rows: list[RunRow]
    total: int
    page: int
    pages: int
    systems: list[str]


def runs(
    reader: Reader,
    *,
    system: str | None = None,
    state: str | None = None,
    gate: str | None = None,
    page: int = 1,
) -> RunsPage:
    """Top-level runs, newest first, filtered; each with its diagnoses and their child runs."""
    top: list[tuple[str, RunBody]] = []
    children: dict[str, tuple[str, RunBody]] = {}
    for address, event in listed_runs(reader.ledger):
        body = run_body(event)
        if body.get("parent"):
            children[body["run_id"]] = (address, body)
        else:
            top.append((address, body))
    top = newest_first(top, lambda run: (run[1]["created_at"], run[1]["run_id"]))
    if reader.only_runs is not None:
        top = [(a, b) for a, b in top if b["run_id"] in reader.only_runs]
    size = PAGE_SIZE if reader.only_runs is None else max(1, len(top))
    systems = sorted({str(b["system"].get("name")) for _, b in top})
    rows = []
    for address, body in top:
        if system and str(body["system"].get("name")) != system:
            continue
        row = _run_row(reader, address, body)
        if (state and row.state != state) or (gate and (row.gate or "NONE") != gate):
            continue
        rows.append(row)
    total, pages, page = len(rows), max(1, -(-len(rows) // size)), max(1, page)
    shown = rows[(page - 1) * size : page * size]
    for row in shown:
        row.children = _diagnosis_rows(reader, row.run_id, children)
    return RunsPage(shown, total, page, pages, systems)


def _diagnosis_rows(
    reader: Reader, run_id: str, children: Mapping[str, tuple[str, RunBody]]
) -> list[DiagnosisRow]:
    found: list[DiagnosisRow] = []
    claimed: set[str] = set()
    for address, event in reader.ledger.lookup_events("diagnoses", run_id):
        body = diagnosis_body(event)
        child_rows = []
        for child in body.get("child_runs", []):
            if child["run_id"] in children:
                child_rows.append(_run_row(reader, *children[child["run_id"]]))
                claimed.add(child["run_id"])
        found.append(DiagnosisRow(address, intervention_text(body), body["criterion"], child_rows))
    orphans = [
        _run_row(reader, a, b)
        for rid, (a, b) in children.items()
        if (b["parent"] or {}).get("diagnosis_of") == run_id and rid not in claimed
    ]
    if orphans:  # child runs whose diagnosis is not recorded (yet)
        found.append(DiagnosisRow("", "no diagnosis recorded yet", "", orphans))
    found.reverse()
    return found


def intervention_text(body: DiagnosisBody) -> str:
    """The intervention as ``oloproof diagnose`` names it (``reranker m:f``, ``top-k 4``)."""
    return intervention_label(body["intervention"])


# ----------------------------------------------------------------------------------- a run


@dataclass
class RunPage:
    """What the run page shows; ``report`` replays the run on first use (and is cached)."""

    row: RunRow
    body: RunBody
    end: RunEndBody | None
    decision: DecisionBody | None
    problems: int
    diagnoses: list[DiagnosisRow]
    comparisons: list[tuple[str, str, str]]
    diagnosis_of: tuple[str, str] | None
    rules: dict[str, Mapping[str, Any]]
    thresholds: dict[str, list[float]]
    criteria: list[str]
    judges: list[JudgeUsageRow]
    _reader: Reader
    subset: str | None = None
    """``1 of 300 cases (sample 1, seed 7)`` for a run of part of its cases file."""

    @property
    def report(self) -> RunReport:
        return _cached_report(self._reader, self.row.run_id)


def _report_key(reader: Reader, run_id: str) -> tuple[str | bool | None, ...]:
    # Whether a process writes the run is part of its report (RUNNING, no gate yet), and it
    # changes without an event: a writer killed outright leaves the ledger as it was.
    return (
        reader.ledger.latest("run_cases", run_id),
        reader.ledger.latest("run_meta", run_id),
        writer_of(reader.ledger.path, run_id) is not None,
    )


def _cached_report(reader: Reader, run_id: str) -> RunReport:
    from oloproof.stored_runs import read_run_report

    key = _report_key(reader, run_id)
    with reader._lock:
        cached = reader._reports.get(run_id)
    if cached is not None and cached[0] == key:
        return cached[1]
    report = read_run_report(reader.ledger, run_id)
    with reader._lock:
        reader._reports[run_id] = (key, report)
    return report


def run_page(reader: Reader, run_id: str) -> RunPage:
    address, body = reader.run_event(run_id)
    run_id = body["run_id"]
    row = _run_row(reader, address, body)
    end, decision = reader.run_meta(run_id)
    if row.state == "RUNNING":
        # What an earlier go recorded (its stop, its gate, its cache counts) counts fewer cases
        # than are being written now: the run is decided, and counted, when it ends.
        end, decision = None, None
    elif row.state == "INTERRUPTED" and row.gate is None:
        # A gate that does not stand for the cases a killed resume wrote since
        # (``report.outgrown_gate_stands``): the row shows none, nor does the page.
        decision = None
    problems = len(_filed_cases(reader, run_id, ev.FAILURES, run_id))
    stored_runs = ((a, run_body(e)) for a, e in listed_runs(reader.ledger))
    children = {
        b["run_id"]: (a, b)
        for a, b in stored_runs
        if (b.get("parent") or {}).get("diagnosis_of") == run_id
    }
    stored_comparisons = ((a, comparison_body(e)) for a, e in reader.ledger.events(ev.COMPARISON))
    comparisons = [
        (a, c["candidate"]["run_id"], c["baseline"]["run_id"])
        for a, c in stored_comparisons
        if run_id in (c["candidate"]["run_id"], c["baseline"]["run_id"])
    ]
    rules = {r["id"]: r for r in (body.get("policy") or {}).get("rules", [])}
    thresholds: dict[str, list[float]] = {}
    for rule in rules.values():
        for key in ("min", "max"):
            if rule.get(key) is not None:
                thresholds.setdefault(rule["metric"], []).append(float(rule[key]))
    return RunPage(
        row=row,
        body=body,
        end=end,
        decision=decision,
        problems=problems,
        diagnoses=_diagnosis_rows(reader, run_id, children),
        comparisons=comparisons,
        diagnosis_of=_diagnosis_of(reader, body),
        rules=rules,
        thresholds=thresholds,
        criteria=[e["criterion"] for e in body["evaluators"]],
        judges=judge_usage_rows(body, end),
        _reader=reader,
        subset=_subset_text(body),
    )


def _subset_text(body: RunBody) -> str | None:
    recorded = body.get("subset")
    if not recorded:
        return None
    described = Selection.from_body(recorded).describe(planned_cases(body), int(recorded["total"]))
    return described.removeprefix("a subset: ")


def rule_note(rule: Mapping[str, Any]) -> str | None:
    """What the report prints under the rules for a decided ``rule`` (``oloproof.report``),
    or None."""
    return report_rule_note(rule["id"], rule["reason"], rule["detail"])


def _diagnosis_of(reader: Reader, body: RunBody) -> tuple[str, str] | None:
    """For a child run: (the diagnosis that links it, its parent run id)."""
    parent = (body.get("parent") or {}).get("diagnosis_of")
    if not parent:
        return None
    for address, event in reader.ledger.lookup_events("diagnoses", parent):
        child_runs = diagnosis_body(event).get("child_runs", [])
        if any(c["run_id"] == body["run_id"] for c in child_runs):
            return address, parent
    return "", parent


# ------------------------------------------------------------------------------ failures


@dataclass
class FailureRow:
    """One problem case. A repeated one says how its repeats went (``repeats``), and shows the
    error of its first repeat that errored and the output of its first that ran, each with its
    number (as ``inspect --failures`` lists it)."""

    case_id: str
    address: str
    status: str
    kinds: list[str]
    failed: list[str]
    missing: list[str]
    output: Any
    error: Map | None
    repeats: str | None = None
    output_repeat: int | None = None
    error_repeat: int | None = None


@dataclass
class FailuresPage:
    run_id: str
    criteria: list[str]
    slices: list[str]
    rows: list[FailureRow]
    total: int
    page: int
    pages: int
    unfinished: int


def failures(
    reader: Reader,
    run_id: str,
    *,
    criterion: str | None = None,
    kind: str | None = None,
    slice_: str | None = None,
    page: int = 1,
) -> FailuresPage:
    """One page of a run's problem cases, filtered by criterion, kind and ``slice=value``."""
    _, body = reader.run_event(run_id)
    run_id = body["run_id"]
    criteria = [e["criterion"] for e in body["evaluators"]]
    if criterion is not None and criterion not in criteria:
        raise ViewError(f"run {run_id} has no criterion {criterion!r}")
    if kind is not None and kind not in KINDS:
        raise ViewError(f"unknown kind {kind!r} (use {', '.join(KINDS)})")
    addresses = _problems(reader, run_id, criterion, kind)
    if slice_:
        addresses = _in_slice(reader, addresses, slice_)
    total = len(addresses)
    pages, page = max(1, -(-total // PAGE_SIZE)), max(1, page)
    chosen = addresses[(page - 1) * PAGE_SIZE : page * PAGE_SIZE]
    results = [case_result_body(e) for e in reader.ledger.get_many(chosen)]
    shown = [_shown_repeats(result) for result in results]
    wanted = {a for pair in shown for _, a in pair if a is not None}
    executions = dict(zip(wanted, reader.ledger.get_many(list(wanted)), strict=True))
    rows = []
    for address, result, ((ran, ran_at), (raised, raised_at)) in zip(
        chosen, results, shown, strict=True
    ):
        kinds, failed, missing = ev.problem_kinds(result)
        output = execution_body(executions[ran_at])["output"] if ran_at else None
        error = execution_body(executions[raised_at]).get("error") if raised_at else None
        counts = repeat_counts(result.get("repeats"))
        rows.append(
            FailureRow(
                case_id=result["case_id"],
                address=address,
                status=result["status"],
                kinds=kinds,
                failed=failed,
                missing=missing,
                output=output,
                error=error,
                repeats=None if counts is None else repeats_text(counts),
                output_repeat=ran if counts is not None and ran_at else None,
                error_repeat=raised if counts is not None and raised_at else None,
            )
        )
    end, _ = reader.run_meta(run_id)
    recorded = int(end["cases"]) if end else len(reader.ledger.lookup("run_cases", run_id))
    return FailuresPage(
        run_id, criteria, list(body["slices"]), rows, total, page, pages,
        not_run(body, recorded),
    )  # fmt: skip


Shown = tuple[tuple[int, str | None], tuple[int, str | None]]


def _shown_repeats(result: CaseResultBody) -> Shown:
    """Which execution a failures row shows the output of, and which the error of, each with its
    repeat number: a case's own execution, or, repeated, its first repeat that ran and its first
    that errored (either may be None)."""
    repeats = result.get("repeats")
    if not repeats:
        own = result["execution"]
        return (1, own), (1, own if result["status"] == "errored" else None)
    found: dict[str, tuple[int, str]] = {}
    for number, repeat in enumerate(repeats, start=1):
        found.setdefault(repeat["status"], (number, str(repeat["execution"])))
    return found.get("ok", (0, None)), found.get("errored", (0, None))


def _problems(reader: Reader, run_id: str, criterion: str | None, kind: str | None) -> list[str]:
    def lookup(index: str, key: str) -> list[str]:
        return _filed_cases(reader, run_id, index, key)

    everything = lookup(ev.FAILURES, run_id)
    wanted: set[str] | None = None
    if kind is not None:
        wanted = set(lookup(ev.FAILURES_KIND, f"{run_id}/{kind}"))
    if criterion is not None:
        failed = lookup(ev.FAILURES_CRITERION, f"{run_id}/failed/{criterion}")
        missing = lookup(ev.FAILURES_CRITERION, f"{run_id}/missing/{criterion}")
        # "failed on C" and "missing on C" are exact; "errored" on C means missing on C.
        on = {"failed": failed, "missing": missing, "errored": missing}.get(kind or "")
        chosen = set(on if on is not None else failed + missing)
        wanted = chosen if wanted is None else wanted & chosen
    return everything if wanted is None else [a for a in everything if a in wanted]


def _filed_cases(reader: Reader, run_id: str, index: str, key: str) -> list[str]:
    """The case results a failures index files under ``key``, refused when it finds fewer
    than the run's cases are filed under there (``events.failure_entries``): a damaged index
    page hides some, and a page of them (or a comparison's flips) without those would look
    whole. More is no damage: a run being written files cases after they were counted."""
    held = _filed_counts(reader, run_id)[(index, key)]  # first: a run being written adds more
    found = reader.ledger.lookup(index, key)
    if len(found) < held:
        # The key after the run id: "", "KIND", or "failed/CRITERION" or "missing/CRITERION".
        kind, _, criterion = key.removeprefix(run_id).strip("/").partition("/")
        which = f"cases {kind} on {criterion}" if criterion else f"{kind or 'problem'} cases"
        raise index_disagreement(
            run_id, f"its failures index finds {len(found)} of its {held} {which}"
        )
    return found


def _filed_counts(reader: Reader, run_id: str) -> Counter[tuple[str, str]]:
    """How many of the run's case results each failures index files under each key, counted
    over its cases one at a time (bounded memory), and kept while the run is unchanged (as
    its report is)."""
    key = _report_key(reader, run_id)
    with reader._lock:
        cached = reader._filed.get(run_id)
    if cached is not None and cached[0] == key:
        return cached[1]
    counts: Counter[tuple[str, str]] = Counter()
    for body in stream_case_results(reader.ledger, run_id):
        counts.update(ev.failure_entries(body))
    with reader._lock:
        reader._filed[run_id] = (key, counts)
    return counts


def _in_slice(reader: Reader, addresses: Sequence[str], slice_: str) -> list[str]:
    """The addresses whose case result lies in ``name=value`` (their bodies read in chunks)."""
    name, _, value = slice_.partition("=")
    kept = []
    for start in range(0, len(addresses), 1024):
        chunk = addresses[start : start + 1024]
        for address, event in zip(chunk, reader.ledger.get_many(chunk), strict=True):
            if slice_value(name, event.body) == value:
                kept.append(address)
    return kept


# ----------------------------------------------------------------------------------- cases


@dataclass
class RepeatPage:
    """One repeat of a repeated case: ``detail`` as ``inspect --case`` has it
    (``inspect.repeat_details``), the judgments behind its verdicts and its stage outputs."""

    detail: Mapping[str, Any]
    judgments: dict[str, JudgmentBody]
    stages: list[StageRef]


@dataclass
class CasePage:
    """One case of a run. A repeated case's ``detail`` holds its combined verdicts, and
    ``repeats`` each repeat (its ``detail.output`` and the rest are its first repeat's)."""

    run_id: str
    run_body: RunBody
    detail: CaseDetail
    judgments: dict[str, JudgmentBody]
    criteria: list[str]
    stages: list[StageRef]
    diagnosed: list[tuple[str, str, str]]  # (diagnosis, its intervention, this case's label)
    # What relevance the retrieval is marked with: the run's retrieval metrics' units, and the
    # one they share (None when they disagree, as ``oloproof.relevance.run_unit`` has it).
    relevance_units: dict[str, str]
    relevance_unit: str | None
    repeats: list[RepeatPage] = field(default_factory=list)
    repeats_text: str | None = None


def find_case(reader: Reader, run_id: str, case_id: str) -> tuple[str, CaseResultBody]:
    """The address and body of one case of a run, found through the index."""
    address, body = reader.run_event(run_id)
    found = _case_by_id(reader, body["run_id"], case_id)
    if found is None:
        run = StoredRun(body["run_id"], address, body)
        # A case the index by case id misses may still be one the run holds (a damaged page):
        # refused as such, never said to be unfinished or unknown.
        check_case_index(reader.ledger, run)
        unfinished = unfinished_case(run, case_id)
        raise ViewError(unfinished or f"run {body['run_id']} has no case {case_id!r}")
    return found


def check_cases_found(reader: Reader, run_id: str) -> None:
    """Refuse (``check_case_index``) a run some of whose cases its index by case id misses:
    the page of a case finds it by its id. A static export checks each run so, before it
    writes any page."""
    address, body = reader.run_event(run_id)
    check_case_index(reader.ledger, StoredRun(body["run_id"], address, body))


def _case_by_id(reader: Reader, run_id: str, case_id: str) -> tuple[str, CaseResultBody] | None:
    address = case_result_of(reader.ledger, run_id, case_id)
    return None if address is None else (address, case_result_body(reader.event(address)))


def case_page(reader: Reader, run_id: str, case_id: str) -> CasePage:
    _, run_body = reader.run_event(run_id)
    address, body = find_case(reader, run_id, case_id)
    detail = case_detail(reader.ledger, address, body, repeats=True)
    execution = execution_body(reader.event(detail.execution))
    counts = repeat_counts(body.get("repeats"))
    units = retrieval_units(run_body["evaluators"])
    return CasePage(
        run_id=run_body["run_id"],
        run_body=run_body,
        detail=detail,
        judgments=_judgments(reader, detail.judgments),
        criteria=[e["criterion"] for e in run_body["evaluators"]],
        stages=list(execution.get("stages") or []),
        diagnosed=_diagnosed(reader, run_body["run_id"], case_id),
        relevance_units=units,
        relevance_unit=run_unit(units),
        repeats=_repeat_pages(reader, detail.repeats or []),
        repeats_text=None if counts is None else repeats_text(counts),
    )


def _judgments(reader: Reader, addresses: Mapping[str, str]) -> dict[str, JudgmentBody]:
    judged = list(addresses.items())
    events = reader.ledger.get_many([a for _, a in judged])
    return {c: judgment_body(e) for (c, _), e in zip(judged, events, strict=True)}


def _repeat_pages(reader: Reader, repeats: Sequence[Mapping[str, Any]]) -> list[RepeatPage]:
    executions = reader.ledger.get_many([r["execution"] for r in repeats])
    return [
        RepeatPage(
            repeat,
            _judgments(reader, repeat["judgments"]),
            list(execution_body(event).get("stages") or []),
        )
        for repeat, event in zip(repeats, executions, strict=True)
    ]


def _diagnosed(reader: Reader, run_id: str, case_id: str) -> list[tuple[str, str, str]]:
    """Each diagnosis of the run that labels this case, with the label it gives."""
    from oloproof.diagnosis.derive import diagnosis_case

    found = []
    for address, event in reader.ledger.lookup_events("diagnoses", run_id):
        body = diagnosis_body(event)
        case = diagnosis_case(reader.ledger, body, case_id)
        if case is not None:
            label = case.get("label") or (case.get("gold") or {}).get("label") or "—"
            found.append((address, intervention_text(body), str(label)))
    return found


def last_artifact(artifacts: Mapping[str, list[Any]], kind: str) -> Map | None:
    items = artifacts.get(kind) or []
    found: Map | None = items[-1] if items else None
    return found


# ------------------------------------------------------------------------------ diagnoses


@dataclass
class DiagnosisPage:
    address: str
    body: DiagnosisBody
    cases: list[Map]  # read from its pages: the page lists every case
    selected: str
    exclusions: list[Exclusion]
    stopped: list[str]
    counts: list[str]  # what it found, in the lines `diagnose` prints
    outcomes: dict[str, dict[str, str]]
    parent: RunRow
    reused: list[Reused]  # the child runs that read generations from the stage cache


def diagnosis_page(reader: Reader, text: str) -> DiagnosisPage:
    from oloproof.diagnosis import load_diagnosis
    from oloproof.diagnosis.derive import diagnosis_cases, reused_generations

    try:
        diagnosis = load_diagnosis(reader.ledger, reader.resolve(text))
    except UnknownIdError as exc:
        raise ViewError(str(exc)) from None
    body = diagnosis.body
    outcomes: dict[str, dict[str, str]] = {}
    for child in body.get("child_runs", []):
        verdicts: dict[str, str] = {}
        for case in stream_case_results(reader.ledger, child["run_id"]):
            verdict = case["verdicts"].get(body["criterion"])
            verdicts[case["case_id"]] = (
                "errored" if case["status"] == "errored" else verdict["s"] if verdict else "none"
            )
        outcomes[child["run_id"]] = verdicts
    parent_address, parent_body = reader.run_event(body["run_id"])
    return DiagnosisPage(
        diagnosis.address,
        body,
        list(diagnosis_cases(reader.ledger, body)),
        selected_line(body["summary"]),
        exclusions(reader.ledger, diagnosis.address, body),
        stopped_lines(body),
        count_lines(diagnosis),
        outcomes,
        _run_row(reader, parent_address, parent_body),
        reused_generations(reader.ledger, body),
    )


# ---------------------------------------------------------------------------- comparisons


@dataclass
class ComparisonPage:
    address: str
    body: ComparisonBody
    flips: list[Flip]
    flip_metrics: list[str]


def comparison_page(reader: Reader, text: str) -> ComparisonPage:
    address = reader.resolve(text)
    event = reader.event(address)
    if event.type != ev.COMPARISON:
        raise ViewError(f"{text} is {an_event(event.type)}, not a comparison")
    body = comparison_body(event)
    metrics = _pass_fail_metrics(reader, body)
    with reader._lock:
        flips = reader._flips.get(address)
    if flips is None:
        flips = _flips(reader, body, metrics)
        with reader._lock:
            reader._flips[address] = flips
    return ComparisonPage(address, body, flips, metrics)


def _pass_fail_metrics(reader: Reader, body: ComparisonBody) -> list[str]:
    """The compared metrics whose evaluator gives pass/fail verdicts in both runs: only on
    those is every flip found among the failures (``_flips``)."""
    kinds = []
    for role in (body["candidate"], body["baseline"]):
        _, run = reader.run_event(role["address"])
        kinds.append({e["criterion"]: e["kind"] for e in run["evaluators"]})
    return [
        m["metric"]
        for m in body["metrics"]
        if all(of_run.get(m["metric"]) == "pass_fail" for of_run in kinds)
    ]


def _flips(reader: Reader, body: ComparisonBody, metrics: Sequence[str]) -> list[Flip]:
    """The flips on pass/fail ``metrics``, each decided by ``flips.case_flips`` as
    ``oloproof compare --cases`` decides it, read from the failing cases of each run.

    The lower side of a flip on a pass/fail metric holds a judged fail: its verdict, or one of
    its repeats (below 1 even with its unjudged repeats passing, its judged ones are not all
    passes). The failures indexes file every such case (``failed`` under
    ``failures_criterion``), so only those of each run and their counterparts are read, never
    a whole run: of the case results the comparison read
    (``RecordedCases``), which a run resumed since outnumbers.

    A case either run's index by case id does not find, while its failures index files it or
    the comparison paired it, is refused as ``flips.flipped_cases`` refuses it: its flip
    would drop out of the list while the comparison's counts hold it.
    """
    cand_id, base_id = body["candidate"]["run_id"], body["baseline"]["run_id"]
    cands = RecordedCases(reader.ledger, cand_id, body["candidate"]["results"])
    bases = RecordedCases(reader.ledger, base_id, body["baseline"]["results"])
    alone = {  # the cases the comparison found in that run only
        run_id: {i for u in body["unpaired"] if u["reason"] == reason for i in u["case_ids"]}
        for run_id, reason in ((cand_id, "only_in_candidate"), (base_id, "only_in_baseline"))
    }
    found: dict[tuple[str, str], Flip] = {}
    for metric in metrics:
        for run_id, read, other, other_id in (
            (cand_id, cands, bases, base_id),
            (base_id, bases, cands, cand_id),
        ):
            for address, case in _failing_on(reader, run_id, metric):
                case_id = case["case_id"]
                own = read.address(case_id)
                if own is None and case_result_of(reader.ledger, run_id, case_id) is None:
                    raise index_disagreement(
                        run_id,
                        f"its index by case id misses case {case_id!r}, which its failures "
                        "index files",
                    )
                # Another result of its id than the one the comparison read is not compared.
                if own != address:
                    continue
                counterpart = other.get(case_id)
                if counterpart is None:
                    if case_id in alone[run_id]:
                        continue
                    raise index_disagreement(
                        other_id,
                        f"its index by case id misses case {case_id!r}, which run {run_id} "
                        "holds too",
                    )
                cand, base = (case, counterpart) if read is cands else (counterpart, case)
                for flip in case_flips(body, [metric], cand, base):
                    found[(flip.case_id, metric)] = flip
    return in_listed_order(found.values(), metrics)


def _failing_on(reader: Reader, run_id: str, metric: str) -> Iterator[tuple[str, CaseResultBody]]:
    """The cases of a run that failed ``metric``, or failed it in some of their repeats."""
    addresses = _filed_cases(reader, run_id, ev.FAILURES_CRITERION, f"{run_id}/failed/{metric}")
    for start in range(0, len(addresses), 1024):
        chunk = addresses[start : start + 1024]
        for address, event in zip(chunk, reader.ledger.get_many(chunk), strict=True):
            yield address, case_result_body(event)


# -------------------------------------------------------------------------------- address


@dataclass
class AddressPage:
    address: str
    event: Event
    links_out: list[tuple[str, str | None]]
    links_in: list[tuple[str, str]]
    links_in_note: str
    intact: bool
    missing_refs: list[str]
    rederived: list[str] | None
    rederivable: bool


def address_page(reader: Reader, text: str, *, rederive: bool = False) -> AddressPage:
    """The event at an address or prefix, its links both ways, and whether it verifies."""
    address = reader.resolve(text)
    try:
        event = reader.ledger.get(address)  # re-hashes the bytes against the address
        intact = True
    except LedgerError as exc:
        raise ViewError(str(exc)) from None
    links_out: list[tuple[str, str | None]] = []
    missing = []
    for ref in event.refs:
        if reader.ledger.has(ref):
            links_out.append((ref, _type_of(reader, ref)))
        else:
            links_out.append((ref, None))
            missing.append(ref)
    links_in, note = _links_in(reader, address, event)
    rederivable = event.type in (ev.DIAGNOSIS, ev.COMPARISON)
    rederived = _rederive(reader, address, event) if rederive and rederivable else None
    return AddressPage(
        address, event, links_out, links_in, note, intact, missing, rederived, rederivable
    )


def page_of(address: str, event: Event) -> tuple[str, ...] | None:
    """The viewer page that shows an event, as (kind, *names), if it has one."""
    if event.type == ev.RUN:
        return ("run", run_body(event)["run_id"])
    if event.type == ev.CASE_RESULT:
        case = case_result_body(event)
        return ("case", case["run_id"], case["case_id"])
    if event.type == ev.RUN_END:
        return ("run", run_end_body(event)["run_id"])
    if event.type == ev.DECISION:
        return ("run", decision_body(event)["run_id"])
    if event.type == ev.DIAGNOSIS:
        return ("diagnosis", address)
    if event.type == ev.COMPARISON:
        return ("comparison", address)
    return None


def _type_of(reader: Reader, address: str) -> str | None:
    try:
        return reader.ledger.get(address).type
    except LedgerError:
        return None


def _links_in(reader: Reader, address: str, event: Event) -> tuple[list[tuple[str, str]], str]:
    """Events that link to ``address``, as far as the indexes tell (the note says how far)."""
    lookup = reader.ledger.lookup
    found: list[tuple[str, str]] = []

    def add(addresses: Iterable[str], kind: str) -> None:
        found.extend((a, kind) for a in addresses if a != address)

    note = "found through the ledger's indexes"
    if event.type == ev.RUN:
        run_id = run_body(event)["run_id"]
        add(lookup("run_meta", run_id), "run_end or decision")
        add(lookup("diagnoses", run_id), ev.DIAGNOSIS)
        add(
            (a for a, e in reader.ledger.events(ev.COMPARISON) if address in e.refs),
            ev.COMPARISON,
        )
        add(
            (a for a, e in reader.ledger.events(ev.DIAGNOSIS) if address in e.refs[1:]),
            "diagnosis (as a child run)",
        )
        cases = len(lookup("run_cases", run_id))
        note = f"and {cases} case result(s), listed on the run's page"
    elif event.type == ev.EXECUTION:
        add(lookup("judgment", address), ev.JUDGMENT)
        add(lookup(ev.LINKED_FROM, address), ev.CASE_RESULT)
    elif event.type == ev.STAGE:
        add(lookup(ev.LINKED_FROM, address), ev.EXECUTION)
    elif event.type == ev.RUN_END:
        meta = lookup("run_meta", run_end_body(event)["run_id"])
        add((a for a in meta if a != address), "decision")
    elif event.type == ev.DIAGNOSIS:
        add(
            (a for a, e in reader.ledger.events(ev.DIAGNOSIS) if address in e.refs),
            ev.DIAGNOSIS,
        )
    elif event.type in (ev.JUDGMENT, ev.CASE_RESULT, ev.DECISION, ev.COMPARISON):
        note = "no index records what links to this kind of event; its own links are above"
    if event.type in (ev.RUN_END, ev.DECISION):
        found = [(a, _type_of(reader, a) or kind) for a, kind in found]
        found = [(a, k) for a, k in found if not (event.type == ev.RUN_END and k == ev.RUN_END)]
    return found, note


def _rederive(reader: Reader, address: str, event: Event) -> list[str]:
    """Differences between the stored summary and one derived again from its inputs."""
    if event.type == ev.DIAGNOSIS:
        from oloproof.diagnosis import verify_diagnosis

        return verify_diagnosis(reader.ledger, address)
    from oloproof.audit import verify_comparison

    return verify_comparison(reader.ledger, event)


def events_of_run(reader: Reader, run_id: str) -> Iterator[str]:
    """Every address a run's pages link to (for a static export): its run, meta and cases,
    each case's (each repeat's) execution, judgments and stage outputs."""
    address, _ = reader.run_event(run_id)
    yield address
    yield from reader.ledger.lookup("run_meta", run_id)
    for case_address, event in reader.ledger.lookup_events("run_cases", run_id):
        body = case_result_body(event)
        yield case_address
        # A repeated case's page links each repeat's execution, judgments and stage outputs.
        shown_each: Sequence[Mapping[str, Any]] = body.get("repeats") or [body]
        for shown in shown_each:
            yield shown["execution"]
            yield from shown["judgments"].values()
            execution = execution_body(reader.event(shown["execution"]))
            yield from (s["address"] for s in execution.get("stages") or [])


def case_ids(reader: Reader, run_id: str) -> Iterator[str]:
    for case in stream_case_results(reader.ledger, run_id):
        yield case["case_id"]
