"""Plan, execute and decide runs: the library behind ``oloproof run``. Reading a run back is
``oloproof.stored_runs``; resuming an interrupted run, ``oloproof.resuming``.

Planning reads and checks everything (config, cases, system, evaluators, policy) before a
single event is written, so a user mistake never leaves a half-run in the ledger.
"""

from __future__ import annotations

import asyncio
import dataclasses
import datetime as dt
import functools
import os
import re
from array import array
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from operator import attrgetter, itemgetter
from pathlib import Path
from typing import Any

from ledger import Ledger, LedgerError, RefConflictError, StoreError, new_ulid
from oloproof import __version__, redaction, stats
from oloproof import events as ev
from oloproof.bodies import (
    CaseResultBody,
    EvaluatorEntry,
    RunBody,
    RunEndBody,
    not_run,
    planned_cases,
)
from oloproof.calibration import judge_check, judge_identities, reply_models_of_run
from oloproof.call_totals import CallTotals
from oloproof.callargs import MAX_REPEATS, Spelling, count, flag, path, shown, text, whole
from oloproof.config import (
    MAX_CONCURRENCY,
    Policy,
    ProjectConfig,
    load_policy,
    overridden_config,
    recorded_policy,
)
from oloproof.dataset import Case, Dataset, RecordedDataset, load_dataset
from oloproof.engines import Engine, engine_from_option, open_engine, require_engine
from oloproof.errors import ConfigError, LedgerAccessError, OloproofError
from oloproof.evaluators import build_evaluator, refuse_repeated_criterion
from oloproof.evaluators.base import Evaluator, ExcludesByCase
from oloproof.evaluators.fields import dotted_expected_check
from oloproof.evaluators.judges import UsageMeter, build_judge
from oloproof.evaluators.retrieval import chunk_label_check
from oloproof.evaluators.text import expected_text_check
from oloproof.execute import (
    AnyEvaluator,
    CacheCounts,
    Labeller,
    Progress,
    RunSpec,
    execute_cases,
)
from oloproof.jsonkeys import first_repeat
from oloproof.latest import FINISHED, move_latest
from oloproof.lazyseq import LazySequence
from oloproof.metrics import (
    RunTally,
    SeenCases,
    case_results,
    criteria_of,
    tally_run,
)
from oloproof.metrics import replay as replay_tally
from oloproof.plancheck import (
    check_cut,
    check_expected_fields,
    check_headers,
    check_relevance_labels,
    check_slices,
    check_truncation_slice,
)
from oloproof.policy import (
    Subset,
    calibrations_relied_on,
    decide_policy,
    gate,
    refuse_counts_that_cannot_fail,
    refuse_graded_counts,
    refuse_rules_on_score_judges,
)
from oloproof.relevance import described, retrieval_units, run_unit
from oloproof.report import RunReport
from oloproof.results import stands_on_nothing
from oloproof.runlock import run_writer
from oloproof.stored_runs import is_complete, latest_meta, report_of, require_ledger
from oloproof.subset import Selection, select
from oloproof.systems import build_system
from oloproof.systems.base import System, identity_changes
from oloproof.yamlfile import recorded_file

# What ``new_ulid`` makes: 26 characters of Crockford's base32.
_NEW_RUN_ID = re.compile(ev.RUN_ID_PREFIX + "[0-9A-HJKMNP-TV-Z]{26}")
# A plan restricted from Python names the fields of its ``Selection`` (the CLI, its options).
_RESTRICT = Spelling("plan.restrict()")
RELEVANT_POSITION = "relevant_position"
STAGED_SLICES = {
    RELEVANT_POSITION: "compares relevant positions with top_k",
    "context_truncated": "reports whether the token budget dropped passages",
}


@dataclass(frozen=True)
class RunPlan:
    """A checked plan: nothing of it has touched the ledger yet.

    Frozen: a caller that set ``plan.selection`` or ``plan.repeats`` had a run record a subset
    or repeats that no check saw, and that were not what it ran (``restrict`` makes them).
    """

    config: ProjectConfig
    config_path: Path
    dataset: Dataset | RecordedDataset
    system: System
    evaluators: list[AnyEvaluator]
    policy: Policy | None
    policy_path: Path | None
    selection: Selection = field(default_factory=Selection)
    repeats: int = 1
    chosen: Sequence[Case] | None = None

    @property
    def base_dir(self) -> Path:
        return self.config_path.parent

    @property
    def loaded(self) -> Dataset:
        """The cases file this plan read; a replay's plan (``replay_plan``) read none."""
        if isinstance(self.dataset, RecordedDataset):
            raise TypeError("a replay's plan executes the cases it was given; it read no file")
        return self.dataset

    @property
    def cases(self) -> Sequence[Case]:
        """The cases the run executes: the dataset's, the subset ``restrict`` chose, or the
        recorded run's that a replay was given."""
        return self.loaded.cases if self.chosen is None else self.chosen

    def restrict(
        self,
        selection: Selection,
        repeats: int = 1,
        *,
        recorded: bool = False,
        spelled: Spelling = _RESTRICT,
    ) -> RunPlan:
        """This plan over the cases ``selection`` keeps (``oloproof.subset``), each executed
        ``repeats`` times (``oloproof.repeats``); checked here, before anything is written.
        ``recorded``: the selection a run recorded, applied again to resume it. ``spelled``:
        how an error names the selection's fields (the CLI's callers: as its options)."""
        if not isinstance(selection, Selection):  # a Python caller's mistake, said as one
            raise ConfigError(
                f"selection is an oloproof.subset.Selection, not {shown(selection)}",
                where=spelled.function,
            )
        selection = selection.checked(spelled)
        repeats = whole(
            spelled.name("repeats"),
            repeats,
            "how many times each case executes (an int)",
            where=spelled.function,
        )
        if repeats < 1:
            raise ConfigError(
                f"{spelled.name('repeats')} must be 1 or more, not {repeats}",
                where=spelled.function,
            )
        if not recorded:  # a run's record was checked when the run started
            selection.check_new(spelled)
            if repeats > MAX_REPEATS:
                raise ConfigError(
                    f"{spelled.given('repeats', repeats)}: at most {MAX_REPEATS} (each repeat "
                    "of a case is kept in the case's result)",
                    where=spelled.function,
                )
        chosen = (
            None
            if selection.everything
            else select(self.loaded.cases, selection, recorded=recorded, spelled=spelled)
        )
        if chosen is not None and not recorded and self.policy and self.policy_path:
            refuse_counts_that_cannot_fail(
                self.policy,
                len(chosen),
                functools.partial(judged_cases, self.evaluators, chosen),
                self.policy_path,
                f" of the {len(self.loaded.cases)} the cases file holds",
            )
        return dataclasses.replace(self, selection=selection, repeats=repeats, chosen=chosen)


