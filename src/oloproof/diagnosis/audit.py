"""Check a stored diagnosis against what the ledger re-derives (``diagnose --verify``, verify).

Requirements this module meets:

1. ``verify_diagnosis`` re-reads the inputs a diagnosis names (its parent run, its child runs,
   the carried gold-context diagnosis), checks that they are what the diagnosis says they are,
   re-derives every other field with ``derive_diagnosis`` and lists each difference. An empty
   list means the diagnosis is exactly what the ledger re-derives.
2. It never stops at the first difference and never raises for a damaged diagnosis: what
   cannot be re-derived is itself reported.
3. ``diagnosis_checks`` runs it over every stored diagnosis for ``oloproof verify``, one
   ``StaleSummary`` problem per diagnosis that differs, naming its first differences. An
   event whose bytes are corrupt is skipped: the ledger's own check already names it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from ledger import CorruptEventError, Ledger, LedgerError, Problem
from oloproof import events as ev
from oloproof.diagnosis.derive import DERIVED_FIELDS, derive_diagnosis, diagnosis_refs
from oloproof.diagnosis.labels import COMPLETE, GOLD_CONTEXT, child_labels
from oloproof.errors import OloproofError
from oloproof.events import plain
from oloproof.stored_runs import load_run

STALE_SUMMARY = "StaleSummary"
"""The kind of problem of a stored summary that no longer re-derives from the events."""

MAX_DETAILS = 5
"""Differences spelled out in one problem's detail; the rest are counted."""


def verify_diagnosis(ledger: Ledger, address: str) -> list[str]:
    """Re-derive a diagnosis from its parent, child runs and carried labels; list differences.

    An empty list means every label and count matches what the ledger re-derives.
    """
    try:
        event = ledger.get(address)
        if event.type != ev.DIAGNOSIS:
            return [f"{address} is a {event.type} event, not a diagnosis"]
        body = event.body
        problems = _check_inputs(ledger, body)
        if problems:
            return problems
        parent = load_run(ledger, body["run"])
        derived = derive_diagnosis(
            ledger,
            parent,
            criterion=body["criterion"],
            intervention=body["intervention"],
            child_runs=body["child_runs"],
            carried_from=body.get("carried_from"),
            repeats=body.get("repeats", 1),
        )
    except (LedgerError, OloproofError, KeyError, TypeError, ValueError) as exc:
        return [f"cannot re-derive it: {type(exc).__name__}: {exc}"]
    problems = _differences(plain(body), plain(derived))
    if sorted(event.refs) != sorted(diagnosis_refs(derived)):
        problems.append("its links differ from the parent, child runs and carried diagnosis")
    return problems


def diagnosis_checks(ledger: Ledger) -> Iterator[Problem]:
    """One ``StaleSummary`` problem per stored diagnosis that differs (for verify)."""
    for address in ledger.lookup("type", ev.DIAGNOSIS):
        try:
            ledger.get(address)
        except CorruptEventError:
            continue  # the ledger's own check names it
        yield from stale_summary(address, "diagnosis", verify_diagnosis(ledger, address))


def stale_summary(address: str, kind: str, differences: Iterable[str]) -> Iterator[Problem]:
    """One ``StaleSummary`` problem for an event whose stored summary differs (else none).

    Its detail names the kind of summary and its first differences; the rest are counted.
    """
    found = list(differences)
    if not found:
        return
    detail = "; ".join(found[:MAX_DETAILS])
    if len(found) > MAX_DETAILS:
        detail += f"; and {len(found) - MAX_DETAILS} more"
    yield Problem(STALE_SUMMARY, address, f"{kind}: {detail}")


def _check_inputs(ledger: Ledger, body: Mapping[str, Any]) -> list[str]:
    problems: list[str] = []
    repeats = body.get("repeats", 1)
    # Each child run must be one the intervention and its number of repeats call for.
    allowed = dict(child_labels(body["intervention"], repeats))
    for child in body["child_runs"]:
        if allowed.get(child["label"]) != child.get("role"):
            problems.append(
                f"child run {child['label']} ({child['run_id']}) is not one of the runs "
                f"{repeats} repeat(s) of this intervention make"
            )
    parent = load_run(ledger, body["run"])
    if parent.run_id != body["run_id"]:
        problems.append(f"run_id: stored {body['run_id']}, the linked run is {parent.run_id}")
    for child in body["child_runs"]:
        run = load_run(ledger, child["address"])
        if run.run_id != child["run_id"]:
            problems.append(
                f"child run {child['label']}: stored {child['run_id']}, "
                f"the linked run is {run.run_id}"
            )
        recorded = plain(run.body.get("parent") or {})
        if (
            recorded.get("diagnosis_of") != body["run_id"]
            or recorded.get("criterion") != body["criterion"]
            or recorded.get("label") != child["label"]
        ):
            problems.append(
                f"child run {child['label']} ({run.run_id}) is not a diagnosis "
                f"of {body['run_id']} on {body['criterion']}"
            )
    carried = body.get("carried_from")
    if carried:
        gold = ledger.get(carried)
        if (
            gold.type != ev.DIAGNOSIS
            or gold.body["run_id"] != body["run_id"]
            or gold.body["criterion"] != body["criterion"]
            or gold.body["intervention"]["kind"] != GOLD_CONTEXT
            or gold.body.get("state", COMPLETE) != COMPLETE
        ):
            problems.append(
                f"carried_from {carried} is not a complete gold-context diagnosis of "
                f"{body['run_id']} on {body['criterion']}"
            )
    return problems


def _differences(stored: Mapping[str, Any], derived: Mapping[str, Any]) -> list[str]:
    problems: list[str] = []
    for key in DERIVED_FIELDS:
        if key == "cases":
            problems.extend(_case_differences(stored.get(key) or [], derived[key]))
        elif key == "summary":
            for name in sorted(set(stored.get(key) or {}) | set(derived[key])):
                mine, theirs = (stored.get(key) or {}).get(name), derived[key].get(name)
                if mine != theirs:
                    problems.append(f"summary.{name}: stored {mine!r}, re-derived {theirs!r}")
        elif stored.get(key) != derived.get(key):
            problems.append(f"{key}: stored {stored.get(key)!r}, re-derived {derived.get(key)!r}")
    return problems


def _case_differences(
    stored: Sequence[Mapping[str, Any]], derived: Sequence[Mapping[str, Any]]
) -> list[str]:
    mine = {c["case_id"]: c for c in stored}
    theirs = {c["case_id"]: c for c in derived}
    problems: list[str] = []
    for case_id in sorted(set(mine) | set(theirs)):
        if case_id not in theirs:
            problems.append(f"case {case_id}: stored, but not selected when re-derived")
            continue
        if case_id not in mine:
            problems.append(f"case {case_id}: selected when re-derived, but not stored")
            continue
        for name in sorted(set(mine[case_id]) | set(theirs[case_id])):
            a, b = mine[case_id].get(name), theirs[case_id].get(name)
            if a != b:
                problems.append(f"case {case_id}: {name} stored {a!r}, re-derived {b!r}")
    return problems
