"""Derive a diagnosis body from the ledger: the selection, the evidence, every label and count.

Requirements this module meets:

1. The selection (the parent's failed cases with gold context, and those excluded for lacking
   it) is read from the parent run's case results, the same for every intervention.
2. Every field of a diagnosis that is not one of its inputs (the parent run, the criterion,
   the intervention, the child runs, the carried gold-context diagnosis) is computed here from
   events alone: the parent's recorded retrievals and contexts, the child runs' verdicts and
   run_end records, and the carried diagnosis. Recording a diagnosis (``diagnosis.run``) and
   checking one (``diagnosis.audit``) both call ``derive_diagnosis``, so they cannot disagree.
3. A diagnosis whose child runs did not all finish records ``state`` (``stopped`` or
   ``interrupted``) and a ``reason`` naming the child run; a complete one records neither.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ledger import Ledger
from oloproof import events as ev
from oloproof.diagnosis.labels import (
    COMPLETE,
    GOLD_CONTEXT,
    INTERVENTION_RECOVERY,
    INTERVENTION_UNSUPPORTED,
    NO_GOLD_CONTEXT,
    NO_STRENGTH,
    NOT_OBSERVED,
    PASSED,
    RANKED_OUT,
    RECOVERED,
    STOPPED,
    UNRESOLVED,
    Evidence,
    child_labels,
    evidence_of,
    gold_label,
    implicated,
    is_failure,
    label_counts,
    outcome_of,
    replay_result,
)
from oloproof.metrics import case_results
from oloproof.runner import StoredRun, latest_meta
from oloproof.store import load_event

# Fields a diagnosis body holds that verify re-derives (the rest are its inputs).
DERIVED_FIELDS = (
    "run_id",
    "run",
    "criterion",
    "intervention",
    "system_kind",
    "top_k",
    "selected",
    "excluded",
    "cases",
    "summary",
    "state",
    "reason",
)

Derived = tuple[list[dict[str, Any]], dict[str, Any]]


@dataclass(frozen=True)
class Selection:
    """The parent's failed cases: the selected ones (by id) and the excluded ones."""

    selected: list[str]
    excluded: list[dict[str, str]]
    results: dict[str, Mapping[str, Any]]


def select_cases(ledger: Ledger, run_id: str, criterion: str) -> Selection:
    """Failed cases on ``criterion`` with gold context, and those excluded for lacking it."""
    selected: list[str] = []
    excluded: list[dict[str, str]] = []
    results: dict[str, Mapping[str, Any]] = {}
    for _, body in case_results(ledger, run_id):
        if not is_failure(body["verdicts"].get(criterion)):
            continue
        case_id = body["case_id"]
        if body["expected"].get("gold_context"):
            selected.append(case_id)
            results[case_id] = body
        else:
            excluded.append({"case_id": case_id, "reason": NO_GOLD_CONTEXT})
    return Selection(sorted(selected), sorted(excluded, key=lambda e: e["case_id"]), results)


def artifact(execution: Mapping[str, Any], kind: str) -> Mapping[str, Any] | None:
    """The last artifact of ``kind`` an execution recorded, or None."""
    items = execution.get("artifacts", {}).get(kind) or [None]
    found: Mapping[str, Any] | None = items[-1]
    return found