def plan_run(
    config_path: str | Path,
    *,
    policy_path: str | Path | None = None,
    concurrency: int | None = None,
    overrides: Mapping[str, Any] | None = None,
    engine: str | None = None,
    policy_as_recorded: bool = False,
) -> RunPlan:
    """Read oloproof.yaml and everything it names; raise an ``OloproofError`` on any mistake.

    ``engine`` is an ``--engine`` value that replaces the config's engine setting.
    ``policy_as_recorded``: read the policy file as a run's record is read (``load_policy``).
    """
    where = "plan_run()"
    config_path = path("config_path", config_path, "the path of a project file", where=where)
    if policy_path is not None:
        policy_path = path(
            "policy_path", policy_path, "the path of a policy file", where=where, optional=True
        )
    if engine is not None:
        what = "where the cases execute (a str: local, ray or a Ray cluster's address) or None"
        text("engine", engine, what, where=where)
    flag("policy_as_recorded", policy_as_recorded, where=where)
    if concurrency is not None:  # set on the config unvalidated (``model_copy``): checked here
        concurrency = count(
            "concurrency",
            concurrency,
            "how many cases run at once",
            1,
            MAX_CONCURRENCY,
            where=where,
        )
    # Refused as ``oloproof run`` refuses them: a loop of symbolic links raised RuntimeError
    # as it was resolved, and a path the run could not record stopped it on the codec's error,
    # naming no file, once the ledger was made.
    config_path = recorded_file(config_path, name_only=True)
    if policy_path is not None:
        recorded_file(policy_path)  # named as given in what is said of it later
    if overrides is not None:  # anything but a mapping failed inside as an AttributeError
        overrides = _overrides_checked(overrides)
    config = overridden_config(config_path, overrides or {})
    if policy_path is None and config.policy is not None:
        policy_path = config_path.parent / config.policy
    try:
        return _plan(
            _with_engine(config, engine),
            config_path,
            None if policy_path is None else Path(policy_path),
            concurrency,
            policy_as_recorded=policy_as_recorded,
        )
    except BaseException as exc:
        # The caller may print it (a module that failed to import with its key in the
        # message), as the command line's errors are not printed: redacted as they are.
        redaction.redact_raised(exc)
        raise


def _with_engine(config: ProjectConfig, engine: str | None) -> ProjectConfig:
    if engine is None:
        return config
    return config.set_by_option("engine", engine_from_option(config.engine, engine), "--engine")


def replay_plan(
    run_body: Mapping[str, Any], cases: Sequence[Case], *, engine: str | None = None
) -> RunPlan:
    """A plan that executes ``cases`` of a recorded run again, under the config it recorded,
    deciding no release; refuse when the system has changed since.

    Nothing the run read is read again but the system's code: ``cases`` are the run's own
    (from the ledger, as the run executed them), the run's dataset block is recorded for them,
    and there is no policy. A cases or policy file edited or removed since changes nothing.
    """
    config_path = Path(run_body["config_path"])
    config = _with_engine(ProjectConfig.model_validate(run_body["config"]), engine)
    _keep_out_declared_since(config_path)
    block = run_body["dataset"]
    recorded = RecordedDataset(Path(block["path"]), block["sha256"], int(block["cases"]))
    plan = _plan(config, config_path, None, None, recorded)
    if plan.system.identity() != run_body["system"]:
        changed = identity_changes(plan.system.identity(), run_body["system"])
        raise ConfigError(
            f"the system changed since {run_body['run_id']} ran (what differs: {changed}), so "
            "its cases cannot be re-executed as they were; diagnose a run of the system as it "
            "is now (oloproof run)"
        )
    return dataclasses.replace(plan, chosen=cases)


def keep_out_secrets(config: ProjectConfig, config_path: Path) -> None:
    """Register the values the project keeps out (those it declares, those of the variables
    named like credentials) before anything of its is read, run or judged. A declared secret
    whose value is too short to search for (``redaction.MIN_LENGTH``) would be stored as it is:
    it is refused rather than kept out less than the project says."""
    _register_secrets(config.secrets, lambda i: config.location("secrets", i, path=config_path))


def _register_secrets(names: Sequence[str], where: Callable[[int], str]) -> None:
    """Register the values of the variables ``names`` to be kept out, refusing at
    ``where(index)`` the first one too short to search for (see ``keep_out_secrets``)."""
    for index, name in enumerate(names):
        problem = redaction.too_short(name, os.environ.get(name, ""))
        if problem is not None:
            raise ConfigError(f"{where(index)}: secrets: {problem}")
    redaction.register_environment(names)


