"""Diagnose a run's failures: re-execute them under an intervention, beside a control.

Requirements this module meets:

1. The cases diagnosed are the parent run's cases whose verdict on the criterion failed (a
   ``fail``, or a graded value of 0) and that declare ``expected.gold_context``. Failed cases
   without it are listed as excluded with ``no_gold_context``, never dropped. The selection is
   the same for every intervention.
2. On a staged system every intervention is a pair of real child runs, each with its own run
   id and a ``parent`` naming the diagnosed run: the intervention and a control that changes
   nothing. ``gold-context`` puts the case's gold passages in place of the retrieved context;
   its control re-executes the case unchanged with every cache bypassed. ``top-k`` and
   ``reranker`` replay the parent's recorded retrieval (the retriever is not called) with a
   wider cut or a reranker; their control replays the same retrieval unchanged.
3. A case that passes under the control was unstable, not diagnosed (UNRESOLVED,
   ``passes_under_control``). Otherwise a gold-context case is labelled from the parent's own
   recorded retrieval and context: still failing with the gold passages is GENERATION_FAILURE;
   recovering is RETRIEVAL_MISS, RANKED_OUT or CONTEXT_ASSEMBLY_LOSS by where the best relevant
   passage was, and UNRESOLVED (``recovers_only_with_gold_alone``) when the relevant passage had
   already reached the model. Labels are associations under one intervention, never causes.
4. A callable or HTTP system cannot be given another context: every selected case is
   UNRESOLVED with ``intervention_unsupported`` and nothing is re-executed.
5. The diagnosis is an ``oloproof.diagnosis`` event linking the parent run, the child runs and,
   for a replay, the gold-context diagnosis whose labels it carries forward. Every label and
   count in it is re-derived from those events alone by ``verify_diagnosis``.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ledger import Ledger, LedgerError, Problem
from oloproof import events as ev
from oloproof.dataset import Case
from oloproof.errors import ConfigError, OloproofError, UnknownIdError
from oloproof.metrics import case_results, criteria_of
from oloproof.runner import RunPlan, StoredRun, execute_run, load_run, plan_from_run
from oloproof.systems.base import load_object
from oloproof.systems.rag import NOT_RETRIEVED, UNLABELLED, relevant_position

GOLD_CONTEXT = "gold-context"
TOP_K = "top-k"
RERANKER = "reranker"
INTERVENTIONS = (GOLD_CONTEXT, TOP_K, RERANKER)

RETRIEVAL_MISS = "RETRIEVAL_MISS"
RANKED_OUT = "RANKED_OUT"
CONTEXT_ASSEMBLY_LOSS = "CONTEXT_ASSEMBLY_LOSS"
GENERATION_FAILURE = "GENERATION_FAILURE"
UNRESOLVED = "UNRESOLVED"
LABELS = (RETRIEVAL_MISS, RANKED_OUT, CONTEXT_ASSEMBLY_LOSS, GENERATION_FAILURE, UNRESOLVED)

RELEVANT_NOT_RETRIEVED = "relevant_not_retrieved"
RELEVANT_RANKED_OUT = "relevant_ranked_out"
RELEVANT_DROPPED = "relevant_dropped_from_context"
FAILS_WITH_GOLD = "fails_with_gold_context"
INTERVENTION_UNSUPPORTED = "intervention_unsupported"
PASSES_UNDER_CONTROL = "passes_under_control"
CONTROL_NOT_OBSERVED = "control_not_observed"
INTERVENTION_NOT_OBSERVED = "intervention_not_observed"
RECOVERS_ONLY_WITH_GOLD_ALONE = "recovers_only_with_gold_alone"
NO_RELEVANCE_LABELS = "no_relevance_labels"
NO_GOLD_CONTEXT = "no_gold_context"
# The order label lines are printed in, within a label.
REASONS = (
    RELEVANT_NOT_RETRIEVED,
    RELEVANT_RANKED_OUT,
    RELEVANT_DROPPED,
    FAILS_WITH_GOLD,
    INTERVENTION_UNSUPPORTED,
    PASSES_UNDER_CONTROL,
    RECOVERS_ONLY_WITH_GOLD_ALONE,
    NO_RELEVANCE_LABELS,
    CONTROL_NOT_OBSERVED,
    INTERVENTION_NOT_OBSERVED,
)

INTERVENTION_RECOVERY = "intervention_recovery"
INTERVENTION_NON_RECOVERY = "intervention_non_recovery"
CONTROL_RECOVERY = "control_recovery"
NO_STRENGTH = "none"

# What one child run's verdict on the criterion says about one case.
PASSED = "pass"
FAILED = "fail"
NOT_OBSERVED = "missing"

# Replay results per case (besides the UNRESOLVED reasons above).
RECOVERED = "recovered"
STILL_FAILED = "still_failed"

# Where the best relevant passage was, besides a 1-based position.
POSITION_NONE = "none"
POSITION_UNLABELLED = "unlabelled"

TOP_K_CUT = "the top-k cut"
# Drop reason → (the factor implicated, the candidate experiments).
DROP_FACTORS: dict[str, tuple[str, tuple[str, ...]]] = {
    "token_budget": ("context budget", ("a larger token budget", "smaller chunks")),
    "top_k": (TOP_K_CUT, ("a larger top_k", "a reranker")),
}

CONTROL_LABEL = "control"
REPLAY_CONTROL_LABEL = "replay control"

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
)


# -- the label logic (pure) ---------------------------------------------------------------


@dataclass(frozen=True)
class Label:
    """What a gold-context diagnosis says about one case."""

    label: str
    reason: str
    strength: str


@dataclass(frozen=True)
class Evidence:
    """What the parent run recorded about one case's relevant passages.

    ``position`` is the 1-based position of the best relevant candidate, ``none`` when no
    relevant passage was retrieved, ``unlabelled`` when the case has no relevance labels.
    ``in_context`` says whether a relevant passage reached the model; ``drop_reasons`` are the
    reasons relevant passages within top_k were left out of the context.
    """

    position: str
    in_context: bool = False
    drop_reasons: tuple[str, ...] = ()


def outcome_of(verdict: Mapping[str, Any] | None) -> str:
    """``pass``, ``fail`` or ``missing``; a graded criterion passes only at its full value."""
    if verdict is None:
        return NOT_OBSERVED
    status = verdict.get("s")
    if status == "pass":
        return PASSED
    if status == "fail":
        return FAILED
    if status == "value":
        return PASSED if float(verdict["v"]) >= 1.0 else FAILED
    return NOT_OBSERVED


def is_failure(verdict: Mapping[str, Any] | None) -> bool:
    """Whether a parent verdict selects its case: a fail, or a graded value of 0."""
    if verdict is None:
        return False
    status = verdict.get("s")
    return status == "fail" or (status == "value" and float(verdict["v"]) == 0.0)


def gold_label(*, evidence: Evidence, top_k: int, control: str, intervention: str) -> Label:
    """Label one case from the parent's evidence and its outcomes under control and gold."""
    if control == PASSED:
        return Label(UNRESOLVED, PASSES_UNDER_CONTROL, CONTROL_RECOVERY)
    if control != FAILED:
        return Label(UNRESOLVED, CONTROL_NOT_OBSERVED, NO_STRENGTH)
    if intervention == FAILED:
        return Label(GENERATION_FAILURE, FAILS_WITH_GOLD, INTERVENTION_NON_RECOVERY)
    if intervention != PASSED:
        return Label(UNRESOLVED, INTERVENTION_NOT_OBSERVED, NO_STRENGTH)
    position = evidence.position
    if position == POSITION_UNLABELLED:
        return Label(UNRESOLVED, NO_RELEVANCE_LABELS, INTERVENTION_RECOVERY)
    if position == POSITION_NONE:
        return Label(RETRIEVAL_MISS, RELEVANT_NOT_RETRIEVED, INTERVENTION_RECOVERY)
    if int(position) > top_k:
        return Label(RANKED_OUT, RELEVANT_RANKED_OUT, INTERVENTION_RECOVERY)
    if not evidence.in_context:
        return Label(CONTEXT_ASSEMBLY_LOSS, RELEVANT_DROPPED, INTERVENTION_RECOVERY)
    return Label(UNRESOLVED, RECOVERS_ONLY_WITH_GOLD_ALONE, INTERVENTION_RECOVERY)


