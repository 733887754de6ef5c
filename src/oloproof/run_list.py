"""What ``oloproof runs`` lists: each run's state, gate, evidence counts and code fingerprint.

Requirements (``docs/running.md``, "Listing runs"):

1. One row per run, newest first, from its run event, its latest run_end and its latest
   decision alone (no case is replayed), so listing stays quick on a large ledger. (Only a
   run that ended without one, a run that holds more case results than its run_end counted
   (a ``--resume`` killed, or still running, after writing some), or a repeated run whose
   run_end predates its count of errored repeats, has its cases counted.)
2. A row never claims more than the ledger holds: the execution state distinguishes COMPLETE
   from PARTIAL (some cases, or with ``--repeats`` some repeats, errored), INTERRUPTED and
   STOPPED; the gate is shown only for a decided run (a stopped run has none); the counts say
   how many cases were answered (ran without error) and how many are missing, and why
   (errored, never ran), and in
   a repeated run how many of the repeats executed errored. A run of a subset of its cases
   (``--limit``, ``--sample``, ``--filter``) says so: its row carries what chose them and how
   many cases the file held (``subset``), so 5 of 5 answered is never read as the suite.
3. By default only top-level runs are listed. ``diagnosis_groups`` folds each run's diagnosis
   child runs under the diagnosis that made them; a child run no recorded diagnosis names is
   listed under its parent on its own.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any, TypeVar

from ledger import Ledger
from oloproof.bodies import not_run, planned_cases
from oloproof.latest import import_unfinished, listed_runs, run_end, started_at
from oloproof.metrics import RunTally, result_entries, stream_case_results
from oloproof.report import execution_state, gate_state, outgrown_gate_stands
from oloproof.runlock import writer_of
from oloproof.stored_runs import check_decided, standing_decision

SHORT = 8
"""Hex digits of a code fingerprint a row shows."""


@dataclass(frozen=True)
class RunRow:
    """One run as ``oloproof runs`` shows it.

    ``state`` is the latest run_end's own word (``complete``, ``interrupted``, ``stopped``),
    or ``running`` while a live process writes the run (a first go, or a ``--resume``);
    ``execution_state`` the report's (COMPLETE, PARTIAL, INTERRUPTED, STOPPED).
    ``decision_state`` is DECIDED, UNDECIDED or NO_POLICY; ``gate`` the decided gate's label
    (None unless DECIDED) and ``exit_code`` the run's exit code, as its report gives it.
    ``observed`` cases ran without error; ``missing`` = ``errored`` + ``not_run`` of
    ``planned``. ``code`` is the system's code fingerprints, shortened (None for a system whose
    code runs elsewhere, over HTTP).
    ``repeats`` is K of ``--repeats K``; ``repeats_errored`` how many of the ``cases`` x K
    executions errored (0 without repeats, and then neither is in ``to_json``). ``subset`` is
    what chose a subset's cases, with the file's ``total`` (``oloproof.subset``); None for a
    run of every case, and then it is not in ``to_json``. ``import_unfinished``: the run came
    by an ``oloproof ledger import`` cut short (``oloproof.latest``), so the cases it lacks
    ran where it was made and are not imported yet (in ``to_json`` only when true).
    ``let_through``: a passed gate's rules whose decision was not PASS, which ``block_on``
    let through, as (rule id, decision) (in ``to_json`` only when there are some).
    """

    run_id: str
    address: str
    created_at: str
    system: str
    state: str
    execution_state: str
    decision_state: str
    gate: str | None
    exit_code: int
    planned: int
    cases: int
    observed: int
    errored: int
    not_run: int
    code: str | None
    child_of: str | None
    label: str | None = None
    repeats: int = 1
    repeats_errored: int = 0
    subset: dict[str, Any] | None = None
    import_unfinished: bool = False
    let_through: tuple[tuple[str, str], ...] = ()

    @property
    def let_through_said(self) -> str | None:
        """``block_on let through rule floor: INSUFFICIENT_EVIDENCE``, beside a passed gate that
        leaned on ``block_on`` (as the run's report says under its gate); None otherwise."""
        if not self.let_through:
            return None
        rules = ", ".join(f"rule {rule}: {decision}" for rule, decision in self.let_through)
        return f"block_on let through {rules}"

    @property
    def missing(self) -> int:
        return self.errored + self.not_run

    @property
    def repeats_executed(self) -> int:
        return self.cases * self.repeats

    def to_json(self) -> dict[str, Any]:
        data = {**asdict(self), "missing": self.missing}
        if self.repeats == 1:  # a run without repeats lists as it always did
            del data["repeats"], data["repeats_errored"]
        if self.subset is None:
            del data["subset"]
        if not self.import_unfinished:
            del data["import_unfinished"]
        if self.let_through:
            data["let_through"] = [{"rule": r, "decision": d} for r, d in self.let_through]
        else:
            del data["let_through"]
        return data


@dataclass(frozen=True)
class DiagnosisGroup:
    """A diagnosis of a run and the child runs it made (in its own order)."""

    address: str
    criterion: str
    intervention: str
    runs: list[RunRow] = field(default_factory=list)


def run_rows(ledger: Ledger) -> list[RunRow]:
    """Every run in the ledger, newest first."""
    rows = [run_row(ledger, address, event.body) for address, event in listed_runs(ledger)]
    return newest_first(rows, lambda row: (row.created_at, row.run_id))


T = TypeVar("T")


def newest_first(runs: Sequence[T], started: Callable[[T], tuple[str, str]]) -> list[T]:
    """``runs`` (in the order the ledger recorded them) by when each started, newest first:
    ``started`` gives a run's ``created_at`` and its id. A start time is kept to the second;
    within one, the run id says which came later (it begins with its creation time, to the
    millisecond), as it does for ``latest``. A run imported from another ledger takes its place
    by when it ran, not by when it arrived."""

    def key(item: tuple[int, T]) -> tuple[datetime, str, int]:
        created_at, run_id = started(item[1])
        return started_at(created_at), run_id, item[0]

    order = sorted(enumerate(runs), key=key, reverse=True)
    return [run for _, run in order]


def diagnosis_groups(
    ledger: Ledger, run_id: str, children: Mapping[str, RunRow]
) -> tuple[list[DiagnosisGroup], list[RunRow]]:
    """The diagnoses of ``run_id`` with their child runs, and its child runs none names.

    ``children`` maps run ids to the rows of the run's child runs.
    """
    groups: list[DiagnosisGroup] = []
    named: set[str] = set()
    for address, event in ledger.lookup_events("diagnoses", run_id):
        body = event.body
        rows = []
        for child in body.get("child_runs", ()):
            row = children.get(child["run_id"])
            if row is not None:
                rows.append(row)
                named.add(row.run_id)
        groups.append(DiagnosisGroup(address, str(body["criterion"]), _intervention(body), rows))
    rest = [row for row in children.values() if row.run_id not in named]
    return groups, rest


def _intervention(body: Mapping[str, Any]) -> str:
    from oloproof.diagnosis.labels import intervention_label

    return intervention_label(body["intervention"])


def run_row(ledger: Ledger, address: str, body: Mapping[str, Any]) -> RunRow:
    """The row of the run whose run event is ``body`` (stored at ``address``)."""
    run_id = body["run_id"]
    end = run_end(ledger, run_id)
    planned = planned_cases(body)
    repeats = int(body.get("repeats", 1))
    repeats_errored: int | None = None
    # A run with no run_end (a crash), or one that wrote cases since its last (a resume
    # killed, or still going): its end record does not say what it holds.
    outgrown = end is not None and _outgrown(ledger, run_id, end)
    unsaid = end is None or outgrown
    if end is not None and not unsaid:
        cases, errored = int(end["cases"]), int(end["errored"])
        repeats_errored = end.get("repeats_errored", 0 if repeats == 1 else None)
    if repeats_errored is None:
        # Such a run, or a repeated run whose run_end was written before it counted errored
        # repeats: count what it wrote.
        counted = _counted(ledger, run_id)
        if unsaid:
            cases, errored = counted.cases, counted.errored
        repeats_errored = counted.repeats_errored
    running = writer_of(ledger.path, run_id) is not None
    execution = execution_state(end, errored + repeats_errored, running=running)
    if execution == "RUNNING":
        state = "running"
    else:
        state = str(end["state"]) if end is not None else "interrupted"
    decision_state, gate, exit_code, let_through = _gate(ledger, body, end, execution, outgrown)
    parent = body.get("parent") or {}
    return RunRow(
        run_id=run_id,
        address=address,
        created_at=str(body["created_at"]),
        system=f"{body['system']['name']} {body['system']['version']}",
        state=state,
        execution_state=execution,
        decision_state=decision_state,
        gate=gate,
        exit_code=exit_code,
        planned=planned,
        cases=cases,
        observed=cases - errored,
        errored=errored,
        not_run=not_run(body, cases),
        code=code_fingerprint(body["system"]),
        child_of=parent.get("diagnosis_of"),
        label=parent.get("label"),
        repeats=repeats,
        repeats_errored=int(repeats_errored),
        subset=dict(body["subset"]) if body.get("subset") else None,
        import_unfinished=import_unfinished(ledger, run_id),
        let_through=let_through,
    )


def _outgrown(ledger: Ledger, run_id: str, end: Mapping[str, Any]) -> bool:
    """Whether the run holds more case results than its run_end counted. Only a run that did
    not finish can: its index entries are counted, no case is read."""
    return end["state"] != "complete" and result_entries(ledger, run_id) > int(end["cases"])


def _counted(ledger: Ledger, run_id: str) -> RunTally:
    """The cases a run wrote, its errored cases and its errored repeats, read case by case."""
    tally = RunTally({}, [])
    for result in stream_case_results(ledger, run_id):  # the first result of each case
        tally.add(result)
    return tally


def _gate(
    ledger: Ledger,
    body: Mapping[str, Any],
    end: Mapping[str, Any] | None,
    execution: str,
    outgrown: bool,
) -> tuple[str, str | None, int, tuple[tuple[str, str], ...]]:
    """The decision state, gate and exit code a row shows: the report's
    (``report.build_run_report``), a gate that does not stand for the cases a killed resume
    wrote since (``outgrown``) included; and for a passed gate, the rules it let through."""
    decision = standing_decision(ledger.lookup_events("run_meta", body["run_id"]))
    if end is not None:
        check_decided(body["run_id"], body, end, decision)
    if outgrown and decision is not None and not outgrown_gate_stands(decision.body):
        decision = None
    standing = decision is not None and execution not in ("STOPPED", "RUNNING")
    gate = decision.body["gate"] if decision is not None and standing else None
    # The exit code as the run's report gives it (``inspect --json``): 3 for a run with a
    # policy and no decision, 2 for one bad input stopped, 0 without a policy.
    decision_state, exit_code = gate_state(gate, body.get("policy"), execution)
    label = None if gate is None else "BLOCK" if gate["blocked"] else "PASS"
    let_through: tuple[tuple[str, str], ...] = ()
    if label == "PASS" and decision is not None:
        rules = decision.body.get("rules") or []
        let_through = tuple((r["id"], r["outcome"]) for r in rules if r["outcome"] != "PASS")
    return decision_state, label, exit_code, let_through


def code_fingerprint(system: Mapping[str, Any]) -> str | None:
    """The system's code fingerprints (``code``, ``*_code``), 8 hex digits each, by name; one
    that repeats another (two stages fingerprinted from one file) is shown once."""
    found: list[str] = []
    for key, value in sorted(system.items()):
        if not (key == "code" or key.endswith("_code")):
            continue
        # A staged system keeps one fingerprint per method, by name.
        values = [v for _, v in sorted(value.items())] if isinstance(value, Mapping) else [value]
        for one in values:
            if isinstance(one, str) and one[:SHORT] not in found:
                found.append(one[:SHORT])
    return "/".join(found) if found else None