def derive_diagnosis(
    ledger: Ledger,
    parent: StoredRun,
    *,
    criterion: str,
    intervention: Mapping[str, Any],
    child_runs: Sequence[Mapping[str, Any]],
    carried_from: str | None,
) -> dict[str, Any]:
    """Every label and count of a diagnosis, from the parent, child runs and carried labels."""
    system = parent.body["system"]
    staged = system.get("kind") == "rag"
    top_k: int | None = system.get("top_k") if staged else None
    selection = select_cases(ledger, parent.run_id, criterion)
    evidence: dict[str, Evidence] = {}
    for case_id in selection.selected:
        result = selection.results[case_id]
        execution = ledger.get(result["execution"]).body
        evidence[case_id] = evidence_of(
            artifact(execution, "retrieval/v1"),
            artifact(execution, "context/v1"),
            result["expected"],
            top_k,
        )
    if not staged:
        cases, summary = _unsupported(selection.selected, evidence)
    elif intervention["kind"] == GOLD_CONTEXT:
        cases, summary = _gold(
            ledger, criterion, selection.selected, evidence, top_k or 0, child_runs
        )
    else:
        carried = _carried_cases(ledger, carried_from)
        cases, summary = _replay(
            ledger, criterion, selection.selected, evidence, child_runs, carried
        )
    summary = {"selected": len(selection.selected), "excluded": len(selection.excluded), **summary}
    body: dict[str, Any] = {
        "run_id": parent.run_id,
        "run": parent.address,
        "criterion": criterion,
        "intervention": dict(intervention),
        "system_kind": system.get("kind"),
        "top_k": top_k,
        "selected": selection.selected,
        "excluded": selection.excluded,
        "child_runs": [dict(c) for c in child_runs],
        "carried_from": carried_from,
        "cases": cases,
        "summary": summary,
    }
    expected = child_labels(intervention) if staged and selection.selected else ()
    state, reason = _state(ledger, expected, child_runs)
    if state != COMPLETE:
        body["state"] = state
        body["reason"] = reason
    return body


def _state(
    ledger: Ledger, expected: Sequence[str], child_runs: Sequence[Mapping[str, Any]]
) -> tuple[str, str | None]:
    """``complete``, or the state of the first child run that did not finish, and why."""
    for child in child_runs:
        end = latest_meta(ledger, child["run_id"], ev.RUN_END)
        state = end["state"] if end is not None else STOPPED
        if state != COMPLETE:
            why = (end or {}).get("reason") or "it recorded no end"
            return state, f"the {child['label']} run {child['run_id']} {state}: {why}"
    recorded = {child["label"] for child in child_runs}
    for label in expected:
        if label not in recorded:
            return STOPPED, f"the {label} run was never started"
    return COMPLETE, None


def _unsupported(selected: list[str], evidence: Mapping[str, Evidence]) -> Derived:
    cases = [
        {
            "case_id": case_id,
            "position": evidence[case_id].position,
            "label": UNRESOLVED,
            "reason": INTERVENTION_UNSUPPORTED,
            "strength": NO_STRENGTH,
        }
        for case_id in selected
    ]
    return cases, {"control_passed": None, "recovered": None, "labels": label_counts(cases)}


def _gold(
    ledger: Ledger,
    criterion: str,
    selected: list[str],
    evidence: Mapping[str, Evidence],
    top_k: int,
    child_runs: Sequence[Mapping[str, Any]],
) -> Derived:
    treated, control = _child_outcomes(ledger, criterion, child_runs)
    cases: list[dict[str, Any]] = []
    for case_id in selected:
        found = evidence[case_id]
        outcomes = (control.get(case_id, NOT_OBSERVED), treated.get(case_id, NOT_OBSERVED))
        label = gold_label(
            evidence=found, top_k=top_k, control=outcomes[0], intervention=outcomes[1]
        )
        cases.append(
            {
                "case_id": case_id,
                "position": found.position,
                "in_context": found.in_context,
                "drop_reasons": list(found.drop_reasons),
                "control": outcomes[0],
                "intervention": outcomes[1],
                "label": label.label,
                "reason": label.reason,
                "strength": label.strength,
            }
        )
    summary = {
        "control_passed": sum(c["control"] == PASSED for c in cases),
        "recovered": sum(c["strength"] == INTERVENTION_RECOVERY for c in cases),
        "labels": label_counts(cases),
        "implicated": implicated(cases),
    }
    return cases, summary


