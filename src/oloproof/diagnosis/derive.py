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
4. A replay case is read from the intervention's own execution too: the best relevant position
   in the ranking it made, and the relevant passages it admitted that the budget dropped
   (``budget_dropped``; not for a ranking criterion, which no context can change).
5. With repeats, a case's outcome per role combines its repeats (``combine``: any pass is a
   pass), and each case counts its passes per role.
6. Nothing per case is held beyond its record: the parent's and the child runs' case results
   are streamed, and each case's events are read when the case is derived.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ledger import Ledger
from oloproof import events as ev
from oloproof.bodies import (
    CaseResultBody,
    ChildRun,
    DiagnosisBody,
    ExecutionBody,
    Map,
    diagnosis_body,
    execution_body,
)
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
    RANKING_EVALUATORS,
    RECOVERED,
    STOPPED,
    UNRESOLVED,
    Evidence,
    budget_dropped,
    child_labels,
    combine,
    evidence_of,
    gold_label,
    implicated,
    is_failure,
    label_counts,
    outcome_of,
    replay_result,
)
from oloproof.events import plain
from oloproof.metrics import case_result_body, stream_case_results
from oloproof.store import load_event
from oloproof.stored_runs import StoredRun, latest_end

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
    """The parent's failed cases: the selected ones (by id), the excluded ones, and the address
    of each selected case's result event (bodies are read when needed, never all held)."""

    selected: list[str]
    excluded: list[dict[str, str]]
    results: dict[str, str]

    def result(self, ledger: Ledger, case_id: str) -> CaseResultBody:
        """The parent's case result body of a selected case."""
        return case_result_body(ledger.get(self.results[case_id]))


def select_cases(ledger: Ledger, run_id: str, criterion: str) -> Selection:
    """Failed cases on ``criterion`` with gold context, and those excluded for lacking it.

    The parent's case results are streamed; only the failed ones' ids and addresses are kept
    (the latest result of a case id decides, as everywhere else).
    """
    failed: dict[str, tuple[str, bool]] = {}
    for address, event in ledger.lookup_events("run_cases", run_id):
        body = case_result_body(event)
        if is_failure(body["verdicts"].get(criterion)):
            failed[body["case_id"]] = (address, bool(body["expected"].get("gold_context")))
        else:
            failed.pop(body["case_id"], None)
    selected = sorted(case_id for case_id, (_, gold) in failed.items() if gold)
    excluded = [
        {"case_id": case_id, "reason": NO_GOLD_CONTEXT}
        for case_id in sorted(failed)
        if not failed[case_id][1]
    ]
    return Selection(selected, excluded, {case_id: failed[case_id][0] for case_id in selected})


def artifact(execution: ExecutionBody, kind: str) -> Map | None:
    """The last artifact of ``kind`` an execution recorded, or None."""
    items = execution.get("artifacts", {}).get(kind) or [None]
    found: Map | None = items[-1]
    return found


@dataclass(frozen=True)
class _Parent:
    """What derivation reads of one selected case in the parent run."""

    expected: Mapping[str, Any]
    retrieval: Mapping[str, Any] | None
    evidence: Evidence


@dataclass(frozen=True)
class _Inputs:
    """A diagnosis's inputs, as derivation reads them."""

    ledger: Ledger
    criterion: str
    intervention: Mapping[str, Any]
    top_k: int
    repeats: int
    selection: Selection
    # Whether the criterion scores the ranking alone: then what the budget did cannot matter.
    ranking_only: bool


def derive_diagnosis(
    ledger: Ledger,
    parent: StoredRun,
    *,
    criterion: str,
    intervention: Mapping[str, Any],
    child_runs: Sequence[ChildRun],
    carried_from: str | None,
    repeats: int = 1,
) -> DiagnosisBody:
    """Every label and count of a diagnosis, from the parent, child runs and carried labels.

    Cases are read one at a time from the ledger: nothing per case is held but its record.
    """
    system = parent.body["system"]
    staged = system.get("kind") == "rag"
    top_k: int | None = system.get("top_k") if staged else None
    selection = select_cases(ledger, parent.run_id, criterion)
    spec = next(
        (e.get("spec") for e in parent.body["evaluators"] if e["criterion"] == criterion), {}
    )
    ranking_only = (spec or {}).get("type") in RANKING_EVALUATORS
    inputs = _Inputs(ledger, criterion, intervention, top_k or 0, repeats, selection, ranking_only)
    if not staged:
        cases, summary = _unsupported(inputs)
    elif intervention["kind"] == GOLD_CONTEXT:
        cases, summary = _gold(inputs, child_runs)
    else:
        cases, summary = _replay(inputs, child_runs, _carried_cases(ledger, carried_from))
    summary = {"selected": len(selection.selected), "excluded": len(selection.excluded), **summary}
    body: DiagnosisBody = {
        "run_id": parent.run_id,
        "run": parent.address,
        "criterion": criterion,
        "intervention": dict(intervention),
        "repeats": repeats,
        "system_kind": system.get("kind"),
        "top_k": top_k,
        "selected": selection.selected,
        "excluded": selection.excluded,
        "child_runs": [c.copy() for c in child_runs],
        "carried_from": carried_from,
        "cases": cases,
        "summary": summary,
    }
    expected = child_labels(intervention, repeats) if staged and selection.selected else []
    state, reason = _state(ledger, [label for label, _ in expected], child_runs)
    if state != COMPLETE:
        body["state"] = state
        body["reason"] = reason
    return body


