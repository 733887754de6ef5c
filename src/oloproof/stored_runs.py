"""Runs as the ledger holds them: find one, check its indexes, and re-derive its report.

Apart from the runner (which plans and executes), so that reading a run (``inspect``, the
viewer, ``compare``) does not import what executing one needs: systems, evaluators, judges and
their HTTP clients.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import PurePath
from typing import Any

from ledger import Event, Ledger
from oloproof import events as ev
from oloproof import stats
from oloproof.bodies import (
    DecisionBody,
    RunBody,
    RunEndBody,
    decision_body,
    not_run,
    run_body,
    run_end_body,
)
from oloproof.calibration import calibration_at, find_calibration, judge_identities
from oloproof.errors import ConfigError, UnknownIdError
from oloproof.latest import LATEST, import_unfinished, index_disagreement, resolve_latest
from oloproof.metrics import (
    RunTally,
    case_result_of,
    criteria_of,
    stream_case_results,
    tally_run,
)
from oloproof.report import (
    DEFAULT_LEVEL,
    CorrectedRow,
    RunReport,
    build_run_report,
    corrected_row,
    error_groups,
)
from oloproof.runlock import names_a_file, writer_of
from oloproof.store import load_event


def _latest_meta_event(ledger: Ledger, run_id: str, kind: str) -> Event | None:
    found: Event | None = None
    for _, event in ledger.lookup_events("run_meta", run_id):
        if event.type == kind:
            found = event
    return found


def latest_meta(ledger: Ledger, run_id: str, kind: str) -> Mapping[str, Any] | None:
    """The body of a run's latest event of ``kind`` (run_end or decision), or None."""
    found = _latest_meta_event(ledger, run_id, kind)
    return None if found is None else found.body


def latest_end(ledger: Ledger, run_id: str) -> RunEndBody | None:
    """The body of a run's latest run_end, or None."""
    found = _latest_meta_event(ledger, run_id, ev.RUN_END)
    return None if found is None else run_end_body(found)


def latest_decision(ledger: Ledger, run_id: str) -> DecisionBody | None:
    """The body of the decision a run's reports show (``standing_decision``), or None."""
    found = standing_decision(ledger.lookup_events("run_meta", run_id))
    return None if found is None else decision_body(found)


def standing_decision(run_meta: Iterable[tuple[str, Event]]) -> Event | None:
    """Of a run's run_end and decision events (in append order), the decision its reports show:
    the first of those made on the most case results.

    A resume decides again on more cases, so the decision made on the most stands. Two made on
    as many come from two writers that each finished the run (copies of a project, one's
    archive imported into the other): reports count each case's first result, and the decision
    made first was made on those; the other's gate, shown beside them, would contradict them
    (``verify`` names it). A decision whose run_end is not found stands if it is the last.
    """
    counts: dict[str, int] = {}
    found: Event | None = None
    found_cases: int | None = None
    for address, event in run_meta:
        if event.type == ev.RUN_END:
            counts[address] = int(event.body["cases"])
        elif event.type == ev.DECISION:
            cases = counts.get(event.refs[1]) if len(event.refs) > 1 else None
            if found_cases is None or cases is None or cases > found_cases:
                found, found_cases = event, cases
    return found


@dataclass(frozen=True)
class StoredRun:
    run_id: str
    address: str
    body: RunBody


def require_ledger(ledger: object) -> None:
    """Refuse what is not an open ledger: a caller's mistake (the Python API), said as one."""
    if not isinstance(ledger, Ledger):
        given = f"the path {ledger!r}" if isinstance(ledger, (str, PurePath)) else repr(ledger)
        raise ConfigError(
            f"ledger is an open ledger (oloproof.open_project_ledger(folder)), not {given}; "
            "close it when done, or use it in a with block"
        )


def load_run(ledger: Ledger, text: str) -> StoredRun:
    """The run named by an id, a ref or an address of its run event.

    ``latest`` is the newest top-level run that finished (``oloproof.latest``).
    """
    require_ledger(ledger)
    if not isinstance(text, str):
        raise UnknownIdError(f"a run is named by its id, a ref or an address, not {text!r}")
    if text == LATEST:
        text = resolve_latest(ledger)
    address, event = load_event(ledger, text, ev.RUN, "a run")
    body = run_body(event)
    if not names_a_file(body["run_id"]):  # it names files: refused before any is made
        raise UnknownIdError(
            f"run event {address} names its run {body['run_id']!r}, which is not a run id: "
            "it is not read as a run"
        )
    return StoredRun(body["run_id"], address, body)


def check_run_indexes(ledger: Ledger, run: StoredRun, tally: RunTally | None = None) -> None:
    """Refuse to read a run whose index disagrees with what the run recorded.

    The case results a read finds come through the ledger's index; a damaged index page
    hides some of them, and a report on the rest would look complete. So the cases (and the
    errored ones) the index finds must be what the run's latest end record counts, and a
    decision needs an end record beside it. A run still being resumed has found more than its
    last end record counted, which is not damage. An end record needs the decision written
    beside it (``check_decided``). ``tally`` saves a pass over the cases when the caller has
    one. Raises ``LedgerAccessError`` naming ``oloproof ledger rebuild-indexes``.
    """
    end = latest_end(ledger, run.run_id)
    decision = latest_decision(ledger, run.run_id)
    if end is None:
        if decision is None:
            return  # not finished yet (or never will be): nothing recorded to check against
        problem = "it has a decision but its index finds no end record"
    else:
        check_decided(run.run_id, run.body, end, decision)
        found = (tally.cases, tally.errored) if tally is not None else _count(ledger, run.run_id)
        if found == (end["cases"], end["errored"]):
            return
        if end["state"] != "complete" and found[0] > end["cases"]:
            return  # a resume has written more cases since
        problem = (
            f"its end record counts {end['cases']} cases ({end['errored']} errored), "
            f"its index finds {found[0]} ({found[1]} errored)"
        )
    raise index_disagreement(run.run_id, problem)


