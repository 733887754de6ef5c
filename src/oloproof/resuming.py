"""Resuming an interrupted run: the plan for the cases it has left, refused when anything it
recorded (its system and settings, cases, evaluators, policy, project file, secrets) differs
now, since the cases it finished and those it has left would then be two measurements in one
run. The library behind ``oloproof run --resume``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TypeGuard

from ledger import Ledger
from oloproof import events as ev
from oloproof import redaction
from oloproof.callargs import OPTIONS
from oloproof.errors import ConfigError
from oloproof.fingerprint import earlier_walk
from oloproof.latest import import_again_text, import_unfinished
from oloproof.plancheck import changed_system_settings
from oloproof.runner import RunPlan, evaluator_records, plan_run, policy_record
from oloproof.stored_runs import StoredRun, is_complete, latest_meta, load_run
from oloproof.subset import Selection
from oloproof.systems.base import identity_changes

__all__ = ["resume_plan"]


def _older_judge_code(
    plan: RunPlan, recorded: Sequence[Mapping[str, Any]]
) -> tuple[int, int] | None:
    """The versions of the judges' code (the oldest the run recorded, the newest today's) when
    judges of the run were judged by an older one and that is all that differs between its
    recorded evaluators and the plan's; None otherwise. Each judge has a version of its own
    (one judge's reading may have moved alone), so each is compared with itself."""
    current = evaluator_records(plan)
    if len(current) != len(recorded):
        return None
    moved: list[tuple[int, int]] = []
    aligned: list[Mapping[str, Any]] = []
    for now, then in zip(current, recorded, strict=True):
        older, today = then["spec"].get("version"), now["spec"].get("version")
        if (
            then["spec"].get("type") in ev.JUDGE_TYPES
            and then["spec"].get("type") == now["spec"].get("type")
            and _whole(older)
            and _whole(today)
            and older < today
        ):
            moved.append((older, today))
            then = {**then, "spec": {**then["spec"], "version": today}}
        aligned.append(then)
    if not moved or ev.plain(aligned) != ev.plain(current):
        return None
    return min(older for older, _ in moved), max(today for _, today in moved)


def _whole(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _older_reading(now: Mapping[str, Any], recorded: Mapping[str, Any]) -> bool:
    """Whether a system's identity differs from the one a run recorded only in how model
    replies are read (``replies``: a number an earlier release counted lower, or left out)."""
    if now.get("replies") in (None, recorded.get("replies")):
        return False

    def rest(identity: Mapping[str, Any]) -> Any:
        return ev.plain({key: value for key, value in identity.items() if key != "replies"})

    return bool(rest(now) == rest(recorded))


def _in_project(path: Path, started_in: Path, ledger: Ledger) -> Path:
    """``path``, recorded by a run started in the folder ``started_in``, in the project whose
    ledger is ``ledger``: a project copied or moved since resumes with its own files (then
    held to what the run recorded), never with those left at the old place."""
    here = ledger.path.parent.resolve()
    if started_in.resolve() == here or not path.is_relative_to(started_in):
        return path
    return here / path.relative_to(started_in)


def _keep_out_recorded_secrets(run: StoredRun) -> None:
    """Keep out of what a resume stores the secrets its run declared when it started (before
    the system's code is imported), whatever the project file lists now: the cases the run
    finished kept them out, and its recorded project file says it keeps them out."""
    declared = (run.body.get("config") or {}).get("secrets") or []
    for name in declared:
        if redaction.too_short(name, os.environ.get(name, "")) is not None:
            # Its own sentence: a resume cannot offer to take the name out of ``secrets:``.
            raise ConfigError(
                f"{run.run_id} keeps {name} out as a secret (it was under secrets: when the run "
                f"started), but its value is now shorter than {redaction.MIN_LENGTH} "
                "characters, too short to be kept out; give it a longer value, or start a new "
                "run instead"
            )
    redaction.register_environment(declared)


def resume_plan(
    ledger: Ledger,
    run_id: str,
    *,
    concurrency: int | None = None,
    engine: str | None = None,
    config: Path | None = None,
) -> tuple[RunPlan, StoredRun]:
    """Plan the rest of an interrupted run; refuse when its system, cases or config changed.

    ``engine`` (an ``--engine`` value) may differ from the one the run started on: the cases
    it finishes give the same events on any engine. ``config`` (a ``--config`` value), when
    given, must be the project file the run started with.
    """
    run = load_run(ledger, run_id)
    if is_complete(latest_meta(ledger, run.run_id, ev.RUN_END)):
        raise ConfigError(f"run {run.run_id} is complete; there is nothing to resume")
    if import_unfinished(ledger, run.run_id):  # its cases ran elsewhere: the archive holds them
        raise ConfigError(import_again_text(run.run_id))
    parent = run.body.get("parent")
    if parent:  # its cases and intervention are the diagnosis's, which no plan here repeats
        of = parent.get("diagnosis_of", "its parent")
        raise ConfigError(
            f"{run.run_id} is the {parent.get('label', 'child')} run of a diagnosis of {of}: "
            "`oloproof run --resume` cannot repeat what the diagnosis chose and did; diagnose "
            f"that run again: oloproof diagnose {of}"
        )
    started_in = Path(run.body["config_path"]).parent
    config_path = _in_project(Path(run.body["config_path"]), started_in, ledger)
    if config is not None and config.resolve() != config_path.resolve():
        raise ConfigError(
            f"{run.run_id} was started with {config_path}, and --resume finishes a run with "
            "the project file it started with; give that file, or no --config"
        )
    _keep_out_recorded_secrets(run)
    policy = run.body["policy_path"]
    # The run is decided by the policy it recorded (``decide_run``), which checks added to
    # policies since it started do not undo: the file is read as the record is, only to hold
    # it to what the run recorded.
    plan = plan_run(
        config_path,
        policy_path=_in_project(Path(policy), started_in, ledger) if policy else None,
        concurrency=concurrency,
        engine=engine,
        policy_as_recorded=True,
    )
    plan = plan.restrict(
        Selection.from_body(run.body.get("subset")),
        run.body.get("repeats", 1),
        recorded=True,
        spelled=OPTIONS,  # resumed by ``oloproof run --resume``
    )
    if plan.system.identity() != run.body["system"]:
        if earlier_walk(run.body.get("fingerprints", {})):
            raise ConfigError(  # its keys can never be made again: not a change of the user's
                f"{run.run_id} was started by an earlier release of oloproof, which read the "
                "system's code otherwise to identify it, so whether the code changed since cannot "
                "be told; start a new run instead: oloproof run"
            )
        if _older_reading(plan.system.identity(), run.body["system"]):
            raise ConfigError(  # the release changed how replies are read, not the user's code
                f"{run.run_id} was started by an earlier release of oloproof, which read the "
                "model's replies otherwise than this one (see `replies` in docs/models.md), so "
                "its cases left cannot be answered alike with those it finished; start a new "
                "run instead: oloproof run"
            )
        differs = identity_changes(plan.system.identity(), run.body["system"])
        raise ConfigError(
            f"the system changed since {run.run_id} started (what differs: {differs}); start a "
            "new run instead"
        )
    changed = changed_system_settings(run.body.get("config") or {}, plan.config)
    if changed:
        raise ConfigError(
            f"the system changed since {run.run_id} started (its settings differ: "
            f"{', '.join(changed)}); start a new run instead"
        )
    if plan.loaded.digest != run.body["dataset"]["sha256"]:
        raise ConfigError(
            f"{plan.dataset.path} changed since {run.run_id} started; start a new run instead"
        )
    # Its finished cases were judged, and its gate is decided, by what the run recorded: the
    # rest judged or decided otherwise would mix two measurements in one run.
    if ev.plain(evaluator_records(plan)) != ev.plain(run.body["evaluators"]):
        older = _older_judge_code(plan, run.body["evaluators"])
        if older is not None:
            raise ConfigError(  # the release changed, not the user's evaluators
                f"{run.run_id} was started by an earlier release of oloproof, whose judges' code "
                f"(version {older[0]}) read the judges' replies otherwise than this one's "
                f"(version {older[1]}), so its cases left cannot be judged alike with those it "
                "finished; start a new run instead: oloproof run"
            )
        raise ConfigError(
            f"the evaluators changed since {run.run_id} started (its finished cases were judged "
            "by the ones it recorded); start a new run instead"
        )
    if ev.plain(policy_record(plan)) != ev.plain(run.body["policy"]):
        raise ConfigError(
            f"{policy or 'the policy'} changed since {run.run_id} started (the run is decided "
            "by the policy it recorded); start a new run instead"
        )
    return plan, run