def _parent_case(inputs: _Inputs, case_id: str) -> _Parent:
    result = inputs.selection.result(inputs.ledger, case_id)
    execution = execution_body(inputs.ledger.get(result["execution"]))
    retrieval = artifact(execution, "retrieval/v1")
    evidence = evidence_of(
        retrieval, artifact(execution, "context/v1"), result["expected"], inputs.top_k
    )
    return _Parent(result["expected"], retrieval, evidence)


def _state(
    ledger: Ledger, expected: Sequence[str], child_runs: Sequence[ChildRun]
) -> tuple[str, str | None]:
    """``complete``, or the state of the first child run that did not finish, and why."""
    for child in child_runs:
        end = latest_end(ledger, child["run_id"])
        state = end["state"] if end is not None else STOPPED
        if state != COMPLETE:
            why = (end.get("reason") if end else None) or "it recorded no end"
            return state, f"the {child['label']} run {child['run_id']} {state}: {why}"
    recorded = {child["label"] for child in child_runs}
    for label in expected:
        if label not in recorded:
            return STOPPED, f"the {label} run was never started"
    return COMPLETE, None


def _unsupported(inputs: _Inputs) -> Derived:
    cases = [
        {
            "case_id": case_id,
            "position": _parent_case(inputs, case_id).evidence.position,
            "label": UNRESOLVED,
            "reason": INTERVENTION_UNSUPPORTED,
            "strength": NO_STRENGTH,
        }
        for case_id in inputs.selection.selected
    ]
    return cases, {"control_passed": None, "recovered": None, "labels": label_counts(cases)}


@dataclass(frozen=True)
class _Observed:
    """A case's outcomes under every repeat of one role, and the first repeat's execution."""

    outcomes: list[str]
    execution: str | None

    @property
    def outcome(self) -> str:
        return combine(self.outcomes)

    @property
    def passes(self) -> int:
        return self.outcomes.count(PASSED)


class _Outcomes:
    """Each child run's verdicts on the criterion, by role and case (streamed, small)."""

    def __init__(self, inputs: _Inputs, child_runs: Sequence[ChildRun]) -> None:
        self._repeats = inputs.repeats
        self._runs: dict[str, list[dict[str, tuple[str, str]]]] = {
            "intervention": [],
            "control": [],
        }
        for child in child_runs:
            found: dict[str, tuple[str, str]] = {}
            for body in stream_case_results(inputs.ledger, child["run_id"]):
                verdict = body["verdicts"].get(inputs.criterion)
                found[body["case_id"]] = (outcome_of(verdict), body["execution"])
            self._runs[child["role"]].append(found)

    def of(self, role: str, case_id: str) -> _Observed:
        """A case's outcome in each repeat of ``role``; a repeat never run counts as missing."""
        runs = self._runs[role]
        seen = [run.get(case_id) for run in runs]
        outcomes = [s[0] if s else NOT_OBSERVED for s in seen]
        outcomes += [NOT_OBSERVED] * (self._repeats - len(outcomes))
        return _Observed(outcomes, seen[0][1] if seen and seen[0] else None)


def _repeat_counts(
    record: dict[str, Any], inputs: _Inputs, control: _Observed, treated: _Observed
) -> None:
    if inputs.repeats > 1:
        record["control_passes"] = control.passes
        record["intervention_passes"] = treated.passes


def _recovered_in(inputs: _Inputs, cases: Sequence[Mapping[str, Any]]) -> list[dict[str, int]]:
    """How many recovered cases passed in each number of intervention repeats, most first."""
    counts = Counter(
        c["intervention_passes"] for c in cases if c["strength"] == INTERVENTION_RECOVERY
    )
    return [{"passes": k, "cases": counts[k]} for k in sorted(counts, reverse=True)]


def _gold(inputs: _Inputs, child_runs: Sequence[ChildRun]) -> Derived:
    observed = _Outcomes(inputs, child_runs)
    cases: list[dict[str, Any]] = []
    for case_id in inputs.selection.selected:
        found = _parent_case(inputs, case_id).evidence
        control, treated = observed.of("control", case_id), observed.of("intervention", case_id)
        label = gold_label(
            evidence=found,
            top_k=inputs.top_k,
            control=control.outcome,
            intervention=treated.outcome,
        )
        record: dict[str, Any] = {
            "case_id": case_id,
            "position": found.position,
            "in_context": found.in_context,
            "drop_reasons": list(found.drop_reasons),
            "control": control.outcome,
            "intervention": treated.outcome,
            "label": label.label,
            "reason": label.reason,
            "strength": label.strength,
        }
        _repeat_counts(record, inputs, control, treated)
        cases.append(record)
    summary: dict[str, Any] = {
        "control_passed": sum(c["control"] == PASSED for c in cases),
        "recovered": sum(c["strength"] == INTERVENTION_RECOVERY for c in cases),
        "labels": label_counts(cases),
        "implicated": implicated(cases),
    }
    if inputs.repeats > 1:
        summary["recovered_in"] = _recovered_in(inputs, cases)
    return cases, summary