def _keep_out_declared_since(config_path: Path) -> None:
    """Register the secrets the project file lists now, besides those the recorded config does:
    the cases execute again now, and what they store is kept out as a run now would keep it
    out, a secret declared after the recorded run included. One too short to search for is
    refused, as a run refuses it."""
    from oloproof.project import declared_secrets

    declared = declared_secrets(config_path) if config_path.is_file() else []
    _register_secrets(declared, lambda _: str(config_path))


def _plan(
    config: ProjectConfig,
    config_path: Path,
    policy_path: Path | None,
    concurrency: int | None,
    recorded: RecordedDataset | None = None,
    *,
    policy_as_recorded: bool = False,
) -> RunPlan:
    require_engine(config, config_path)
    # Before any of the user's code runs (its module's import prints, its errors are stored).
    keep_out_secrets(config, config_path)
    base = config_path.parent
    # Each slice is checked only when the search reaches it: the first mistake in the list is
    # the one reported, a slice listed twice included.
    repeat = first_repeat(_slices(config, config_path), key=itemgetter(1))
    if repeat is not None:
        index, name = repeat[1]
        raise ConfigError(
            f"{config.location('slices', index, path=config_path)}: slices: {name!r} is listed "
            "twice, so each case would count twice in its rows"
        )
    # A replay's cases were checked, slices included, when the recorded run was planned.
    dataset: Dataset | RecordedDataset
    if recorded is None:
        dataset = load_dataset(base / config.dataset, _case_check(config.evaluators))
        check_slices(config, config_path, dataset)
        check_expected_fields(config, config_path, dataset)
        check_relevance_labels(config, config_path, dataset)
    else:
        dataset = recorded
    if config.engine.kind == "local":  # on Ray each replica reads (and checks) them itself
        check_headers(config, config_path)
    evaluators = _build_evaluators(config, base, config_path)
    if recorded is None:
        # A replay executes the config its run recorded, which no edit can change: an older
        # release may have recorded the slice over metrics in two units, and the labeller
        # leaves it out when they have no one unit.
        _check_relevance_unit(config, config_path, _relevance_units(evaluators))
    policy = (
        load_policy(policy_path.resolve(), as_recorded=policy_as_recorded)
        if policy_path is not None
        else None
    )
    if policy is not None and policy_path is not None:
        known = {e.criterion for e in evaluators}
        judged = set(judge_identities(evaluators))
        for index, rule in enumerate(policy.rules):
            if rule.metric not in known:
                where = policy.location("rules", index, "metric", path=policy_path)
                raise ConfigError(
                    f"{where}: rule {rule.id!r} reads metric {rule.metric!r}, which no "
                    f"evaluator produces (metrics: {', '.join(sorted(known)) or 'none'})"
                )
            if rule.judge is not None and rule.metric not in judged:
                where = policy.location("rules", index, "judge", path=policy_path)
                raise ConfigError(
                    f"{where}: rule {rule.id!r} sets judge: minimums, but its metric "
                    f"{rule.metric!r} is not an LLM judge's",
                    hint="judge: belongs to rules on a groundedness, citation support, answer "
                    "or rubric judge's metric",
                )
        if not policy_as_recorded:  # a resumed run is decided by the rules it recorded
            _refuse_undecidable(policy, evaluators, policy_path)
            if isinstance(dataset, Dataset):  # a replay's plan is decided by no policy file
                refuse_counts_that_cannot_fail(
                    policy,
                    len(dataset.cases),
                    functools.partial(judged_cases, evaluators, dataset.cases),
                    policy_path,
                    "",
                )
    if concurrency is not None:
        config = config.model_copy(update={"concurrency": concurrency})
    kind = next(
        k for k in ("callable", "http", "rag", "model") if getattr(config.system, k) is not None
    )
    system = build_system(
        config.system,
        base_dir=base,
        where=config.location("system", kind, path=config_path),
        concurrency=config.concurrency,
        # On Ray the system is built on each replica, not here as well.
        construct=config.engine.kind == "local",
    )
    if recorded is None:  # a replay executes the settings its run recorded, as they ran
        check_cut(config, config_path, system)
        check_truncation_slice(config, config_path, system)
    return RunPlan(
        config,
        config_path,
        dataset,
        system,
        evaluators,
        policy,
        policy_path.resolve() if policy_path else None,
    )


def _overrides_checked(overrides: object) -> Mapping[str, Any]:
    """``overrides`` when it maps dotted setting names (``system.http.timeout_s``) to values."""
    what = "a mapping of dotted setting names to values ({'concurrency': 2}) or None"
    if not isinstance(overrides, Mapping):
        raise ConfigError(f"overrides is {what}, not {shown(overrides)}", where="plan_run()")
    for key in overrides:
        if not isinstance(key, str) or "" in key.split("."):
            raise ConfigError(
                f"overrides is {what}; {shown(key)} names no setting", where="plan_run()"
            )
    return overrides


def _slices(config: ProjectConfig, config_path: Path) -> Iterator[tuple[int, str]]:
    """Each slice of ``config`` with its position, once it is known to be one the system can
    fill."""
    for index, name in enumerate(config.slices):
        where = config.location("slices", index, path=config_path)
        if name in STAGED_SLICES and config.system.rag is None:
            raise ConfigError(
                f"{where}: slices: slice '{name}' {STAGED_SLICES[name]}, so it needs a staged "
                "system."
            )
        if name not in STAGED_SLICES and not name.startswith("metadata."):
            raise ConfigError(
                f"{where}: slices: unknown slice {name!r} (use metadata.KEY, relevant_position "
                "or context_truncated)"
            )
        yield index, name


