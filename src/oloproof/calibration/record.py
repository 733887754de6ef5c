"""Calibrations in a ledger: record one, find one again, and check a run's judges for the policy.

``run_calibration`` (what ``oloproof calibrate`` does) records the calibration as an
``oloproof.calibration`` event indexed by the judge's identity key; ``latest_calibration`` (or
``find_calibration``, with its address) finds it again, and ``judge_check`` gives the policy its
per-rule check.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from oloproof.calibration.measure import (
    Calibration,
    requirement_check,
    shown_above_chance,
    sorted_models,
)
from oloproof.errors import ConfigError, UnknownIdError

if TYPE_CHECKING:
    from collections.abc import Collection, Iterable, Iterator, Sequence

    from ledger import Ledger
    from oloproof.bodies import CaseResultBody
    from oloproof.config import CompareRule, Rule
    from oloproof.policy import JudgeCheck


def run_calibration(
    config_path: Path,
    evaluator_id: str,
    labels_path: Path,
    ledger: Ledger | Callable[[], Ledger],
    *,
    level: float = 0.95,
) -> tuple[str, Calibration]:
    """Calibrate the judge whose criterion is ``evaluator_id`` in ``config_path``; record it in
    ``ledger``, or in the one ``ledger()`` opens once there is a calibration to record (so a
    project with no ledger yet gets none for a calibration refused).

    Returns the address of the ``oloproof.calibration`` event and the calibration. Raises
    ``UnknownIdError`` when no judge has that criterion, ``ConfigError`` for a bad config or a
    score judge, ``DatasetError`` for a bad labels file or one that cannot measure this judge
    (an example without the answer text the judge reads, or one it reads as it reads another);
    nothing is written then.
    """
    # Running a judge (asyncio, the evaluators, the labels reader) is only loaded here: the
    # readers below are what `inspect` and the viewer import, and they start fast without it.
    from oloproof import aio, events
    from oloproof.calibration.judging import check_pass_fail, judge_all, nothing_judged, tally
    from oloproof.calibration.labels import read_labels
    from oloproof.config import load_config
    from oloproof.evaluators import refuse_repeated_criterion
    from oloproof.evaluators.judges import build_judge
    from oloproof.events import JUDGE_TYPES
    from oloproof.runner import entry_located, keep_out_secrets

    config = load_config(config_path)
    # Labels are often a system's past answers, which may hold what its runs keep out, and a
    # judge may repeat them: kept out of the calibration and of what is printed, as in a run.
    keep_out_secrets(config, config_path)
    refuse_repeated_criterion(config, config_path)  # which of two would it measure?
    entries = [e for e in config.evaluators if e.criterion == evaluator_id]
    judges = [e for e in config.evaluators if e.type in JUDGE_TYPES]
    if not entries:
        known = ", ".join(sorted(e.criterion or "" for e in judges)) or "none"
        raise UnknownIdError(
            f"{config_path} has no judge with criterion {evaluator_id!r} (judges: {known})"
        )
    entry = entries[0]
    if entry.type not in JUDGE_TYPES:
        raise ConfigError(
            f"evaluator {evaluator_id!r} is a {entry.type} check, not an LLM judge; "
            "only judges are calibrated"
        )
    with entry_located(config, config.evaluators.index(entry), config_path):
        judge = build_judge(entry, base_dir=config_path.resolve().parent)  # type: ignore[arg-type]
    examples, digest = read_labels(labels_path)
    labels = {"path": str(labels_path), "sha256": digest}
    check_pass_fail(judge)
    verdicts = aio.run(judge_all(judge, examples, source=labels_path))
    if not any(verdict.status in ("pass", "fail") for verdict in verdicts):
        raise nothing_judged(evaluator_id, examples, verdicts)
    calibration = tally(judge.spec(), examples, verdicts, level=level, labels=labels)
    target = ledger() if callable(ledger) else ledger
    body = {**calibration.to_body(), "recorded_at": _stamp(target, calibration.identity)}
    address = target.put(events.make(events.CALIBRATION, body))
    return address, calibration


def _stamp(ledger: Ledger, identity: str) -> str:
    """When a calibration of the judge with ``identity`` is recorded: now, to the microsecond,
    and later than the judge's newest calibration in ``ledger`` (``_newest``).

    The time is what keeps a repeated, identical calibration a new event, the newest and so the
    one in use. Kept to the second (as it once was), labels A, B, then A again within one second
    gave the first one's very event the third time, a no-op, and left B in use; a clock set
    back could do the same. Later than the newest one, each calibration is a new event, and the
    times follow the ledger's order.
    """
    now = dt.datetime.now(dt.UTC)
    found = _newest(ledger, identity)
    last = None if found is None else found[0]
    if last is not None and last >= now:
        now = last + dt.timedelta(microseconds=1)
    return now.isoformat(timespec="microseconds")


def _newest(ledger: Ledger, identity: str) -> tuple[dt.datetime | None, str] | None:
    """When the newest calibration of the judge with ``identity`` was recorded (None when its
    time is not one), and its address; None when the judge has none.

    Newest by ``recorded_at``, of those filed the same time the last one filed. Filed order
    alone is not enough: ``ledger import`` files an archive's calibrations last, however old,
    and an older calibration made elsewhere, on other labels, would then take the place of the
    project's own newer one. Here each calibration is stamped later than the newest one
    (``_stamp``), so among a project's own calibrations both orders are the same.
    """
    newest: tuple[dt.datetime | None, str] | None = None
    for address in ledger.lookup("calibration", identity):
        when = _recorded_at(ledger.get(address).body.get("recorded_at"))
        if newest is None or _newer(newest[0], when):
            newest = when, address
    return newest


def _recorded_at(value: object) -> dt.datetime | None:
    """A calibration's ``recorded_at`` as a time with its zone; None when it is not one."""
    try:
        when = dt.datetime.fromisoformat(str(value))
    except ValueError:
        return None
    return when if when.tzinfo is not None else None