def _replay(
    ledger: Ledger,
    criterion: str,
    selected: list[str],
    evidence: Mapping[str, Evidence],
    child_runs: Sequence[Mapping[str, Any]],
    carried: Mapping[str, Mapping[str, Any]] | None,
) -> Derived:
    treated, control = _child_outcomes(ledger, criterion, child_runs)
    cases: list[dict[str, Any]] = []
    for case_id in selected:
        outcomes = (control.get(case_id, NOT_OBSERVED), treated.get(case_id, NOT_OBSERVED))
        result, strength = replay_result(control=outcomes[0], intervention=outcomes[1])
        gold = (carried or {}).get(case_id)
        cases.append(
            {
                "case_id": case_id,
                "position": evidence[case_id].position,
                "control": outcomes[0],
                "intervention": outcomes[1],
                "result": result,
                "strength": strength,
                "gold": None
                if gold is None
                else {k: gold[k] for k in ("label", "reason", "strength")},
            }
        )
    ranked_out = [c for c in cases if (c["gold"] or {}).get("label") == RANKED_OUT]
    summary = {
        "control_passed": sum(c["control"] == PASSED for c in cases),
        "recovered": sum(c["result"] == RECOVERED for c in cases),
        "ranked_out": None if carried is None else len(ranked_out),
        "confirmed": None if carried is None else sum(c["result"] == RECOVERED for c in ranked_out),
    }
    return cases, summary


def _outcomes(ledger: Ledger, run_id: str, criterion: str) -> dict[str, str]:
    return {
        body["case_id"]: outcome_of(body["verdicts"].get(criterion))
        for _, body in case_results(ledger, run_id)
    }


def _child(child_runs: Sequence[Mapping[str, Any]], role: str) -> Mapping[str, Any] | None:
    for child in child_runs:
        if child["role"] == role:
            return child
    return None


def _child_outcomes(
    ledger: Ledger, criterion: str, child_runs: Sequence[Mapping[str, Any]]
) -> tuple[dict[str, str], dict[str, str]]:
    treated = _child(child_runs, "intervention")
    control = _child(child_runs, "control")
    return (
        _outcomes(ledger, treated["run_id"], criterion) if treated else {},
        _outcomes(ledger, control["run_id"], criterion) if control else {},
    )


def _carried_cases(ledger: Ledger, carried_from: str | None) -> dict[str, Mapping[str, Any]] | None:
    if carried_from is None:
        return None
    body = ledger.get(carried_from).body
    return {c["case_id"]: c for c in body["cases"]}


def diagnosis_refs(body: Mapping[str, Any]) -> list[str]:
    """The links of a diagnosis event: its parent run, each child run, the carried diagnosis."""
    refs = [body["run"], *(c["address"] for c in body["child_runs"])]
    if body.get("carried_from"):
        refs.append(body["carried_from"])
    return refs


def latest_gold_diagnosis(ledger: Ledger, run_id: str, criterion: str) -> str | None:
    """The address of the latest complete gold-context diagnosis of ``run_id`` on ``criterion``."""
    for address in reversed(ledger.lookup("diagnoses", run_id)):
        body = ledger.get(address).body
        if (
            body["intervention"]["kind"] == GOLD_CONTEXT
            and body["criterion"] == criterion
            and body.get("state", COMPLETE) == COMPLETE
        ):
            return address
    return None


# -- reading a stored diagnosis -----------------------------------------------------------


@dataclass(frozen=True)
class Diagnosis:
    """A stored diagnosis, and the gold-context diagnosis whose labels it carries (if any)."""

    address: str
    body: Mapping[str, Any]
    carried_address: str | None = None
    carried: Mapping[str, Any] | None = None

    @property
    def state(self) -> str:
        """``complete``, ``stopped`` or ``interrupted``."""
        state: str = self.body.get("state", COMPLETE)
        return state

    def to_json(self) -> dict[str, Any]:
        """A plain-data form for ``--json``."""
        return {
            "address": self.address,
            "diagnosis": plain(self.body),
            "carried": None
            if self.carried is None
            else {"address": self.carried_address, "diagnosis": plain(self.carried)},
        }


def load_diagnosis(ledger: Ledger, text: str) -> Diagnosis:
    """The diagnosis named by an address or prefix, with the diagnosis it carries labels from."""
    address, event = load_event(ledger, text, ev.DIAGNOSIS, "a diagnosis")
    carried_from = event.body.get("carried_from")
    carried = ledger.get(carried_from).body if carried_from else None
    return Diagnosis(address, event.body, carried_from, carried)


def plain(value: Any) -> Any:
    """Mappings as dicts and sequences as lists, for comparison and JSON."""
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    return value
