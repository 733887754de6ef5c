"""Run a diagnosis: select the failed cases, execute the child runs, record the diagnosis.

Requirements this module meets:

1. Everything that can be checked is checked before the first child run is written: the run
   exists and is not itself a child run, it has the criterion, the intervention and its options
   are valid, the reranker imports, and the child plans can be made (the system is unchanged).
2. On a staged system with selected cases, two real child runs are executed, the intervention
   first and its control second, each with its own run id and a ``parent`` naming the diagnosed
   run. On a black box, or with nothing selected, nothing is executed.
3. The diagnosis event links the parent run, every child run and, for a replay, the carried
   gold-context diagnosis; its body comes from ``derive_diagnosis`` alone.
4. A child run that stops with an error (or is interrupted) still leaves an honest record: the
   diagnosis is written with ``state`` ``stopped`` (or ``interrupted``), its ``reason``, and
   links to every child run that was started, so no child run is left without its diagnosis.
   Then ``DiagnosisStoppedError`` (carrying that diagnosis) is raised, or the interrupt goes on.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ledger import Ledger
from oloproof import aio
from oloproof import events as ev
from oloproof.dataset import Case
from oloproof.diagnosis.derive import (
    Diagnosis,
    Selection,
    artifact,
    derive_diagnosis,
    diagnosis_refs,
    latest_gold_diagnosis,
    load_diagnosis,
    plain,
    select_cases,
)
from oloproof.diagnosis.labels import (
    CONTROL_LABEL,
    GOLD_CONTEXT,
    GOLD_LABEL,
    REPLAY_CONTROL_LABEL,
    intervention_body,
    intervention_label,
)
from oloproof.errors import ConfigError, OloproofError, UnknownIdError
from oloproof.metrics import criteria_of
from oloproof.runner import (
    RunPlan,
    StoredRun,
    check_run_indexes,
    execute_run,
    load_run,
    plan_from_run,
)
from oloproof.systems.base import load_object


class DiagnosisStoppedError(OloproofError):
    """A child run of a diagnosis stopped with an error; the diagnosis is recorded as stopped.

    ``diagnosis`` is the stored diagnosis (``state`` ``stopped``), ``cause`` the child run's
    error. The message names both, so the CLI's one sentence points at what to inspect.
    """

    def __init__(self, cause: OloproofError, diagnosis: Diagnosis) -> None:
        why = diagnosis.body.get("reason") or str(cause)
        super().__init__(f"{why}; the diagnosis is recorded as stopped: {diagnosis.address}")
        self.cause = cause
        self.diagnosis = diagnosis


@dataclass(frozen=True)
class _ChildSpec:
    label: str
    role: str
    intervention: dict[str, Any]
    use_stage_cache: bool
    replay: dict[str, Any] | None
    plan: RunPlan


@dataclass(frozen=True)
class _Request:
    """A checked diagnosis request: everything known before a child run is written."""

    parent: StoredRun
    criterion: str
    intervention: dict[str, Any]
    selection: Selection
    carried_from: str | None
    specs: list[_ChildSpec]


def diagnose(
    ledger: Ledger,
    run: str,
    *,
    intervention: str,
    criterion: str,
    top_k: int | None = None,
    reranker: str | None = None,
) -> Diagnosis:
    """Diagnose the failed cases of ``run`` on ``criterion``; the diagnosis is in the ledger.

    Raises an ``OloproofError`` (and writes nothing) for an unknown run, a criterion the run
    does not have, or a bad intervention; ``DiagnosisStoppedError`` when a child run stopped.
    """
    return aio.run(
        adiagnose(
            ledger,
            run,
            intervention=intervention,
            criterion=criterion,
            top_k=top_k,
            reranker=reranker,
        )
    )


async def adiagnose(
    ledger: Ledger,
    run: str,
    *,
    intervention: str,
    criterion: str,
    top_k: int | None = None,
    reranker: str | None = None,
) -> Diagnosis:
    """``diagnose`` for callers already inside an event loop."""
    request = _prepare(ledger, run, intervention, criterion, top_k, reranker)
    cases = [_case_of(ledger, request.selection.results[c]) for c in request.selection.selected]
    child_runs: list[dict[str, Any]] = []
    for spec in request.specs:
        before = ledger.latest("type", ev.RUN)
        try:
            child_runs.append(await _run_child(ledger, request, spec, cases))
        except OloproofError as exc:
            _note_started(ledger, request, spec, before, child_runs)
            raise DiagnosisStoppedError(exc, _record(ledger, request, child_runs)) from exc
        except (asyncio.CancelledError, KeyboardInterrupt):
            _note_started(ledger, request, spec, before, child_runs)
            _record(ledger, request, child_runs)
            raise
    return _record(ledger, request, child_runs)


def _prepare(
    ledger: Ledger,
    run: str,
    intervention: str,
    criterion: str,
    top_k: int | None,
    reranker: str | None,
) -> _Request:
    parent = load_run(ledger, run)
    check_run_indexes(ledger, parent)
    _check_parent(parent, criterion)
    chosen = intervention_body(intervention, top_k=top_k, reranker=reranker)
    staged = parent.body["system"].get("kind") == "rag"
    function = _load_reranker(parent, reranker) if reranker is not None else None
    selection = select_cases(ledger, parent.run_id, criterion)
    carried_from = None
    if staged and chosen["kind"] != GOLD_CONTEXT:
        carried_from = latest_gold_diagnosis(ledger, parent.run_id, criterion)
    specs: list[_ChildSpec] = []
    if staged and selection.selected:
        specs = _child_specs(ledger, parent, selection, chosen, function)
    return _Request(parent, criterion, chosen, selection, carried_from, specs)


def _record(ledger: Ledger, request: _Request, child_runs: list[dict[str, Any]]) -> Diagnosis:
    body = derive_diagnosis(
        ledger,
        request.parent,
        criterion=request.criterion,
        intervention=request.intervention,
        child_runs=child_runs,
        carried_from=request.carried_from,
    )
    address = ledger.put(ev.make(ev.DIAGNOSIS, body, diagnosis_refs(body)))
    return load_diagnosis(ledger, address)


def _note_started(
    ledger: Ledger,
    request: _Request,
    spec: _ChildSpec,
    before: str | None,
    child_runs: list[dict[str, Any]],
) -> None:
    """Add the child run that stopped (if it was written at all) to ``child_runs``.

    ``execute_run`` raises without returning its run id; the run is found as the newest run
    written since ``before`` whose ``parent`` is this child's.
    """
    wanted = child_parent(request.parent.run_id, request.criterion, spec.label, spec.intervention)
    for address in reversed(ledger.lookup("type", ev.RUN)):
        if address == before:
            return
        body = ledger.get(address).body
        if plain(body.get("parent")) == wanted:
            child_runs.append(
                {
                    "label": spec.label,
                    "role": spec.role,
                    "run_id": body["run_id"],
                    "address": address,
                }
            )
            return


def _check_parent(parent: StoredRun, criterion: str) -> None:
    origin = (parent.body.get("parent") or {}).get("diagnosis_of")
    if origin is not None:
        raise UnknownIdError(
            f"{parent.run_id} is a child run of a diagnosis of {origin}; diagnose {origin} instead"
        )
    criteria = criteria_of(parent.body)
    if criterion not in criteria:
        raise UnknownIdError(
            f"run {parent.run_id} has no criterion {criterion!r} "
            f"(its criteria: {', '.join(sorted(criteria)) or 'none'})"
        )


def _load_reranker(parent: StoredRun, reference: str) -> Callable[..., Any]:
    base = Path(parent.body["config_path"]).parent
    function = load_object(reference, base_dir=base, key="--reranker", where="oloproof diagnose")
    if not callable(function):
        raise ConfigError(f"oloproof diagnose: --reranker: {reference} is not a function")
    return function  # type: ignore[no-any-return]


def _child_plan(parent: StoredRun) -> RunPlan:
    # Child runs decide no release: they carry no policy.
    return dataclasses.replace(plan_from_run(parent.body), policy=None, policy_path=None)


def _child_specs(
    ledger: Ledger,
    parent: StoredRun,
    selection: Selection,
    chosen: dict[str, Any],
    function: Callable[..., Any] | None,
) -> list[_ChildSpec]:
    # Every plan is made (and every check done) before the first child run is written.
    if chosen["kind"] == GOLD_CONTEXT:
        return [
            _ChildSpec(GOLD_LABEL, "intervention", chosen, True, None, _child_plan(parent)),
            _ChildSpec(
                CONTROL_LABEL, "control", {"kind": "control"}, False, None, _child_plan(parent)
            ),
        ]
    retrievals: dict[str, Any] = {}
    for case_id in selection.selected:
        execution = ledger.get(selection.results[case_id]["execution"]).body
        retrievals[case_id] = plain(artifact(execution, "retrieval/v1") or {})
    replay: dict[str, Any] = {"retrievals": retrievals}
    treated = {**replay, "reranker": function} if function is not None else replay
    return [
        _ChildSpec(
            intervention_label(chosen), "intervention", chosen, True, treated, _child_plan(parent)
        ),
        _ChildSpec(
            REPLAY_CONTROL_LABEL,
            "control",
            {"kind": "replay-control"},
            True,
            replay,
            _child_plan(parent),
        ),
    ]


async def _run_child(
    ledger: Ledger, request: _Request, spec: _ChildSpec, cases: list[Case]
) -> dict[str, Any]:
    outcome = await execute_run(
        ledger,
        spec.plan,
        use_cache=False,
        use_stage_cache=spec.use_stage_cache,
        cases=cases,
        parent=child_parent(
            request.parent.run_id, request.criterion, spec.label, spec.intervention
        ),
        intervention=spec.intervention,
        replay=spec.replay,
    )
    return {
        "label": spec.label,
        "role": spec.role,
        "run_id": outcome.run_id,
        "address": outcome.run_address,
    }


def child_parent(
    run_id: str, criterion: str, label: str, intervention: Mapping[str, Any]
) -> dict[str, Any]:
    """The ``parent`` a child run records: what it is a diagnosis of, and how."""
    return {
        "diagnosis_of": run_id,
        "criterion": criterion,
        "label": label,
        "intervention": dict(intervention),
    }


def _case_of(ledger: Ledger, result: Mapping[str, Any]) -> Case:
    # The case exactly as the parent ran it: its input from the execution, the rest recorded.
    execution = ledger.get(result["execution"]).body
    return Case(
        id=result["case_id"],
        input=plain(execution["input"]),
        expected=plain(result["expected"]),
        metadata=plain(result["metadata"]),
    )