def _newer(kept: dt.datetime | None, found: dt.datetime | None) -> bool:
    """Whether a calibration recorded at ``found``, filed after one recorded at ``kept``, is the
    newer: it is unless it was recorded earlier (a time that is none compares with nothing, and
    the one filed later is the newer)."""
    return kept is None or found is None or found >= kept


def find_calibration(ledger: Ledger, identity: str) -> tuple[str, Calibration] | None:
    """The newest calibration recorded for the judge with ``identity``, with its address."""
    newest = _newest(ledger, identity)
    if newest is None:
        return None
    address = newest[1]
    found = calibration_at(ledger, address)
    return None if found is None else (address, found)


def calibration_at(ledger: Ledger, address: str) -> Calibration | None:
    """The calibration recorded at ``address``, or None when that is no calibration event."""
    from ledger import LedgerError
    from oloproof import events

    try:
        event = ledger.get(address)
    except LedgerError:
        return None
    if event.type != events.CALIBRATION:
        return None
    return Calibration.from_body(event.body)


def latest_calibration(ledger: Ledger, identity: str) -> Calibration | None:
    """The newest calibration recorded for the judge with ``identity``, or None."""
    found = find_calibration(ledger, identity)
    return None if found is None else found[1]


def _older_code_calibration(ledger: Ledger, spec: Mapping[str, Any]) -> tuple[int, str] | None:
    """The newest calibration of the judge with ``spec`` as an older version of the judges'
    code made it, with that version; None when there is none (or ``spec`` has no version).

    Everything else of the identity the same, only the code differs: such a calibration does
    not count (the code reads replies differently), but it is why the judge has none that does.
    """
    from oloproof.events import judge_identity

    version = spec.get("version")
    if not isinstance(version, int) or isinstance(version, bool):
        return None
    for older in range(version - 1, 0, -1):
        newest = _newest(ledger, judge_identity({**spec, "version": older}))
        if newest is not None:
            return older, newest[1]
    return None


def judge_identities(evaluators: Iterable[Any]) -> dict[str, tuple[str, Mapping[str, Any]]]:
    """Criterion -> (identity key, spec) of the LLM judges among ``evaluators``.

    ``evaluators`` may be built evaluators or their ``spec()`` mappings (as a run event stores
    them); the judges are found by type.
    """
    from oloproof.events import JUDGE_TYPES, judge_identity

    found: dict[str, tuple[str, Mapping[str, Any]]] = {}
    for evaluator in evaluators:
        spec = evaluator if isinstance(evaluator, Mapping) else evaluator.spec()
        if spec.get("type") in JUDGE_TYPES:
            found[spec["criterion"]] = (judge_identity(spec), spec)
    return found


def reply_models_of_run(
    ledger: Ledger, run_id: str, criteria: Collection[str], cases: int
) -> dict[str, set[str | None]]:
    """``reply_models_in`` the run's first ``cases`` cases as they were written (the first
    result of each case, as a run's tally counts them, so a decision made midway re-derives
    from what it saw)."""
    from oloproof.metrics import SeenCases, case_result_body

    def first_results() -> Iterator[CaseResultBody]:
        seen = SeenCases()
        for _, event in ledger.lookup_events("run_cases", run_id):
            if seen.count >= cases:
                return
            body = case_result_body(event)
            if seen.add(body):
                yield body

    return reply_models_in(ledger, first_results(), criteria)