def _build_evaluators(config: ProjectConfig, base: Path, config_path: Path) -> list[AnyEvaluator]:
    """The evaluators in the order runs record them (LLM judges last), refusing two that feed
    one criterion: the second's line is named."""
    refuse_repeated_criterion(config, config_path)
    built = [_built(config, i, base, config_path) for i in range(len(config.evaluators))]
    judged = [c.type.endswith("_judge") for c in config.evaluators]
    return [e for e, j in zip(built, judged, strict=True) if not j] + [
        e for e, j in zip(built, judged, strict=True) if j
    ]


@contextmanager
def entry_located(config: ProjectConfig, index: int, config_path: Path) -> Iterator[None]:
    """Give a ``ConfigError`` raised inside that names no place the file and line of
    ``config.evaluators[index]``: building an evaluator, the reader of a ``template_version``
    this package does not ship, or of a ``rubric_file`` or ``schema_path`` it cannot use, knows
    the template or the file, not which entry of the config named it."""
    try:
        yield
    except ConfigError as exc:
        if exc.where is None:
            at = config.location("evaluators", index, path=config_path)
            exc.where = f"{at}: evaluators.{index}"
        raise


def _built(config: ProjectConfig, index: int, base: Path, config_path: Path) -> AnyEvaluator:
    entry = config.evaluators[index]
    with entry_located(config, index, config_path):
        if entry.type.endswith("_judge"):
            return build_judge(entry, base_dir=base)  # type: ignore[arg-type]
        return build_evaluator(entry, base_dir=base)  # type: ignore[arg-type]


def evaluator_records(plan: RunPlan) -> list[EvaluatorEntry]:
    return [{"criterion": e.criterion, "kind": e.kind, "spec": e.spec()} for e in plan.evaluators]


def _case_check(configs: Sequence[Any]) -> Callable[[Case], str | None] | None:
    """What ``load_dataset`` checks of each case for the evaluators ``configs`` set up: what
    would otherwise stop the run only once it reached the case (an expected value that is no
    text, a relevance label without the chunk its metric reads), or read as missing (a key with
    a dot that an expected_field cannot name)."""
    found = (
        expected_text_check(configs),
        chunk_label_check(configs),
        dotted_expected_check(configs),
    )
    checks = [c for c in found if c]
    if len(checks) < 2:
        return checks[0] if checks else None

    def check(case: Case) -> str | None:
        return next((problem for c in checks if (problem := c(case)) is not None), None)

    return check


def _relevance_units(evaluators: Sequence[AnyEvaluator]) -> dict[str, str]:
    return retrieval_units({"criterion": e.criterion, "spec": e.spec()} for e in evaluators)


def _check_relevance_unit(
    config: ProjectConfig, config_path: Path, units: Mapping[str, str]
) -> None:
    """Refuse a relevant_position slice when the retrieval metrics read relevance in different
    units: a position would agree with some of them and contradict the others."""
    if RELEVANT_POSITION not in config.slices or run_unit(units) is not None:
        return
    where = config.location("slices", config.slices.index(RELEVANT_POSITION), path=config_path)
    raise ConfigError(
        f"{where}: slices: {RELEVANT_POSITION} reads relevance as the retrieval metrics do, "
        f"and they read it in different units ({described(units)}); give them one "
        "relevance_unit"
    )


def policy_record(plan: RunPlan) -> dict[str, Any] | None:
    return plan.policy.model_dump(mode="json", exclude_none=True) if plan.policy else None


@dataclass
class RunOutcome:
    run_id: str
    run_address: str
    report: RunReport


def _run_body(
    plan: RunPlan, run_id: str, parent: Mapping[str, Any] | None, planned: int
) -> RunBody:
    body: RunBody = {
        "run_id": run_id,
        "created_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "oloproof_version": __version__,
        "config_path": str(plan.config_path),
        "config": plan.config.model_dump(mode="json", by_alias=True),
        "system": plan.system.identity(),
        # What each code fingerprint in the identity was made of: `run --dry-run` says from it
        # what changed since.
        "fingerprints": plan.system.fingerprints(),
        "dataset": {
            "path": str(plan.dataset.path),
            "sha256": plan.dataset.digest,
            "cases": plan.dataset.count,
        },
        "planned_cases": planned,
        "evaluators": evaluator_records(plan),
        "slices": list(plan.config.slices),
        "min_slice_support": plan.config.min_slice_support,
        "policy": policy_record(plan),
        "policy_path": str(plan.policy_path) if plan.policy_path else None,
        "parent": dict(parent) if parent else None,
        "positions_in_unit": True,
    }
    # What chose the run's cases and how often each ran; nothing for a plain run, so its run
    # event keeps the shape it always had.
    if not plan.selection.everything:
        body["subset"] = {**plan.selection.to_body(), "total": plan.dataset.count}
    if plan.repeats > 1:
        body["repeats"] = plan.repeats
    return body