def _replay(
    inputs: _Inputs,
    child_runs: Sequence[ChildRun],
    carried: Mapping[str, Map] | None,
) -> Derived:
    observed = _Outcomes(inputs, child_runs)
    cases: list[dict[str, Any]] = []
    for case_id in inputs.selection.selected:
        parent = _parent_case(inputs, case_id)
        control, treated = observed.of("control", case_id), observed.of("intervention", case_id)
        result, strength = replay_result(control=control.outcome, intervention=treated.outcome)
        gold = (carried or {}).get(case_id)
        record: dict[str, Any] = {
            "case_id": case_id,
            "position": parent.evidence.position,
            "control": control.outcome,
            "intervention": treated.outcome,
            "result": result,
            "strength": strength,
            "gold": None if gold is None else {k: gold[k] for k in ("label", "reason", "strength")},
            **_as_replayed(inputs, parent, treated.execution),
        }
        _repeat_counts(record, inputs, control, treated)
        cases.append(record)
    ranked_out = [c for c in cases if (c["gold"] or {}).get("label") == RANKED_OUT]
    summary: dict[str, Any] = {
        "control_passed": sum(c["control"] == PASSED for c in cases),
        "recovered": sum(c["result"] == RECOVERED for c in cases),
        "ranked_out": None if carried is None else len(ranked_out),
        "confirmed": None if carried is None else sum(c["result"] == RECOVERED for c in ranked_out),
        "budget_dropped": None
        if inputs.ranking_only
        else sum(bool(c["budget_dropped"]) for c in cases),
        "ranked_out_budget_dropped": None
        if carried is None or inputs.ranking_only
        else sum(bool(c["budget_dropped"]) for c in ranked_out),
    }
    if inputs.repeats > 1:
        summary["recovered_in"] = _recovered_in(inputs, cases)
    return cases, summary


def _as_replayed(inputs: _Inputs, parent: _Parent, execution: str | None) -> dict[str, Any]:
    """What the intervention made of a case: its ranking's best relevant position and the
    positions of the relevant passages it admitted that the budget dropped (first repeat)."""
    body = execution_body(inputs.ledger.get(execution)) if execution is not None else None
    if body is None or body.get("status") != "ok":
        return {"intervention_position": NOT_OBSERVED, "budget_dropped": []}
    ranking = artifact(body, "retrieval/v1")
    context = artifact(body, "context/v1")
    cut = int(inputs.intervention.get("top_k", inputs.top_k))
    dropped = (
        []
        if inputs.ranking_only
        else budget_dropped(parent.retrieval, inputs.top_k, ranking, context, parent.expected, cut)
    )
    return {
        "intervention_position": evidence_of(ranking, None, parent.expected, None).position,
        "budget_dropped": dropped,
    }


def _carried_cases(ledger: Ledger, carried_from: str | None) -> dict[str, Map] | None:
    if carried_from is None:
        return None
    body = diagnosis_body(ledger.get(carried_from))
    return {c["case_id"]: c for c in body["cases"]}


def diagnosis_refs(body: DiagnosisBody) -> list[str]:
    """The links of a diagnosis event: its parent run, each child run, the carried diagnosis."""
    refs = [body["run"], *(c["address"] for c in body["child_runs"])]
    carried_from = body["carried_from"]
    if carried_from:
        refs.append(carried_from)
    return refs


def latest_gold_diagnosis(ledger: Ledger, run_id: str, criterion: str) -> str | None:
    """The address of the latest complete gold-context diagnosis of ``run_id`` on ``criterion``."""
    for address in reversed(ledger.lookup("diagnoses", run_id)):
        body = diagnosis_body(ledger.get(address))
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
    body: DiagnosisBody
    carried_address: str | None = None
    carried: Mapping[str, Any] | None = None

    @property
    def state(self) -> str:
        """``complete``, ``stopped`` or ``interrupted``."""
        return self.body.get("state", COMPLETE)

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
    return with_carried(ledger, address, diagnosis_body(event))


def with_carried(ledger: Ledger, address: str, body: DiagnosisBody) -> Diagnosis:
    """The diagnosis ``body`` stored at ``address``, with the diagnosis it carries labels from."""
    carried_from = body.get("carried_from")
    carried = diagnosis_body(ledger.get(carried_from)) if carried_from else None
    return Diagnosis(address, body, carried_from, carried)
