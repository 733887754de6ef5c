"""What a run would do, planned against the ledger's caches: the library behind ``run --dry-run``.

``dry_run(ledger, plan)`` executes nothing, calls no judge and writes nothing: it reads the
execution and judgment caches the way a run would, and counts.

- A case whose execution is cached keeps it; each judge's judgment of it is reused when the
  cache holds one that is not missing (a failed call is tried again), else the judge itself
  says whether it needs a call (``would_call``: a case it excludes, or an output without answer
  text, is decided without one). These counts are exact.
- A case that would execute has no output yet, so each judge counts one call for it: *at most*,
  since its output may still turn out to be judged already, or be decided without a call.

Where the project has no ledger yet, nothing is cached, and ``open_ledger_for_reading`` returns
None rather than create one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ledger import Ledger, LedgerError, open_ledger
from oloproof import events as ev
from oloproof.calibration import judge_check, judge_identities
from oloproof.dataset import Case
from oloproof.errors import LedgerAccessError
from oloproof.evaluators.base import CaseView, Evaluator
from oloproof.execute import (
    cached_judgments,
    execution_identity,
    judgment_identity,
    system_identity,
)
from oloproof.store import LEDGER_DIR

if TYPE_CHECKING:
    from oloproof.runner import RunPlan

__all__ = ["DryRun", "JudgeCalls", "JudgeRuleStanding", "dry_run", "open_ledger_for_reading"]


@dataclass(frozen=True)
class JudgeCalls:
    """What one judge would do in a run, after the judgment cache.

    ``calls``: calls on cases whose execution is cached and whose judgment is not (exact);
    ``at_most_more``: one per case that would execute; ``reused``: judgments the cache holds;
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
    """Whether a rule's judge may decide it, as the ledger stands (``outcome`` None: it may)."""

    rule_id: str
    metric: str
    outcome: str | None
    reason: str | None
    calibration: str | None


@dataclass(frozen=True)
class DryRun:
    """What ``oloproof run`` would do: cases to execute, judge calls, judge rules' standing."""

    cases: int
    would_execute: int
    cached: int
    judges: list[JudgeCalls]
    judge_rules: list[JudgeRuleStanding]
    has_ledger: bool

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        for judge, row in zip(self.judges, data["judges"], strict=True):
            row["at_most"] = judge.at_most
        return data


def dry_run(ledger: Ledger | None, plan: RunPlan, *, use_cache: bool = True) -> DryRun:
    """Count a run's work against ``ledger``'s caches (None: no ledger yet); run nothing.

    ``use_cache=False`` plans ``--no-cache``: every case would execute.
    """
    judges = [e for e in plan.evaluators if not isinstance(e, Evaluator)]
    specs = [(judge, judge.spec()) for judge in judges]
    # Per judge: calls, reused, decided without a call (on cached executions).
    counts = {judge.criterion: [0, 0, 0] for judge in judges}
    would_execute = 0
    system_key = system_identity(plan.system.identity(), None)
    for case in plan.dataset.cases:
        cached = _cached_execution(ledger, system_key, case) if use_cache else None
        if ledger is None or cached is None:
            would_execute += 1
            continue
        exec_address, body = cached
        view = CaseView(
            case.id, case.input, case.expected, case.metadata, body["output"], body["artifacts"]
        )
        known = cached_judgments(ledger, exec_address)
        for judge, spec in specs:
            if _judgment_key(spec, exec_address, case.expected) in known:
                counts[judge.criterion][1] += 1
            elif getattr(judge, "would_call", _always)(view):
                counts[judge.criterion][0] += 1
            else:
                counts[judge.criterion][2] += 1
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
        for judge, spec in specs
    ]
    total = len(plan.dataset.cases)
    return DryRun(
        cases=total,
        would_execute=would_execute,
        cached=total - would_execute,
        judges=rows,
        judge_rules=_judge_rules(ledger, plan),
        has_ledger=ledger is not None,
    )


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
            found.append(
                JudgeRuleStanding(rule.id, rule.metric, standing.outcome, standing.reason, address)
            )
    return found


def _cached_execution(
    ledger: Ledger | None, system_key: str, case: Case
) -> tuple[str, Mapping[str, Any]] | None:
    """The execution a run would reuse for ``case``, found as ``oloproof.execute`` finds it."""
    if ledger is None:
        return None
    identity = execution_identity(system_key, ev.identity_key(case.input))
    address = ledger.latest("exec", identity)
    if address is None:
        return None
    body = ledger.get(address).body
    return (address, body) if body["status"] == "ok" else None


def _judgment_key(spec: Mapping[str, Any], exec_address: str, expected: Mapping[str, Any]) -> str:
    """A judgment's cache key, as a run computes it."""
    return judgment_identity(ev.identity_key(spec), exec_address, ev.identity_key(expected))


def open_ledger_for_reading(root: Path) -> Ledger | None:
    """The project's ledger in ``root``, opened read-only; None when there is none (and none is
    created)."""
    path = root / LEDGER_DIR
    if not path.exists():
        return None
    try:
        return open_ledger(path, indexer=ev.index_entries, readonly=True)
    except LedgerError as exc:
        raise LedgerAccessError(str(exc)) from None
