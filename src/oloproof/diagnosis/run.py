"""Run a diagnosis: select the failed cases, execute the child runs, record the diagnosis.

Requirements this module meets:

1. Everything that can be checked is checked before the first child run is written: the run
   exists and is not itself a child run, it has the criterion, its retrieval metrics read
   relevance in one unit (or the criterion is one of them), the intervention and its options
   are valid, the reranker imports, and the child plans can be made (the system is unchanged).
2. On a staged system with selected cases, two real child runs are executed, the intervention
   first and its control second, each with its own run id and a ``parent`` naming the diagnosed
   run. On a black box, or with nothing selected, nothing is executed.
3. The diagnosis event links the parent run, every child run, for a replay the carried
   gold-context diagnosis, and the pages of its case records (stored first, one at a time, as
   derivation yields them); its body comes from ``derive_diagnosis`` alone.
4. A child run that stops with an error (or is interrupted) still leaves an honest record: the
   diagnosis is written with ``state`` ``stopped`` (or ``interrupted``), its ``reason``, and
   links to every child run that was started, so no child run is left without its diagnosis.
   Then ``DiagnosisStoppedError`` (carrying that diagnosis) is raised, or the interrupt goes on.
5. An intervention that cannot change the criterion (gold context on a ranking metric), or a
   replay that would assemble the parent's very contexts, is refused before anything is run.
6. Every child run re-executes generation (no stage cache), the intervention as much as its
   control: a diagnosis observes its own answers, so two diagnoses in a row are two samples of a
   system that does not answer the same way twice, and a replay whose context is the parent's
   never reads back the very answer that failed. Only ``reuse_generations`` lets the
   intervention (never the control) read the stage cache, and only with one repeat. With
   ``repeats`` above 1 each role runs that many times, each repeat its own child run whose
   intervention records the repeat index, so no repeat's execution or stage output can stand in
   for another's.
7. The parent run is streamed: its cases and recorded retrievals are read from the ledger one
   case at a time as the child runs reach them, and the diagnosis's records one at a time as
   they are derived and paged, so memory grows with neither the run nor the selection.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ledger import Ledger, new_ulid
from oloproof import aio, redaction
from oloproof import events as ev
from oloproof.bodies import ChildRun, execution_body
from oloproof.callargs import MAX_REPEATS, OPTIONS, Spelling, count, flag, text
from oloproof.dataset import Case
from oloproof.diagnosis.derive import (
    GOLD_CHECKED,
    Diagnosis,
    Selection,
    artifact,
    derive_diagnosis,
    diagnosis_refs,
    evaluator_type,
    latest_gold_diagnosis,
    put_pages,
    ran_to_the_end,
    relevance_unit,
    select_cases,
    with_carried,
)
from oloproof.diagnosis.labels import (
    GOLD_CONTEXT,
    INTERVENTIONS,
    TOKEN_BUDGET,
    changes_nothing,
    child_labels,
    intervention_body,
    unchangeable,
)
from oloproof.engines import Engine, RerankerRef, open_engine
from oloproof.errors import ConfigError, OloproofError, UnknownIdError
from oloproof.events import plain
from oloproof.lazyseq import LazySequence
from oloproof.metrics import criteria_of
from oloproof.relevance import RANKING_EVALUATORS
from oloproof.runner import RunPlan, execute_run, replay_plan
from oloproof.stored_runs import StoredRun, check_run_indexes, load_run
from oloproof.systems.base import import_path_kept, load_reranker

_WHERE = "diagnose()"
_SPELLED = Spelling(_WHERE)


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
    repeat: int | None
    intervention: dict[str, Any]
    use_stage_cache: bool
    replay: Mapping[str, Any] | None
    plan: RunPlan


@dataclass(frozen=True)
class _Request:
    """A checked diagnosis request: everything known before a child run is written."""

    parent: StoredRun
    criterion: str
    intervention: dict[str, Any]
    repeats: int
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
    token_budget: int | None = None,
    repeats: int = 1,
    engine: str | None = None,
    reuse_generations: bool = False,
) -> Diagnosis:
    """Diagnose the failed cases of ``run`` on ``criterion``; the diagnosis is in the ledger.

    The child runs execute on ``engine`` (an ``--engine`` value), else on the engine the
    diagnosed run recorded. Each generates afresh; with ``reuse_generations`` (one repeat
    only) the intervention takes a generation the stage cache holds for its exact context.

    Raises an ``OloproofError`` (and writes nothing) for an argument of the wrong type or out
    of the range ``oloproof diagnose`` takes (naming it), an unknown run, a criterion the run
    does not have or the intervention cannot change, or a bad intervention;
    ``DiagnosisStoppedError`` when a child run stopped.
    """
    aio.refuse_running_loop(
        "diagnose()", "call it in a thread: await asyncio.to_thread(diagnose, ledger, run, ...)"
    )
    asked = Asked.checked(
        run,
        intervention=intervention,
        criterion=criterion,
        top_k=top_k,
        reranker=reranker,
        token_budget=token_budget,
        repeats=repeats,
        engine=engine,
        reuse_generations=reuse_generations,
    )
    return diagnose_asked(ledger, asked, _SPELLED)


async def adiagnose(
    ledger: Ledger,
    run: str,
    *,
    intervention: str,
    criterion: str,
    top_k: int | None = None,
    reranker: str | None = None,
    token_budget: int | None = None,
    repeats: int = 1,
    engine: str | None = None,
    reuse_generations: bool = False,
) -> Diagnosis:
    """``diagnose`` for callers already inside an event loop."""
    asked = Asked.checked(
        run,
        intervention=intervention,
        criterion=criterion,
        top_k=top_k,
        reranker=reranker,
        token_budget=token_budget,
        repeats=repeats,
        engine=engine,
        reuse_generations=reuse_generations,
    )
    return await _diagnose(ledger, asked, _SPELLED, [])


@dataclass(frozen=True)
class Asked:
    """What a diagnosis is asked for: ``diagnose``'s arguments, or ``oloproof diagnose``'s
    options (typed by the command line, so not checked again)."""

    run: str
    intervention: str
    criterion: str
    top_k: int | None = None
    reranker: str | None = None
    token_budget: int | None = None
    repeats: int = 1
    engine: str | None = None
    reuse_generations: bool = False

    @staticmethod
    def checked(
        run: object,
        *,
        intervention: object,
        criterion: object,
        top_k: object,
        reranker: object,
        token_budget: object,
        repeats: object,
        engine: object,
        reuse_generations: object,
    ) -> Asked:
        """Each argument checked by name, as ``evaluate``'s are: unchecked, one would be taken
        for something else (``"no"`` as true, ``True`` as one repeat) or fail deep inside."""

        def a_count(name: str, value: object, what: str) -> int | None:
            return None if value is None else count(name, value, what, 1, where=_WHERE)

        def a_text(name: str, value: object, what: str) -> str:
            return text(name, value, what, where=_WHERE)

        return Asked(
            run=a_text("run", run, "the run to diagnose (a str: id, ref or address)"),
            intervention=a_text(
                "intervention",
                intervention,
                f"{', '.join(INTERVENTIONS[:-1])} or {INTERVENTIONS[-1]} (a str)",
            ),
            criterion=a_text(
                "criterion", criterion, "the name of one of the run's criteria (a str)"
            ),
            top_k=a_count("top_k", top_k, "the cut to try"),
            reranker=None
            if reranker is None
            else a_text(
                "reranker", reranker, "the module:function that reorders candidates (a str) or None"
            ),
            token_budget=a_count("token_budget", token_budget, "the token budget to try"),
            repeats=count(
                "repeats",
                repeats,
                "how many times the intervention and its control each run",
                1,
                MAX_REPEATS,
                where=_WHERE,
            ),
            engine=None
            if engine is None
            else a_text(
                "engine",
                engine,
                "where the child runs execute (a str: local, ray or a Ray cluster's address) "
                "or None",
            ),
            reuse_generations=flag("reuse_generations", reuse_generations, where=_WHERE),
        )


def diagnose_asked(ledger: Ledger, asked: Asked, spelled: Spelling = OPTIONS) -> Diagnosis:
    """``diagnose`` as ``oloproof diagnose`` asks it: its errors name the command's options.

    An interruption (``KeyboardInterrupt``, ``Terminated``) is raised with a note naming the
    diagnosis it left recorded, and as what (interrupted; complete, for a signal that came
    after), when it left one: what the CLI says of it.
    """
    left: list[Diagnosis] = []
    try:
        return aio.run(_diagnose(ledger, asked, spelled, left))
    except KeyboardInterrupt as exc:
        # The exception that reaches the caller: aio.run raises its own once the loop ends.
        for recorded in left:
            exc.add_note(f"{RECORDED_AS}{recorded.state}: {recorded.address}")
        raise


# How the note an interruption carries names the diagnosis recorded (``diagnose_asked``).
RECORDED_AS = "the diagnosis is recorded as "


async def _diagnose(
    ledger: Ledger, asked: Asked, spelled: Spelling, left: list[Diagnosis]
) -> Diagnosis:
    chosen = intervention_body(
        asked.intervention,
        top_k=asked.top_k,
        reranker=asked.reranker,
        token_budget=asked.token_budget,
        spelled=spelled,
    )
    if asked.repeats < 1:
        raise ConfigError(
            f"{spelled.name('repeats')} must be 1 or more, not {asked.repeats}",
            where=spelled.function,
        )
    if asked.reuse_generations and asked.repeats > 1:
        raise ConfigError(
            f"{spelled.on('reuse_generations')} cannot go with "
            f"{spelled.given('repeats', asked.repeats)}: a repeat that reads stored generations "
            "repeats nothing; leave out one of the two",
            where=spelled.function,
        )
    parent = load_run(ledger, asked.run)
    # The diagnosed project's ``secrets:`` are kept out until the diagnosis is recorded, and no
    # longer: a project evaluated next in this process may rightly answer one of them. Its
    # folder leaves the caller's import path as it does after ``evaluate``.
    folder = Path(parent.body["config_path"]).parent
    with redaction.project_scope(), import_path_kept(folder):
        request = _prepare(ledger, parent, asked, chosen, spelled)
        if not request.specs:
            return _record(ledger, request, [])
        first = request.specs[0].plan
        if first.config.engine.kind == "local":  # each child run executes its own plan's system
            return await _run_children(ledger, request, None, left)
        # One engine for every child run: the Ray replicas build the system once, and import
        # the reranker as they start, so one they cannot import is refused before a child run.
        reranker = None
        if asked.reranker is not None:
            reranker = RerankerRef(asked.reranker, **_reranker_named(spelled))
        running = await open_engine(
            first.config, first.config_path, first.system, reranker=reranker
        )
        try:
            return await _run_children(ledger, request, running, left)
        finally:
            await running.aclose()


async def _run_children(
    ledger: Ledger, request: _Request, engine: Engine | None, left: list[Diagnosis]
) -> Diagnosis:
    """The diagnosis of ``request``'s child runs, run one after another, added to ``left``; one
    interrupted is recorded as such, and the interruption raised on."""
    child_runs: list[ChildRun] = []
    for spec in request.specs:
        # Named here, so a child that stops is known as this diagnosis's own: the newest run in
        # the ledger may be another process's (another diagnosis of the same run, say).
        run_id = f"run_{new_ulid()}"
        try:
            child_runs.append(await _run_child(ledger, request, spec, engine, run_id))
        except OloproofError as exc:
            _note_started(ledger, spec, run_id, child_runs)
            raise DiagnosisStoppedError(exc, _record(ledger, request, child_runs)) from exc
        except (asyncio.CancelledError, KeyboardInterrupt):
            _note_started(ledger, spec, run_id, child_runs)
            left.append(_record(ledger, request, child_runs))
            raise
    recorded = _record(ledger, request, child_runs)
    # A signal may yet stop the command (the engine closing, or honoured once the work has
    # returned): its note then names this diagnosis, complete, not none at all.
    left.append(recorded)
    return recorded


def _prepare(
    ledger: Ledger, parent: StoredRun, asked: Asked, chosen: dict[str, Any], spelled: Spelling
) -> _Request:
    criterion = asked.criterion
    check_run_indexes(ledger, parent)
    _check_parent(parent, criterion)
    _check_criterion(parent, criterion, chosen, spelled)
    unit = relevance_unit(parent, criterion)
    staged = parent.body["system"].get("kind") == "rag"
    if staged:
        _check_change(parent, chosen, spelled)
    function = None
    if asked.reranker is not None:
        function = _load_reranker(parent, asked.reranker, spelled)
    # Selected as the schema it is recorded at selects, which is what verify re-derives.
    unstable = ev.SCHEMAS[ev.DIAGNOSIS] >= GOLD_CHECKED
    selection = select_cases(ledger, parent, criterion, unstable=unstable)
    carried_from = None
    if staged and chosen["kind"] != GOLD_CONTEXT:
        carried_from = latest_gold_diagnosis(ledger, parent.run_id, criterion, unit, selection.read)
    specs: list[_ChildSpec] = []
    if staged and selection.selected:
        specs = _child_specs(ledger, parent, selection, chosen, function, asked, spelled)
        _check_reaches_generate(parent, criterion, chosen, specs[0].plan, spelled)
    return _Request(parent, criterion, chosen, asked.repeats, selection, carried_from, specs)


def _record(ledger: Ledger, request: _Request, child_runs: list[ChildRun]) -> Diagnosis:
    derivation = derive_diagnosis(
        ledger,
        request.parent,
        criterion=request.criterion,
        intervention=request.intervention,
        child_runs=child_runs,
        carried_from=request.carried_from,
        repeats=request.repeats,
        selection=request.selection,
    )
    case_pages = put_pages(ledger, derivation.records)
    body = derivation.body(case_pages, put_pages(ledger, derivation.selection.excluded_records()))
    address = ledger.put(ev.make(ev.DIAGNOSIS, body, diagnosis_refs(body)))
    return with_carried(ledger, address, body)


def _note_started(
    ledger: Ledger, spec: _ChildSpec, run_id: str, child_runs: list[ChildRun]
) -> None:
    """Add the child run ``run_id`` that stopped to ``child_runs``, if it was written at all
    (a run's event and the ref of its id are written in one commit)."""
    address = ledger.get_ref(run_id)
    if address is not None:
        child_runs.append(_child_record(spec, run_id, address))


def _child_record(spec: _ChildSpec, run_id: str, address: str) -> ChildRun:
    record: ChildRun = {
        "label": spec.label,
        "role": spec.role,
        "run_id": run_id,
        "address": address,
    }
    if spec.repeat is not None:
        record["repeat"] = spec.repeat
    return record


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


def _check_criterion(
    parent: StoredRun, criterion: str, chosen: Mapping[str, Any], spelled: Spelling
) -> None:
    """Refuse an intervention that cannot change ``criterion`` (gold context on hit_rate)."""
    why = unchangeable(chosen, criterion, evaluator_type(parent.body, criterion), spelled)
    if why is not None:
        raise ConfigError(why, where=_where(spelled))


def _check_change(parent: StoredRun, chosen: Mapping[str, Any], spelled: Spelling) -> None:
    """Refuse a replay that would assemble the parent's very contexts, or cut past its depth."""
    system = parent.body["system"]
    why = changes_nothing(
        chosen,
        top_k=int(system["top_k"]),
        token_budget=system.get("token_budget"),
        depth=system.get("depth"),
        spelled=spelled,
    )
    if why is not None:
        raise ConfigError(why, where=_where(spelled))


def _check_reaches_generate(
    parent: StoredRun, criterion: str, chosen: Mapping[str, Any], plan: RunPlan, spelled: Spelling
) -> None:
    """Refuse an intervention on the context of a generate that never reads its context: it
    answers the same whatever it is handed, so a fail under gold passages it never saw would
    read as a GENERATION_FAILURE. A ranking criterion never reads generate, so it is spared."""
    if evaluator_type(parent.body, criterion) in RANKING_EVALUATORS or getattr(
        plan.system, "reads_context", True
    ):
        return
    raise ConfigError(
        f"{spelled.given('intervention', chosen['kind'])} cannot change {criterion}: "
        f"{parent.body['system']['object']}.generate never reads its context parameter, so "
        "what an intervention hands it never reaches its answer (it answers from something "
        "else, such as what retrieve left behind); make generate answer from its context, run "
        "again and diagnose the new run",
        where=_where(spelled),
    )


def _load_reranker(parent: StoredRun, reference: str, spelled: Spelling) -> Callable[..., Any]:
    base = Path(parent.body["config_path"]).parent
    return load_reranker(reference, base_dir=base, **_reranker_named(spelled))


def _reranker_named(spelled: Spelling) -> dict[str, str]:
    """How an error names the reranker: its option (or argument), and the command (or call)."""
    return {"key": spelled.name("reranker"), "where": _where(spelled)}


def _where(spelled: Spelling) -> str:
    """Where an error the diagnosed run's record shows is said: the command, or the call."""
    return spelled.function or "oloproof diagnose"


def _child_specs(
    ledger: Ledger,
    parent: StoredRun,
    selection: Selection,
    chosen: dict[str, Any],
    function: Callable[..., Any] | None,
    asked: Asked,
    spelled: Spelling,
) -> list[_ChildSpec]:
    # Every plan is made (and every check done) before the first child run is written.
    replay: Mapping[str, Any] | None = None
    treated: Mapping[str, Any] | None = None
    if chosen["kind"] != GOLD_CONTEXT:
        replay = {"retrievals": _Retrievals(ledger, selection)}
        treated = {**replay, "reranker": function} if function is not None else replay
    control: dict[str, Any] = {"kind": "control" if replay is None else "replay-control"}
    cases = _ParentCases(ledger, selection)
    specs: list[_ChildSpec] = []
    for index, (label, role) in enumerate(child_labels(chosen, asked.repeats)):
        repeat = index // 2 + 1 if asked.repeats > 1 else None
        body = chosen if role == "intervention" else control
        # The repeat index is part of the intervention, hence of every execution's identity.
        intervention = {**body, "repeat": repeat} if repeat is not None else dict(body)
        plan = replay_plan(parent.body, cases, engine=asked.engine)
        if chosen["kind"] == TOKEN_BUDGET and not getattr(plan.system, "counts_tokens", False):
            raise ConfigError(
                f"{spelled.given('intervention', TOKEN_BUDGET)} needs the system's "
                "count_tokens(passage); Oloproof never estimates tokens",
                where=_where(spelled),
            )
        specs.append(
            _ChildSpec(
                label,
                role,
                repeat,
                intervention,
                # A stored generation is one draw an earlier run observed (for a replay of the
                # parent's context, the very answer that failed): the control, which must
                # observe afresh, never reads it; the intervention only when asked.
                role == "intervention" and asked.reuse_generations,
                treated if role == "intervention" else replay,
                plan,
            )
        )
    return specs


async def _run_child(
    ledger: Ledger,
    request: _Request,
    spec: _ChildSpec,
    engine: Engine | None,
    run_id: str,
) -> ChildRun:
    outcome = await execute_run(
        ledger,
        spec.plan,
        use_cache=False,
        use_stage_cache=spec.use_stage_cache,
        parent=child_parent(
            request.parent.run_id, request.criterion, spec.label, spec.intervention
        ),
        intervention=spec.intervention,
        replay=dict(spec.replay) if spec.replay is not None else None,
        engine=engine,
        # As the generations: a judgment stored for the same answer is one draw of the judge.
        reuse_judgments=False,
        run_id=run_id,
    )
    return _child_record(spec, outcome.run_id, outcome.run_address)


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


class _ParentCases(LazySequence[Case]):
    """The selected cases exactly as the parent ran them, read from the ledger when reached:
    the input from the execution, the rest as recorded."""

    def __init__(self, ledger: Ledger, selection: Selection) -> None:
        self._ledger = ledger
        self._selection = selection

    def __len__(self) -> int:
        return len(self._selection.selected)

    def _item(self, i: int) -> Case:
        result = self._selection.result_at(self._ledger, i)
        execution = execution_body(self._ledger.get(result["execution"]))
        return Case(
            id=result["case_id"],
            input=plain(execution["input"]),
            expected=plain(result["expected"]),
            metadata=plain(result["metadata"]),
            line=int(result.get("line", 0)),
        )


class _Retrievals(Mapping[str, Any]):
    """The parent's recorded retrieval of each selected case, read when a replay asks."""

    def __init__(self, ledger: Ledger, selection: Selection) -> None:
        self._ledger = ledger
        self._selection = selection

    def __getitem__(self, case_id: str) -> Any:
        result = self._selection.result(self._ledger, case_id)
        # Of a repeat that ran to the end: one that errored recorded no retrieval to replay.
        execution = execution_body(self._ledger.get(ran_to_the_end(result)[0]))
        return plain(artifact(execution, "retrieval/v1") or {})

    def __len__(self) -> int:
        return len(self._selection.selected)

    def __iter__(self) -> Iterator[str]:
        return iter(self._selection.selected)
