"""What a run would do, planned against the ledger's caches: the library behind ``run --dry-run``.

``dry_run(ledger, plan)`` executes nothing, calls no judge and writes nothing: it reads the
execution, stage and judgment caches the way a run would, and counts.

- A case whose execution is cached keeps it; each judge's judgment of it is reused when the
  cache holds one that is not missing (a failed call is tried again), else the judge itself
  says whether it needs a call (``would_call``: a case it excludes, or an output without answer
  text, is decided without one). These counts are exact.
- A case that would execute has no output yet, so each judge counts one call for it: *at most*,
  since its output may still turn out to be judged already, or be decided without a call.
- For a staged system, each case that would execute either finds its retrieval in the stage
  cache or retrieves again (exact); its generation's identity holds the context, which is only
  known once the retrieval is, so generations are counted *at most*.
- Every case and retrieval that would run again comes with why, grouped: compared with the
  latest run of the same system (``oloproof.why``): ``13 retrievals: code of words() in app.py
  changed``, ``15 executions: system.version changed``; or ``--no-cache``, an HTTP system that
  is called on every run, an input never executed before, an execution that errored.

The plan covers what the run would execute: the cases ``--limit``, ``--sample`` or ``--filter``
chose (``subset`` says which, as the run's report does), each ``--repeats`` times, every repeat
an execution of its own identity (``oloproof.identities.execution_identity``).

Where the project has no ledger yet, nothing is cached, and ``open_ledger_for_reading`` returns
None rather than create one.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ledger import Ledger, LedgerError
from oloproof import events as ev
from oloproof.calibration import judge_check, judge_identities
from oloproof.dataset import Case
from oloproof.errors import LedgerAccessError
from oloproof.evaluators.base import CaseView, Evaluator
from oloproof.evaluators.reads import reads_of
from oloproof.identities import (
    ReadKeys,
    cached_judgments,
    execution_identity,
    judgment_identity,
    reuses_executions,
    system_identity,
)
from oloproof.report import unseen_state
from oloproof.store import LEDGER_DIR, open_read_only
from oloproof.why import latest_run_of, retrieve_changes, summary, system_changes

if TYPE_CHECKING:
    from oloproof.runner import RunPlan

__all__ = [
    "DryRun",
    "JudgeCalls",
    "JudgeRuleStanding",
    "Reason",
    "dry_run",
    "open_ledger_for_reading",
]


@dataclass(frozen=True)
class JudgeCalls:
    """What one judge would do in a run, after the judgment cache.

    ``calls``: calls on cases whose execution is cached and whose judgment is not (exact);
    ``at_most_more``: one per execution that would run; ``reused``: judgments the cache holds;
    ``without_call``: cached outputs the judge decides without a call.
    """

    criterion: str
    provider: str | None
    model: str | None
    calls: int
    at_most_more: int
    reused: int
    without_call: int

    @property
    def at_most(self) -> int:
        """The most calls the judge would make."""
        return self.calls + self.at_most_more


@dataclass(frozen=True)
class JudgeRuleStanding:
    """Whether a rule's judge may decide it, as the ledger stands (``outcome`` None: it may).

    ``older_code``: without a calibration, the one an older version of the judges' code made of
    the same judge (``{"version", "calibration"}``), which does not count.
    """

    rule_id: str
    metric: str
    outcome: str | None
    reason: str | None
    calibration: str | None
    older_code: dict[str, Any] | None = None


@dataclass(frozen=True)
class Reason:
    """``count`` executions (or retrievals) would run again, because of ``reason``."""

    count: int
    reason: str


@dataclass(frozen=True)
class DryRun:
    """What ``oloproof run`` would do: cases to execute and why (``shared``: repeated inputs,
    executed once for all their cases), stages, judge calls, judge rules' standing.

    ``cases`` is how many cases the run would run, each ``repeats`` times: ``would_execute``,
    ``cached`` and ``shared`` count those ``cases`` x ``repeats`` executions. ``subset`` is what
    chose the cases, as the run records it (with the file's ``total``), None for every case.

    ``compared_with`` is the run the reasons compare with (None: no earlier run of this
    system). ``retrievals`` (``[would run, reused]``) and ``generations_at_most`` are None for
    a system that is not staged. ``unseen``: what the code fingerprints cannot see (module
    state too large or of a library's type).
    """

    cases: int
    would_execute: int
    cached: int
    judges: list[JudgeCalls]
    judge_rules: list[JudgeRuleStanding]
    has_ledger: bool
    shared: int = 0
    execution_reasons: list[Reason] = field(default_factory=list)
    retrievals: list[int] | None = None
    retrieval_reasons: list[Reason] = field(default_factory=list)
    generations_at_most: int | None = None
    compared_with: str | None = None
    unseen: list[str] = field(default_factory=list)
    subset: dict[str, Any] | None = None
    repeats: int = 1

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        for judge, row in zip(self.judges, data["judges"], strict=True):
            row["at_most"] = judge.at_most
        return data


def dry_run(ledger: Ledger | None, plan: RunPlan, *, use_cache: bool = True) -> DryRun:
    """Count a run's work against ``ledger``'s caches (None: no ledger yet); run nothing.

    ``use_cache=False`` plans ``--no-cache``: every case, and every stage, would execute.
    """
    system = plan.system
    judges = [e for e in plan.evaluators if not isinstance(e, Evaluator)]
    specs = [(judge, judge.spec(), reads_of(judge)) for judge in judges]
    # Per judge: calls, reused, decided without a call (on cached executions).
    counts = {judge.criterion: [0, 0, 0] for judge in judges}
    system_key = system_identity(system.identity(), None)
    reuse = use_cache and reuses_executions(system)
    why = _Why(ledger, plan, use_cache)
    seen: set[str] = set()
    shared = 0
    for case, repeat in _executions(plan):
        identity = execution_identity(system_key, ev.input_keys(case.id, case.input)[1], repeat)
        if identity in seen:  # a repeated input shares its first occurrence's execution
            shared += 1
            continue
        seen.add(identity)
        cached = _cached_execution(ledger, identity) if reuse else None
        if ledger is None or cached is None:
            why.would_execute(case, identity)
            continue
        exec_address, body = cached
        view = CaseView(
            case.id, case.input, case.expected, case.metadata, body["output"], body["artifacts"]
        )
        known = cached_judgments(ledger, exec_address)
        keys = ReadKeys(view)
        for judge, spec, reads in specs:
            if judgment_identity(ev.identity_key(spec), keys.of(reads)) in known:
                counts[judge.criterion][1] += 1
            elif getattr(judge, "would_call", _always)(view):
                counts[judge.criterion][0] += 1
            else:
                counts[judge.criterion][2] += 1
    would_execute = why.executions
    rows = [
        JudgeCalls(
            criterion=judge.criterion,
            provider=spec.get("provider"),
            model=spec.get("model"),
            calls=counts[judge.criterion][0],
            at_most_more=would_execute,
            reused=counts[judge.criterion][1],
            without_call=counts[judge.criterion][2],
        )
        for judge, spec, _ in specs
    ]
    staged = why.staged
    return DryRun(
        cases=len(plan.cases),
        would_execute=would_execute,
        cached=len(plan.cases) * plan.repeats - would_execute - shared,
        shared=shared,
        judges=rows,
        judge_rules=_judge_rules(ledger, plan),
        has_ledger=ledger is not None,
        execution_reasons=why.grouped(why.execution_reasons),
        retrievals=[why.retrievals, would_execute - why.retrievals] if staged else None,
        retrieval_reasons=why.grouped(why.retrieval_reasons),
        generations_at_most=would_execute if staged else None,
        compared_with=why.previous["run_id"] if why.previous else None,
        unseen=unseen_state(system.fingerprints()),
        subset=None
        if plan.selection.everything
        else {**plan.selection.to_body(), "total": plan.loaded.count},
        repeats=plan.repeats,
    )


def _executions(plan: RunPlan) -> Iterator[tuple[Case, int]]:
    """Each execution the run would make: every case it runs, repeat by repeat, in the order
    ``oloproof.execute`` makes them (a case's repeats one after another)."""
    for case in plan.cases:
        for repeat in range(plan.repeats):
            yield case, repeat


class _Why:
    """Counts what would run again, and why, case by case."""

    def __init__(self, ledger: Ledger | None, plan: RunPlan, use_cache: bool) -> None:
        self.ledger = ledger
        self.system = plan.system
        self.use_cache = use_cache
        self.previous = latest_run_of(ledger, self.system) if ledger is not None else None
        self.staged = callable(getattr(self.system, "retrieve_identity", None))
        self.executions = 0
        self.retrievals = 0
        self.execution_reasons: Counter[str] = Counter()
        self.retrieval_reasons: Counter[str] = Counter()
        self._changed = self._system_reason()
        self._retrieve_changed = (
            summary(retrieve_changes(self.previous, self.system)) if self.previous else ""
        )

    def _system_reason(self) -> str:
        if not self.use_cache:
            return "--no-cache was given"
        if not reuses_executions(self.system):
            return "an HTTP system is called on every run (system.http.reuse is not set)"
        if self.previous is None:
            return "no earlier run of this system"
        return summary(system_changes(self.previous, self.system))

    def would_execute(self, case: Case, identity: str) -> None:
        self.executions += 1
        if self.staged:
            self._retrieval(case)
        if self.ledger is None:
            return
        reason = self._changed
        if not reason:
            found = self.ledger.latest_event("exec", identity)
            reason = "its last execution errored" if found else "a new input (never executed)"
        self.execution_reasons[reason] += 1

    def _retrieval(self, case: Case) -> None:
        if self.ledger is None:
            self.retrievals += 1
            return
        identity = self.system.retrieve_identity(case)  # type: ignore[attr-defined]
        if self.use_cache and self.ledger.latest("stage", identity) is not None:
            return
        self.retrievals += 1
        if not self.use_cache:
            reason = "--no-cache was given"
        elif self.previous is None:
            reason = "no earlier run of this system"
        else:
            reason = self._retrieve_changed or "a new input (never retrieved)"
        self.retrieval_reasons[reason] += 1

    @staticmethod
    def grouped(reasons: Counter[str]) -> list[Reason]:
        return [Reason(count, reason) for reason, count in reasons.most_common()]


def _always(_: CaseView) -> bool:
    return True


def _judge_rules(ledger: Ledger | None, plan: RunPlan) -> list[JudgeRuleStanding]:
    if plan.policy is None:
        return []
    judged = judge_identities(plan.evaluators)
    rules = [rule for rule in plan.policy.rules if rule.metric in judged]
    if ledger is None:
        return [
            JudgeRuleStanding(r.id, r.metric, "MANUAL_REVIEW", "judge_not_calibrated", None)
            for r in rules
        ]
    check = judge_check(ledger, plan.evaluators, plan.policy.confidence_level)
    found = []
    for rule in rules:
        standing = check(rule)
        if standing is not None:
            address = standing.detail.get("calibration")
            older = standing.detail.get("older_code")
            found.append(
                JudgeRuleStanding(
                    rule.id, rule.metric, standing.outcome, standing.reason, address, older
                )
            )
    return found


def _cached_execution(ledger: Ledger | None, identity: str) -> tuple[str, Mapping[str, Any]] | None:
    """The execution a run would reuse, found as ``oloproof.execute`` finds it."""
    if ledger is None:
        return None
    address = ledger.latest("exec", identity)
    if address is None:
        return None
    body = ledger.get(address).body
    return (address, body) if body["status"] == "ok" else None


def open_ledger_for_reading(root: Path) -> Ledger | None:
    """The project's ledger in ``root``, opened read-only; None when there is none (and none is
    created)."""
    path = root / LEDGER_DIR
    if not path.exists():
        return None
    try:
        return open_read_only(path)
    except LedgerError as exc:
        raise LedgerAccessError(str(exc)) from None