def check_decided(
    run_id: str, body: Mapping[str, Any], end: Mapping[str, Any], decision: object | None
) -> None:
    """Refuse a run with a policy whose end record is found without a decision.

    A run with a policy that was not stopped writes its decision in the commit that writes
    its end record (``runner._finish``), so one found alone had its decision hidden by a
    damaged index page: the run would read as never decided, its gate unsaid.
    """
    if decision is None and body.get("policy") is not None and end["state"] != "stopped":
        raise index_disagreement(
            run_id, "its index finds its end record but not the decision written with it"
        )


def check_case_index(ledger: Ledger, run: StoredRun) -> None:
    """Refuse to read a run's cases by their ids when its index by case id misses some.

    A read that looks each case up by its id (a diagnosis reading its child runs) takes a case
    that index does not find for one the run never ran: a damaged page would change what the
    read derives. So the run's indexes are checked as ``check_run_indexes`` checks them, and
    each case of the run's own list must be found by its id as well. Raises
    ``LedgerAccessError`` naming ``oloproof ledger rebuild-indexes``.
    """
    check_run_indexes(ledger, run)
    held = missed = 0
    for body in stream_case_results(ledger, run.run_id):
        held += 1
        missed += case_result_of(ledger, run.run_id, body["case_id"]) is None
    if missed:
        raise index_disagreement(
            run.run_id, f"its index by case id misses {missed} of its {held} cases"
        )


def _count(ledger: Ledger, run_id: str) -> tuple[int, int]:
    """The case results of a run, and the errored ones among them."""
    cases = errored = 0
    for body in stream_case_results(ledger, run_id):
        cases += 1
        errored += body["status"] == "errored"
    return cases, errored


def read_run_report(ledger: Ledger, run_id: str) -> RunReport:
    """The report of the run named by ``run_id`` (an id, a ref or an address), from the ledger."""
    run = load_run(ledger, run_id)
    tally = tally_run(ledger, run.run_id, criteria_of(run.body), list(run.body["slices"]))
    check_run_indexes(ledger, run, tally)
    end = latest_end(ledger, run.run_id)
    decision = latest_decision(ledger, run.run_id)
    # Intervals of the same counts as the run's end computed are taken from it (any other, say
    # of cases a resume added later, is computed): ``verify`` recomputes what it stored.
    running = writer_of(ledger.path, run.run_id) is not None
    with stats.remembered((end.get("intervals") or ()) if end else ()):
        report = report_of(ledger, run.body, run.address, tally, end, decision, running=running)
    return replace(
        report,
        import_unfinished=import_unfinished(ledger, run.run_id),
        diagnosis_of=(run.body.get("parent") or {}).get("diagnosis_of"),
    )


def report_of(
    ledger: Ledger,
    body: Mapping[str, Any],
    address: str,
    tally: RunTally,
    end: RunEndBody | None,
    decision: Mapping[str, Any] | None,
    *,
    running: bool = False,
) -> RunReport:
    corrected = _corrected_rows(ledger, body, tally, decision)
    errors = error_groups(ledger, tally.errored_cases)
    repeat_errors = error_groups(ledger, tally.errored_repeat_cases)
    return build_run_report(
        body,
        address,
        tally,
        end,
        decision,
        corrected=corrected,
        errors=errors,
        running=running,
        repeat_errors=repeat_errors,
    )


def _corrected_rows(
    ledger: Ledger,
    run_body: Mapping[str, Any],
    tally: RunTally,
    decision: Mapping[str, Any] | None,
) -> list[CorrectedRow]:
    """Each pass/fail judge metric with a calibration, corrected for the judge's errors.

    The calibration is the one the decision relied on, else the newest of the judge's exact
    identity.
    """
    policy = run_body.get("policy")
    level = float(policy["confidence_level"]) if policy else DEFAULT_LEVEL
    relied: dict[str, str] = {}
    for rule in decision["rules"] if decision else ():
        address = rule["detail"].get("judge", {}).get("calibration")
        if isinstance(address, str):
            relied.setdefault(rule["metric"], address)
    rows = []
    judges = judge_identities(e["spec"] for e in run_body["evaluators"])
    for criterion, (identity, _) in judges.items():
        metric = tally.metrics.get(criterion)
        if metric is None or metric.kind != "pass_fail":
            continue
        address = relied.get(criterion)
        found = calibration_at(ledger, address) if address is not None else None
        chosen = (address, found) if address is not None and found is not None else None
        chosen = chosen or find_calibration(ledger, identity)
        if chosen is not None:
            rows.append(
                corrected_row(
                    metric, chosen[1], chosen[0], level, not_run=not_run(run_body, tally.cases)
                )
            )
    return rows


def is_complete(end: Mapping[str, Any] | None) -> bool:
    return end is not None and end["state"] == "complete"