async def execute_run(
    ledger: Ledger,
    plan: RunPlan,
    *,
    use_cache: bool = True,
    use_stage_cache: bool = True,
    progress: Progress | None = None,
    cases: Sequence[Case] | None = None,
    parent: Mapping[str, Any] | None = None,
    intervention: dict[str, Any] | None = None,
    replay: dict[str, Any] | None = None,
    resume: tuple[str, str, Mapping[str, Any]] | None = None,
    engine: Engine | None = None,
    reuse_judgments: bool = True,
    run_id: str | None = None,
) -> RunOutcome:
    """Execute a plan (or resume a run) and decide its policy; the run is in the ledger.

    A new run takes ``run_id`` when given (a caller that must name the run should it be
    interrupted makes the id first), else a new one.

    ``cases``, some of the plan's cases, are the ones executed now: the run is still the
    plan's, and records the others as not run, left for ``resume`` (a subset of the cases
    file is ``plan.restrict``'s, which the run records as such).

    The cases execute on ``engine``, else on the one the plan's config names, started here
    (before the run is written, so a cluster that cannot run it leaves no trace) and stopped
    once the run ends.

    The run is written by this process alone (``oloproof.runlock``): resuming a run another
    process is writing is refused. Its end record and decision are written only once every
    case they count is committed; when a commit fails the run stops with no decision and
    ``LedgerAccessError`` says why, and resuming it later finishes it.
    """
    require_ledger(ledger)
    if not isinstance(plan, RunPlan):
        raise ConfigError(
            f"plan is what plan_run() returns, not {shown(plan)}", where="execute_run()"
        )
    # A Python caller's ``use_cache="no"`` would read as true and reuse the cache.
    for name, value in (
        ("use_cache", use_cache),
        ("use_stage_cache", use_stage_cache),
        ("reuse_judgments", reuse_judgments),
    ):
        flag(name, value, where="execute_run()")
    if resume is not None:
        run_id = resume[0]
    elif run_id is None:
        run_id = f"run_{new_ulid()}"
    else:
        _check_new_run_id(ledger, run_id)
    if cases is not None:
        # One case given twice was executed and counted twice: "3 of 3 answered" from one
        # case, whose index then disagreed with the run's end record (``verify``).
        repeat = first_repeat(cases, key=attrgetter("id"))
        if repeat is not None:
            raise ConfigError(
                f"cases holds the case {repeat[1].id!r} twice; a run executes each case once "
                "(repeats: plan.restrict(selection, repeats))",
                where="execute_run()",
            )
        # Recorded as a run of these cases alone, a run of 2 of the plan's 6 read as complete,
        # "2 of 2 answered", and nothing said the other 4 were left out.
        planned_ids = {case.id for case in plan.cases}
        stranger = next((case for case in cases if case.id not in planned_ids), None)
        if stranger is not None:
            raise ConfigError(
                f"cases holds {stranger.id!r}, which is not one of the plan's cases; a run "
                "executes some of its plan's cases (a subset of the cases file: "
                "plan.restrict(selection))",
                where="execute_run()",
            )
    with run_writer(ledger.path, run_id):
        running = engine or await open_engine(plan.config, plan.config_path, plan.system)
        try:
            if resume is None:
                event = ev.make(ev.RUN, _run_body(plan, run_id, parent, len(plan.cases)))
                with ledger.batch():
                    run_address = ledger.put(event)
                    ledger.set_ref(run_id, run_address, expected=None)
                # The run as stored, a resumed one's too: its report said a declared secret
                # (a filter's value) that the ledger and every reading of it hold [redacted].
                body: Mapping[str, Any] = event.body
            else:
                _, run_address, body = resume
            started = _Started(run_id, run_address, body)
            options = _Options(
                use_cache, use_stage_cache, reuse_judgments, intervention, replay or {}
            )
            return await _execute(
                ledger, plan, started, options, cases, resume is not None, progress, running
            )
        finally:
            if engine is None:
                await running.aclose()


def _check_new_run_id(ledger: Ledger, run_id: object) -> None:
    """Refuse a caller's ``run_id`` that is no new run's id, as ``oloproof run`` makes one:
    ``"latest"`` was recorded under the name of the ref that follows the newest run (which then
    named another), ``"run_X"`` as an id no command makes, and one a recorded run has, or a
    text no ref name takes, stopped on the ledger's own error."""
    if not isinstance(run_id, str) or not _NEW_RUN_ID.fullmatch(run_id):
        raise ConfigError(
            "run_id is a new run's id, 'run_' and a ULID (f'run_{new_ulid()}'), not "
            f"{shown(run_id)}",
            where="execute_run()",
        )
    if ledger.get_ref(run_id) is not None:
        raise ConfigError(
            f"run_id names a run the ledger holds ({run_id}); a new run takes a new id "
            "(oloproof run --resume finishes an interrupted one)",
            where="execute_run()",
        )


@dataclass(frozen=True)
class _Options:
    """What a run may reuse, and the intervention and replay of a diagnosis's child run."""

    use_cache: bool
    use_stage_cache: bool
    reuse_judgments: bool
    intervention: dict[str, Any] | None
    replay: dict[str, Any]


@dataclass(frozen=True)
class _Started:
    run_id: str
    run_address: str
    body: Mapping[str, Any]