def reply_models_in(
    ledger: Ledger, results: Iterable[Mapping[str, Any]], criteria: Collection[str]
) -> dict[str, set[str | None]]:
    """Criterion -> the models the server said it ran (each reply's ``model``, None where a
    reply named none) in the pass and fail judgments of the judges ``criteria`` names, in the
    case ``results``: what ``judge_check`` holds a calibration's ``reply_models`` to."""
    from oloproof.bodies import judgment_body

    found: dict[str, set[str | None]] = {}
    if not criteria:
        return found
    for body in results:
        groups: Sequence[Mapping[str, Any]] = body.get("repeats") or [body]
        for group in groups:
            for criterion, address in group["judgments"].items():
                if criterion not in criteria:
                    continue
                judgment = judgment_body(ledger.get(address))
                if judgment["status"] in ("pass", "fail") and "reply_model" in judgment["detail"]:
                    found.setdefault(criterion, set()).add(judgment["detail"]["reply_model"])
    return found


def judge_check(
    ledger: Ledger | None,
    evaluators: Iterable[Any],
    level: float,
    *,
    beats_chance: bool = True,
    served: Mapping[str, Collection[str | None]] | None = None,
) -> JudgeCheck:
    """The policy's per-rule judge check over the run's ``evaluators``.

    ``evaluators`` may be built evaluators or their ``spec()`` mappings (as a run event stores
    them); the LLM judges among them are found by type. For a rule whose metric is a judge's
    criterion, the judge's ``JudgeStanding``: outcome None when the judge's newest calibration
    for its exact identity clears the rule's ``judge`` minimums (``requirement_check``), else
    ``MANUAL_REVIEW`` with its reason. Its detail records the judge's identity, the address of
    the calibration relied on (None without one), the minimums and the lower bounds at
    ``level``. Without a calibration, a calibration of the same judge made by an older version
    of the judges' code is named as ``older_code``: ``{"version", "calibration"}``. None for a
    rule on any other metric. Without a ``ledger`` no judge has a calibration.
    ``beats_chance``: the judge must also be shown better than chance (``requirement_check``),
    and the detail of a calibrated judge says whether it is (``beats_chance``).

    ``served``: criterion -> the models the run's replies named (``reply_models_of_run``). A
    calibration that recorded the models its replies named (``reply_models``) does not count
    when the run's replies name one it did not: the server now runs another model under the
    judge's name, and the measurement is of the one it ran then. The rule is then
    ``judge_not_calibrated`` and the detail names that calibration as ``other_model``:
    ``{"calibration", "calibrated", "judging"}`` (the two lists of models).
    """
    from oloproof.policy import JudgeStanding

    identities = judge_identities(evaluators)
    found: dict[str, tuple[str, Calibration] | None] = {}
    older: dict[str, tuple[int, str] | None] = {}

    def check(rule: Rule | CompareRule) -> JudgeStanding | None:
        entry = identities.get(rule.metric)
        if entry is None:
            return None
        identity, spec = entry
        if identity not in found:
            newest = find_calibration(ledger, identity) if ledger is not None else None
            found[identity] = newest
            older[identity] = (
                _older_code_calibration(ledger, spec)
                if ledger is not None and newest is None
                else None
            )
        recorded = found[identity]
        other = _other_model(recorded, (served or {}).get(rule.metric))
        if other is not None:
            recorded = None
        calibration = recorded[1] if recorded is not None else None
        requirement = rule.judge
        minimums = (
            requirement.min_sensitivity if requirement else None,
            requirement.min_specificity if requirement else None,
        )
        outcome, reason = requirement_check(
            calibration, *minimums, level, identity=identity, beats_chance=beats_chance
        )
        detail: dict[str, Any] = {
            "identity": identity,
            "calibration": recorded[0] if recorded is not None else None,
            "min_sensitivity": minimums[0],
            "min_specificity": minimums[1],
            "level": level,
        }
        if other is not None:
            detail["other_model"] = other
        outdated = older[identity]
        if outdated is not None:
            detail["older_code"] = {"version": outdated[0], "calibration": outdated[1]}
        if calibration is not None:
            for name, rate in (
                ("sensitivity", calibration.sensitivity),
                ("specificity", calibration.specificity),
            ):
                missing = len(calibration.missing)  # unanswered examples count against it
                detail[name] = {"k": rate.k, "n": rate.n, "lower": rate.lower_at(level, missing)}
                if missing:
                    detail[name]["missing"] = missing
            if beats_chance:
                detail["beats_chance"] = shown_above_chance(calibration, level)
        return JudgeStanding(outcome, reason, detail)

    return check


def _other_model(
    recorded: tuple[str, Calibration] | None, judging: Collection[str | None] | None
) -> dict[str, Any] | None:
    """The ``other_model`` of a judge rule's detail when the calibration ``recorded`` saw replies
    of other models than ``judging`` (the run's); None when it covers them, or when either side
    is not known (a calibration recorded before it kept the models, a run with no reply)."""
    if recorded is None or recorded[1].reply_models is None or not judging:
        return None
    calibrated = recorded[1].reply_models
    if set(judging) <= set(calibrated):
        return None
    return {
        "calibration": recorded[0],
        "calibrated": list(calibrated),
        "judging": list(sorted_models(judging)),
    }