def replay_result(*, control: str, intervention: str) -> tuple[str, str]:
    """(result, strength) of one case under a replay beside its replay control."""
    if control == PASSED:
        return PASSES_UNDER_CONTROL, CONTROL_RECOVERY
    if control != FAILED:
        return CONTROL_NOT_OBSERVED, NO_STRENGTH
    if intervention == PASSED:
        return RECOVERED, INTERVENTION_RECOVERY
    if intervention == FAILED:
        return STILL_FAILED, INTERVENTION_NON_RECOVERY
    return INTERVENTION_NOT_OBSERVED, NO_STRENGTH


def evidence_of(
    retrieval: Mapping[str, Any] | None,
    context: Mapping[str, Any] | None,
    expected: Mapping[str, Any],
    top_k: int | None,
) -> Evidence:
    """Read one case's relevant passages out of its recorded retrieval and context."""
    candidates = (retrieval or {}).get("candidates", [])
    found = relevant_position(retrieval, expected, max(len(candidates), 1))
    if found == UNLABELLED:
        return Evidence(POSITION_UNLABELLED)
    position = POSITION_NONE if found == NOT_RETRIEVED else found
    relevant = {r["doc_id"] for r in expected.get("relevant", []) if r.get("grade", 1) > 0}
    items = (context or {}).get("items", [])
    in_context = any(item["doc_id"] in relevant for item in items)
    reasons: list[str] = []
    for dropped in (context or {}).get("dropped", []):
        within = top_k is None or (dropped.get("position") or 0) <= top_k
        if dropped["doc_id"] in relevant and within and dropped["reason"] not in reasons:
            reasons.append(dropped["reason"])
    return Evidence(position, in_context, tuple(reasons))