async def _execute(
    ledger: Ledger,
    plan: RunPlan,
    run: _Started,
    options: _Options,
    cases: Sequence[Case] | None,
    resumed: bool,
    progress: Progress | None,
    engine: Engine,
) -> RunOutcome:
    run_id, body = run.run_id, run.body
    finished = SeenCases()
    done = (b for _, b in case_results(ledger, run_id) if finished.add(b)) if resumed else ()
    tally = replay_tally(done, criteria_of(body), list(body["slices"]))
    prior = _stored_counts(ledger, run_id) if resumed else CacheCounts()
    prior_end = latest_meta(ledger, run_id, ev.RUN_END) if resumed else None
    # Cases a go killed after writing them left uncounted: their cache sources and judge calls
    # went with it (a case result keeps where its execution came from, not its judgments).
    uncounted = (
        int((prior_end or {}).get("uncounted", 0))
        + tally.cases
        - int((prior_end or {}).get("cases", 0))
        if resumed
        else 0
    )
    source = cases if cases is not None else plan.cases
    # A fresh run reads its cases one at a time as it goes; a resumed one, the positions of
    # those left (8 bytes a case), each case parsed again when it is reached.
    todo = _Remaining(source, finished) if finished.count else source
    if not todo and is_complete(prior_end):  # another writer finished it since it was planned
        raise ConfigError(f"run {run_id} is complete; there is nothing to resume")
    meter = UsageMeter(judge_identities(plan.evaluators), (prior_end or {}).get("judges") or {})

    def on_case(result: CaseResultBody) -> None:
        tally.add(result)
        # Each repeat's judgments: a repeated case's result holds the first's at its top.
        repeats: Sequence[Mapping[str, Any]] = result.get("repeats") or [result]
        meter.case_done(result["case_id"], [c for r in repeats for c in r["judgments"]])

    spec = _run_spec(plan, run, meter, options, engine)
    redacted_before = redaction.stored_count()
    redacted_earlier = int((prior_end or {}).get("redacted") or 0)

    def finish(
        *args: Any, **kwargs: Any
    ) -> tuple[RunEndBody, dict[str, Any] | None, RunReport | None]:
        redacted = redacted_earlier + redaction.stored_count() - redacted_before
        return _finish(
            ledger,
            run_id,
            run.run_address,
            body,
            *args,
            redacted=redacted,
            engine=engine,
            uncounted=uncounted,
            **kwargs,
        )

    # Each case's counts are added as it finishes, so a run that raises still has those of
    # the cases it wrote.
    counts = CacheCounts()
    try:
        await execute_cases(ledger, spec, todo, on_case=on_case, counts=counts, progress=progress)
    except BaseException as exc:
        await plan.system.aclose()
        _finish_stopped(finish, ledger, run, tally, (prior, counts), meter.totals(), exc)
        raise
    await plan.system.aclose()
    state = "complete" if tally.cases >= body["planned_cases"] else "interrupted"
    try:
        _, _, report = finish(tally, _merge_counts(prior, counts), state, None, meter.totals())
    except LedgerError as exc:
        raise LedgerAccessError(
            f"run {run_id}: every case is written, but not its end record: {exc}; "
            f"once that is fixed, finish it with: oloproof run --resume {run_id}"
        ) from None
    # The live tally is what a replay of the ledger gives (a test checks it), without re-reading.
    assert report is not None  # a decided finish reports
    return RunOutcome(run_id, run.run_address, report)


class _Remaining(LazySequence[Case]):
    """The cases of ``source`` whose results ``finished`` has not met, in their order."""

    def __init__(self, source: Sequence[Case], finished: SeenCases) -> None:
        self._source = source
        self._at = array("Q", (i for i, c in enumerate(source) if not finished.has(c.id, c.line)))

    def __len__(self) -> int:
        return len(self._at)

    def _item(self, i: int) -> Case:
        return self._source[self._at[i]]


def _run_spec(
    plan: RunPlan,
    run: _Started,
    meter: UsageMeter,
    options: _Options,
    engine: Engine,
) -> RunSpec:
    return RunSpec(
        run_id=run.run_id,
        run_address=run.run_address,
        system=plan.system,
        evaluators=[e if isinstance(e, Evaluator) else meter.watch(e) for e in plan.evaluators],
        concurrency=engine.slots,
        timeout_s=plan.config.timeout_s,
        use_cache=options.use_cache,
        use_stage_cache=options.use_stage_cache,
        reuse_judgments=options.reuse_judgments,
        intervention=options.intervention,
        replay=options.replay,
        labeller=_labeller(plan),
        engine=engine,
        repeats=plan.repeats,
    )


def _labeller(plan: RunPlan) -> Labeller | None:
    """A staged system's slices of a case, its relevance read in the retrieval metrics' unit."""
    labels = getattr(plan.system, "labels", None)
    if labels is None:
        return None
    return functools.partial(labels, unit=run_unit(_relevance_units(plan.evaluators)))


def _finish_stopped(
    finish: Callable[..., tuple[RunEndBody, dict[str, Any] | None, RunReport | None]],
    ledger: Ledger,
    run: _Started,
    tally: RunTally,
    counted: tuple[CacheCounts, CacheCounts],
    judges: Mapping[str, Any],
    exc: BaseException,
) -> None:
    """Record how a run that raised ``exc`` ended; raise what the caller should see instead.

    Interrupted runs (Ctrl-C, SIGTERM, an error in Oloproof) are decided on what they
    finished, all of it committed on the way out. A stopped run (a malformed artifact, a
    failed commit) gets no decision. After a failed commit (a ``StoreError``) only what is
    stored counts, so the tally is read back from the ledger.

    ``counted`` holds the cache counts the run's last end recorded and those of the cases
    this go finished. After a failed commit, which of those cases are stored is not known
    (the case results do not hold where their judgments came from), so only the former
    are reported: less than happened, never more.
    """
    run_id = run.run_id
    prior, finished = counted
    if isinstance(exc, StoreError):
        stored = tally_run(ledger, run_id, criteria_of(run.body), list(run.body["slices"]))
        message = (
            f"run {run_id} stopped: {exc}; {stored.cases} of its {run.body['planned_cases']} "
            f"cases are stored; once that is fixed, finish it with: oloproof run --resume {run_id}"
        )
        try:
            finish(
                stored,
                prior,
                "stopped",
                f"a write to the ledger failed: {exc}",
                judges,
                decide=False,
            )
        except LedgerError:
            message += " (its end record could not be written either)"
        raise LedgerAccessError(message) from None
    counts = _merge_counts(prior, finished)
    if isinstance(exc, OloproofError | LedgerError):
        finish(tally, counts, "stopped", str(exc), judges, decide=False)
    elif isinstance(exc, asyncio.CancelledError | KeyboardInterrupt):
        finish(tally, counts, "interrupted", "interrupted before every case finished", judges)
    else:
        finish(tally, counts, "interrupted", None, judges)


