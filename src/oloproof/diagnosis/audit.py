"""Check a stored diagnosis against what the ledger re-derives (``diagnose --verify``, verify).

Requirements this module meets:

1. ``verify_diagnosis`` re-reads the inputs a diagnosis names (its parent run, its child runs,
   the carried gold-context diagnosis), checks that they are what the diagnosis says they are,
   re-derives every other field with ``derive_diagnosis`` and lists each difference. The case
   records are compared one at a time, the stored ones read a page at a time, and the pages
   must be the very pages the re-derived records make. An empty list means the diagnosis is
   exactly what the ledger re-derives.
2. It never stops at the first difference and never raises for a damaged diagnosis: what
   cannot be re-derived is itself reported.
3. ``diagnosis_checks`` runs it over every stored diagnosis for ``oloproof verify``, one
   ``StaleSummary`` problem per diagnosis that differs, naming its first differences. An
   event whose bytes are corrupt is skipped: the ledger's own check already names it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from ledger import CorruptEventError, Ledger, LedgerError, Problem, decode
from oloproof import events as ev
from oloproof.bodies import DiagnosisBody, diagnosis_body
from oloproof.diagnosis.derive import (
    DERIVED_FIELDS,
    Derivation,
    derive_diagnosis,
    diagnosis_cases,
    diagnosis_excluded,
    diagnosis_refs,
    page_addresses,
    paged,
)
from oloproof.diagnosis.labels import COMPLETE, GOLD_CONTEXT, child_labels
from oloproof.display import an_event
from oloproof.errors import LedgerAccessError, OloproofError
from oloproof.events import plain
from oloproof.stored_runs import load_run

STALE_SUMMARY = "StaleSummary"
"""The kind of problem of a stored summary that no longer re-derives from the events."""

MAX_DETAILS = 5
"""Differences spelled out in one problem's detail; the rest are counted."""


def verify_diagnosis(ledger: Ledger, address: str, *, refuse: bool = False) -> list[str]:
    """Re-derive a diagnosis from its parent, child runs and carried labels; list differences.

    An empty list means every label and count matches what the ledger re-derives. With
    ``refuse``, a ledger that cannot be read as it is (its indexes disagree with a run: a
    ``LedgerAccessError``) is raised rather than listed: the diagnosis is not known to differ,
    and a caller checking this one diagnosis has nothing else to say.
    """
    try:
        event = ledger.get(address)
        if event.type != ev.DIAGNOSIS:
            return [f"{address} is {an_event(event.type)}, not a diagnosis"]
        body = diagnosis_body(event)
        problems = _check_inputs(ledger, body)
        if problems:
            return problems
        parent = load_run(ledger, body["run"])
        # A diagnosis is re-derived as its schema wrote it (``derive_diagnosis``): the upcast
        # body's None counts cannot tell a schema-2 diagnosis from a forged one.
        stored_schema = decode(ledger.get_bytes(address))["schema"]
        derived = derive_diagnosis(
            ledger,
            parent,
            criterion=body["criterion"],
            intervention=body["intervention"],
            child_runs=body["child_runs"],
            carried_from=body.get("carried_from"),
            repeats=body.get("repeats", 1),
            schema=stored_schema,
            parent_results=body["parent_results"],
        )
        problems, made = _record_differences(ledger, body, derived)
    except (LedgerError, OloproofError, KeyError, TypeError, ValueError) as exc:
        if refuse and isinstance(exc, LedgerAccessError):
            raise
        return [f"cannot re-derive it: {type(exc).__name__}: {exc}"]
    problems.extend(_differences(plain(body), plain(made)))
    if not problems and "cases" not in body:
        # The records agree one by one; the pages must hold them as the writer pages them.
        for key in ("case_pages", "excluded_pages"):
            if list(body[key]) != made[key]:
                problems.append(f"{key}: the stored pages are not the pages its records make")
    if sorted(event.refs) != sorted(diagnosis_refs(body)):
        problems.append("its links differ from the parent, child runs, carried diagnosis and pages")
    return problems


def _record_differences(
    ledger: Ledger, body: DiagnosisBody, derived: Derivation
) -> tuple[list[str], DiagnosisBody]:
    """The differences between the stored and the re-derived records, compared one at a time,
    and the re-derived body (with the pages those records make)."""
    pages: list[str] = []
    problems = _case_differences(diagnosis_cases(ledger, body), paged(derived.records, pages))
    selection = derived.selection
    problems += _case_differences(
        diagnosis_excluded(ledger, body), selection.excluded_records(), "excluded case"
    )
    if "selected" in body:  # an older diagnosis, which stored its selected ids whole
        ids = list(selection.selected)
        if plain(body["selected"]) != ids:
            problems.append(f"selected: stored {body['selected']!r}, re-derived {ids!r}")
    return problems, derived.body(pages, page_addresses(selection.excluded_records()))


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
            or gold.body["relevance_unit"] != body["relevance_unit"]
        ):
            problems.append(
                f"carried_from {carried} is not a complete gold-context diagnosis of "
                f"{body['run_id']} on {body['criterion']} by {body['relevance_unit']}"
            )
    return problems


def _differences(stored: Mapping[str, Any], derived: Mapping[str, Any]) -> list[str]:
    problems: list[str] = []
    for key in DERIVED_FIELDS:
        if key == "summary":
            for name in sorted(set(stored.get(key) or {}) | set(derived[key])):
                mine, theirs = (stored.get(key) or {}).get(name), derived[key].get(name)
                if mine != theirs:
                    problems.append(f"summary.{name}: stored {mine!r}, re-derived {theirs!r}")
        elif stored.get(key) != derived.get(key):
            problems.append(f"{key}: stored {stored.get(key)!r}, re-derived {derived.get(key)!r}")
    return problems


def _case_differences(
    stored: Iterable[Any], derived: Iterable[Any], what: str = "case"
) -> list[str]:
    """The differences between two streams of case records, both in case-id order."""
    mine, theirs = iter(stored), iter(derived)
    a, b = next(mine, None), next(theirs, None)
    problems: list[str] = []
    while a is not None or b is not None:
        if b is None or (a is not None and a["case_id"] < b["case_id"]):
            assert a is not None
            problems.append(f"{what} {a['case_id']}: stored, but not re-derived")
            a = next(mine, None)
        elif a is None or b["case_id"] < a["case_id"]:
            problems.append(f"{what} {b['case_id']}: re-derived, but not stored")
            b = next(theirs, None)
        else:
            one, other = plain(a), plain(b)
            for name in sorted(set(one) | set(other)):
                if one.get(name) != other.get(name):
                    problems.append(
                        f"{what} {a['case_id']}: {name} stored {one.get(name)!r}, "
                        f"re-derived {other.get(name)!r}"
                    )
            a, b = next(mine, None), next(theirs, None)
    return problems