def label_counts(cases: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """How many cases carry each (label, reason), in print order."""
    counts = Counter((c["label"], c["reason"]) for c in cases)

    def order(key: tuple[str, str]) -> tuple[int, int, str]:
        label, reason = key
        rank = REASONS.index(reason) if reason in REASONS else len(REASONS)
        return LABELS.index(label), rank, reason

    return [
        {"label": label, "reason": reason, "count": counts[(label, reason)]}
        for label, reason in sorted(counts, key=order)
    ]


def implicated(cases: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The factors the recovered RANKED_OUT and CONTEXT_ASSEMBLY_LOSS cases point at."""
    counts: Counter[str] = Counter()
    experiments: dict[str, tuple[str, ...]] = {}
    for case in cases:
        if case.get("strength") != INTERVENTION_RECOVERY:
            continue
        factors: list[str] = []
        if case["label"] == RANKED_OUT:
            factors.append(TOP_K_CUT)
            experiments[TOP_K_CUT] = DROP_FACTORS["top_k"][1]
        elif case["label"] == CONTEXT_ASSEMBLY_LOSS:
            for reason in case.get("drop_reasons", []):
                factor, tried = DROP_FACTORS.get(reason, (f"context assembly ({reason})", ()))
                factors.append(factor)
                experiments[factor] = tried
        counts.update(dict.fromkeys(factors, 1))
    known = [factor for factor, _ in DROP_FACTORS.values()]
    ordered = sorted(counts, key=lambda f: (known.index(f) if f in known else len(known), f))
    ordered.sort(key=lambda f: f != TOP_K_CUT)
    return [{"factor": f, "count": counts[f], "experiments": list(experiments[f])} for f in ordered]


# -- interventions ------------------------------------------------------------------------


def intervention_body(
    kind: str, *, top_k: int | None = None, reranker: str | None = None
) -> dict[str, Any]:
    """The recorded form of an intervention; raise ``ConfigError`` on a bad combination."""
    if kind not in INTERVENTIONS:
        raise ConfigError(f"unknown intervention {kind!r} (use {', '.join(INTERVENTIONS)})")
    if top_k is not None and kind != TOP_K:
        raise ConfigError("--top-k applies only to --intervention top-k")
    if reranker is not None and kind != RERANKER:
        raise ConfigError("--reranker applies only to --intervention reranker")
    if kind == TOP_K:
        if top_k is None:
            raise ConfigError("--intervention top-k needs --top-k N (the wider cut to try)")
        if top_k < 1:
            raise ConfigError(f"--top-k must be 1 or more, not {top_k}")
        return {"kind": TOP_K, "top_k": top_k}
    if kind == RERANKER:
        if not reranker:
            raise ConfigError("--intervention reranker needs --reranker module:function")
        return {"kind": RERANKER, "reranker": reranker}
    return {"kind": GOLD_CONTEXT}


def intervention_label(intervention: Mapping[str, Any]) -> str:
    """How the output names an intervention: ``gold context``, ``top-k 4``, ``reranker m:f``."""
    kind = intervention["kind"]
    if kind == TOP_K:
        return f"top-k {intervention['top_k']}"
    if kind == RERANKER:
        return f"reranker {intervention['reranker']}"
    return "gold context"


# -- selection and evidence from the ledger -----------------------------------------------


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


def _artifact(execution: Mapping[str, Any], kind: str) -> Mapping[str, Any] | None:
    items = execution.get("artifacts", {}).get(kind) or [None]
    found: Mapping[str, Any] | None = items[-1]
    return found


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


# -- deriving a diagnosis body from the ledger --------------------------------------------


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
            _artifact(execution, "retrieval/v1"),
            _artifact(execution, "context/v1"),
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
    return {
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


Derived = tuple[list[dict[str, Any]], dict[str, Any]]


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


# -- running a diagnosis ------------------------------------------------------------------


@dataclass(frozen=True)
class Diagnosis:
    """A stored diagnosis, and the gold-context diagnosis whose labels it carries (if any)."""

    address: str
    body: Mapping[str, Any]
    carried_address: str | None = None
    carried: Mapping[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        """A plain-data form for ``--json``."""
        return {
            "address": self.address,
            "diagnosis": _plain(self.body),
            "carried": None
            if self.carried is None
            else {"address": self.carried_address, "diagnosis": _plain(self.carried)},
        }


@dataclass(frozen=True)
class _ChildSpec:
    label: str
    role: str
    intervention: dict[str, Any]
    use_stage_cache: bool
    replay: dict[str, Any] | None
    plan: RunPlan


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
    does not have, or a bad intervention.
    """
    return asyncio.run(
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
    parent = load_run(ledger, run)
    _check_parent(parent, criterion)
    chosen = intervention_body(intervention, top_k=top_k, reranker=reranker)
    staged = parent.body["system"].get("kind") == "rag"
    function = _load_reranker(parent, reranker) if reranker is not None else None
    selection = select_cases(ledger, parent.run_id, criterion)
    carried_from = None
    if staged and chosen["kind"] != GOLD_CONTEXT:
        carried_from = latest_gold_diagnosis(ledger, parent.run_id, criterion)
    child_runs: list[dict[str, Any]] = []
    if staged and selection.selected:
        specs = _child_specs(ledger, parent, selection, chosen, function)
        cases = [_case_of(ledger, selection.results[c]) for c in selection.selected]
        for spec in specs:
            child_runs.append(await _run_child(ledger, parent, criterion, spec, cases))
    body = derive_diagnosis(
        ledger,
        parent,
        criterion=criterion,
        intervention=chosen,
        child_runs=child_runs,
        carried_from=carried_from,
    )
    address = ledger.put(ev.make(ev.DIAGNOSIS, body, _refs(body)))
    return load_diagnosis(ledger, address)


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
            _ChildSpec("gold context", "intervention", chosen, True, None, _child_plan(parent)),
            _ChildSpec(
                CONTROL_LABEL, "control", {"kind": "control"}, False, None, _child_plan(parent)
            ),
        ]
    retrievals: dict[str, Any] = {}
    for case_id in selection.selected:
        execution = ledger.get(selection.results[case_id]["execution"]).body
        retrievals[case_id] = _plain(_artifact(execution, "retrieval/v1") or {})
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
    ledger: Ledger, parent: StoredRun, criterion: str, spec: _ChildSpec, cases: list[Case]
) -> dict[str, Any]:
    outcome = await execute_run(
        ledger,
        spec.plan,
        use_cache=False,
        use_stage_cache=spec.use_stage_cache,
        cases=cases,
        parent=child_parent(parent.run_id, criterion, spec.label, spec.intervention),
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
        input=_plain(execution["input"]),
        expected=_plain(result["expected"]),
        metadata=_plain(result["metadata"]),
    )


def _refs(body: Mapping[str, Any]) -> list[str]:
    refs = [body["run"], *(c["address"] for c in body["child_runs"])]
    if body.get("carried_from"):
        refs.append(body["carried_from"])
    return refs


def latest_gold_diagnosis(ledger: Ledger, run_id: str, criterion: str) -> str | None:
    """The address of the latest gold-context diagnosis of ``run_id`` on ``criterion``."""
    for address in reversed(ledger.lookup("diagnoses", run_id)):
        body = ledger.get(address).body
        if body["intervention"]["kind"] == GOLD_CONTEXT and body["criterion"] == criterion:
            return address
    return None


def load_diagnosis(ledger: Ledger, text: str) -> Diagnosis:
    """The diagnosis named by an address or prefix, with the diagnosis it carries labels from."""
    try:
        address = ledger.resolve(text)
    except LedgerError as exc:
        raise UnknownIdError(str(exc)) from None
    event = ledger.get(address)
    if event.type != ev.DIAGNOSIS:
        raise UnknownIdError(f"{text} is a {event.type} event, not a diagnosis")
    carried_from = event.body.get("carried_from")
    carried = ledger.get(carried_from).body if carried_from else None
    return Diagnosis(address, event.body, carried_from, carried)


# -- verification -------------------------------------------------------------------------


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
        )
    except (LedgerError, OloproofError, KeyError, TypeError, ValueError) as exc:
        return [f"cannot re-derive it: {type(exc).__name__}: {exc}"]
    problems = _differences(_plain(body), _plain(derived))
    if sorted(event.refs) != sorted(_refs(derived)):
        problems.append("its links differ from the parent, child runs and carried diagnosis")
    return problems


def _check_inputs(ledger: Ledger, body: Mapping[str, Any]) -> list[str]:
    problems: list[str] = []
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
        recorded = _plain(run.body.get("parent") or {})
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
        ):
            problems.append(
                f"carried_from {carried} is not a gold-context diagnosis of "
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
        elif stored.get(key) != derived[key]:
            problems.append(f"{key}: stored {stored.get(key)!r}, re-derived {derived[key]!r}")
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


STALE_DIAGNOSIS = "StaleDiagnosis"


def diagnosis_checks(ledger: Ledger) -> Iterator[Problem]:
    """One ``StaleDiagnosis`` problem per difference, over every diagnosis (for verify)."""
    for address, _ in ledger.events(ev.DIAGNOSIS):
        for difference in verify_diagnosis(ledger, address):
            yield Problem(kind=STALE_DIAGNOSIS, address=address, detail=difference)


def _plain(value: Any) -> Any:
    """Mappings as dicts and sequences as lists, for comparison and JSON."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value