def _merge_counts(a: CacheCounts, b: CacheCounts) -> CacheCounts:
    merged = CacheCounts()
    merged.add(a)
    merged.add(b)
    return merged


def _stored_counts(ledger: Ledger, run_id: str) -> CacheCounts:
    end = latest_meta(ledger, run_id, ev.RUN_END)
    if end is None:
        return CacheCounts()
    c = end["cache"]
    (eh, em, *es), (jh, jm, *js) = c["execution"], c["judgment"]
    counts = CacheCounts(eh, em, jh, jm, execution_shared=sum(es), judgment_shared=sum(js))
    counts.stages = {k: list(v) for k, v in c.get("stages", {}).items()}
    counts.calls = CallTotals.from_body(end.get("model_calls"))
    return counts


def _finish(
    ledger: Ledger,
    run_id: str,
    run_address: str,
    body: Mapping[str, Any],
    tally: RunTally,
    counts: CacheCounts,
    state: str,
    reason: str | None,
    judges: Mapping[str, Any] | None = None,
    *,
    decide: bool = True,
    redacted: int = 0,
    engine: Engine | None = None,
    uncounted: int = 0,
) -> tuple[RunEndBody, dict[str, Any] | None, RunReport | None]:
    """Write the run_end event and, with a policy and ``decide``, the decision (one commit);
    return both bodies, and with ``decide`` the run's report.

    ``redacted`` counts the occurrences of configured secrets replaced in what the run stored;
    ``uncounted`` the cases a go killed after writing them left out of ``counts``.
    """
    end_body: RunEndBody = {
        "run_id": run_id,
        "state": state,
        "reason": reason,
        "cases": tally.cases,
        "errored": tally.errored,
        "redacted": redacted,
        "cache": {
            # reused from an earlier run, made by this run, shared within this run
            "execution": [counts.execution_hit, counts.execution_miss, counts.execution_shared],
            "judgment": [counts.judgment_hit, counts.judgment_miss, counts.judgment_shared],
            "stages": counts.stages,
        },
    }
    if int(body.get("repeats", 1)) > 1:
        # How many of the repeats' executions errored, for `oloproof runs` (which reads no case).
        end_body["repeats_errored"] = tally.repeats_errored
    if uncounted > 0:
        end_body["uncounted"] = uncounted
    if counts.calls.any():
        # The system's own model calls: what this run spent, and what it took from a cache.
        end_body["model_calls"] = counts.calls.to_body()
    if judges:
        # Per LLM judge: this run's calls, tokens and cost, and the judgments it reused.
        end_body["judges"] = dict(judges)
    summary = engine.summary() if engine is not None else None
    if summary is not None:
        # A run on Ray: its replicas, the workers that died, the cases sent again.
        end_body["engine"] = summary
    decision: dict[str, Any] | None = None
    report: RunReport | None = None
    # A stopped run (bad input, a failed write) is not decided (``decide`` is False): its
    # cases say nothing about the release.
    if decide:
        with stats.remembered() as intervals:
            if body.get("policy") is not None:
                decision = decide_run(body, tally, ledger)
            report = report_of(ledger, body, run_address, tally, end_body, decision)
        # What the report's intervals came to, so reading it back needs no scipy.
        end_body["intervals"] = intervals
    # Only a finished top-level run is `latest`. It moves in the commit that stores the run's
    # end: a process killed after a commit of its own would leave `latest` on an older run.
    moves_latest = state == FINISHED and not body.get("parent")
    while True:
        try:
            with ledger.batch():
                end_address = ledger.put(ev.make(ev.RUN_END, end_body, [run_address]))
                if decision is not None:
                    refs = [run_address, end_address, *calibrations_relied_on(decision["rules"])]
                    ledger.put(ev.make(ev.DECISION, decision, refs))
                if moves_latest:
                    move_latest(ledger, run_address, body)
            return end_body, decision, report
        except RefConflictError:
            # A run finishing beside this one moved `latest` as the commit was written; that
            # run may be the newer one, so look again (the same events: nothing is stored twice).
            continue


def decide_run(
    run_body: Mapping[str, Any],
    tally: RunTally,
    ledger: Ledger,
    *,
    count_rules_need_suite: bool = True,
    counts_missing_repeats: bool = True,
    no_evidence_blocks: bool = True,
    missing_any_value: bool = True,
    judge_beats_chance: bool = True,
    unobserved_before_judge: bool = True,
    observed_as_judged: bool = True,
) -> dict[str, Any]:
    """The decision body for a run with a policy (derived; ``verify`` can recompute it).

    A rule on an LLM judge's metric first needs a calibration of that judge's exact identity in
    ``ledger`` that clears the rule's ``judge`` minimums (``oloproof.calibration.judge_check``);
    otherwise it is ``MANUAL_REVIEW``. Each such rule's detail records the judge's identity and
    the address of the calibration it relied on (None without one).

    ``count_rules_need_suite``: an ``observed_count`` rule cannot PASS on a run whose
    ``--sample`` or ``--limit`` may have left cases out (``oloproof.policy``). A decision
    recorded before that (schema 1) is re-derived without it, as it was made.

    ``counts_missing_repeats``: a repeat without a verdict counts against a count rule, and a
    rule such repeats decide says ``missing_cases_decide`` (``oloproof.policy``). A decision
    recorded before that (schema 2) is re-derived without it, as it was made.

    ``no_evidence_blocks``: a gate with nothing under it (no case answered, or a rule that
    observed no case: ``results.stands_on_nothing``) blocks whatever ``block_on`` says. A
    decision recorded before that (schema 3) is re-derived without it, as it was made.

    ``missing_any_value``: a missing case of a metric whose values can lie between 0 and 1
    counts at whichever of them bounds its interval widest, the method included
    (``MetricTally.bounded_interval``). A decision recorded before that (schema 4) counted it
    as 0 and 1 alone, and is re-derived so.

    ``judge_beats_chance``: a judge may decide a rule only when its calibration shows it better
    than chance, whatever the rule's minimums (``calibration.requirement_check``). A decision
    recorded before that (schema 5) is re-derived without it, as it was made.

    ``unobserved_before_judge``: a rule whose metric observed no case is INSUFFICIENT_EVIDENCE
    (``no_observed_cases``), so the gate blocks, whatever its judge's standing. A decision
    recorded before that (schema 6) asked the judge first, and a metric its uncalibrated judge
    never answered was MANUAL_REVIEW, which ``block_on`` could let through; it is re-derived so.

    ``observed_as_judged``: what the observed cases alone give (a rule's ``observed_only``, and
    so whether ``missing_cases_decide``) reads a repeated case on its judged repeats, so a run
    whose judged repeats make every case 0 or 1 is a proportion there. A decision recorded
    before that (schema 7) read the observed cases as a mean whenever a repeat had no verdict,
    and is re-derived so.
    """
    policy = recorded_policy(run_body["policy"])
    specs = [e["spec"] for e in run_body["evaluators"]]
    # The models the judges' replies named: a calibration made against another does not count.
    judged = set(judge_identities(specs)) & {rule.metric for rule in policy.rules}
    served = reply_models_of_run(ledger, run_body["run_id"], judged, tally.cases)
    check = judge_check(
        ledger, specs, policy.confidence_level, beats_chance=judge_beats_chance, served=served
    )
    metrics = tally.metrics
    if not missing_any_value:
        metrics = {c: dataclasses.replace(t, any_value=False) for c, t in metrics.items()}
    decisions = decide_policy(
        policy,
        metrics,
        check,
        # Planned cases that never ran (an interrupted run) count as missing for every rule.
        not_run=not_run(run_body, tally.cases),
        subset=_left_out(run_body) if count_rules_need_suite else None,
        counts_missing_repeats=counts_missing_repeats,
        unobserved_before_judge=unobserved_before_judge,
        observed_as_judged=observed_as_judged,
    )
    answered = tally.cases - tally.errored
    unevidenced = stands_on_nothing((d.reason for d in decisions), answered)
    outcome = gate(decisions, policy.block_on, unevidenced=no_evidence_blocks and unevidenced)
    return {
        "run_id": run_body["run_id"],
        "policy": run_body["policy"],
        "policy_path": run_body.get("policy_path"),
        "count_rules_need_suite": count_rules_need_suite,
        "counts_missing_repeats": counts_missing_repeats,
        "no_evidence_blocks": no_evidence_blocks,
        "missing_any_value": missing_any_value,
        "judge_beats_chance": judge_beats_chance,
        "unobserved_before_judge": unobserved_before_judge,
        "observed_as_judged": observed_as_judged,
        "rules": [d.to_body() for d in decisions],
        "gate": {"blocked": outcome.blocked, "exit_code": outcome.exit_code},
    }


def _left_out(run_body: Mapping[str, Any]) -> Subset | None:
    """The run's subset when its ``--sample`` or ``--limit`` may have left cases out, from what
    the run recorded (its ``subset``), else None."""
    recorded = run_body.get("subset")
    if not recorded:
        return None
    planned, total = planned_cases(run_body), int(recorded["total"])
    if not Selection.from_body(recorded).left_out(planned, total):
        return None
    return Subset(planned, total)


def judged_cases(
    evaluators: Sequence[AnyEvaluator], cases: Iterable[Case], limit: int
) -> dict[str, int]:
    """Per criterion, how many of ``cases`` its evaluator can judge: those it does not exclude
    by their own expected values whatever the system answers (``ExcludesByCase``; an evaluator
    without that can judge every case). A count allowing that many failures cannot fail.

    Counted only until each passes ``limit``, the highest ``max_failures`` of the policy: a
    case file read once more, in full, would cost every run with a count rule a pass over a
    million cases to learn that more than a handful can be judged."""
    excluding = [e for e in evaluators if isinstance(e, ExcludesByCase)]
    judged = {e.criterion: 0 for e in excluding}
    for case in cases if excluding else ():
        for evaluator in excluding:
            criterion = evaluator.criterion
            if (
                judged[criterion] <= limit
                and evaluator.case_exclusion(case.id, case.expected) is None
            ):
                judged[criterion] += 1
        if all(count > limit for count in judged.values()):
            break
    return judged


def refused_policy(plan: RunPlan) -> str | None:
    """Why this release would refuse the plan's policy file for a new run, or None: a resumed
    run is decided by the policy it recorded, which an earlier release may have accepted."""
    if plan.policy_path is None:
        return None
    try:
        _refuse_undecidable(load_policy(plan.policy_path), plan.evaluators, plan.policy_path)
    except ConfigError as exc:
        return str(exc)
    return None


def _refuse_undecidable(policy: Policy, evaluators: Sequence[AnyEvaluator], path: Path) -> None:
    """Refuse a rule the ``evaluators`` could never let decide: a count of a graded metric's
    failures, a rule on a judge that gives scores (which no calibration measures)."""
    kinds = {e.criterion: e.kind for e in evaluators}
    refuse_graded_counts(policy, kinds, path)
    scored = (c for c in judge_identities(evaluators) if kinds.get(c) == "mean")
    refuse_rules_on_score_judges(policy, scored, path)
