"""What a run spent on its LLM judges: calls, tokens and cost, and judgments reused.

``usage_totals`` sums judgments' details; ``UsageMeter`` counts one run's calls per judge as the
run makes them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any, cast

from oloproof.evaluators.base import AsyncEvaluator, CaseView
from oloproof.evaluators.reads import ReadDeclaration, reads_of
from oloproof.results import MetricKind, Verdict

__all__ = ["UsageMeter", "usage_totals"]


def usage_totals(details: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Calls, tokens and cost summed over judgments' details (``cost`` None when none priced).

    A detail counts as a call when it has ``usage``; a token count the provider did not give
    adds nothing, and ``calls_without_usage`` counts those calls.
    """
    calls = without = input_tokens = output_tokens = 0
    cost: float | None = None
    for detail in details:
        usage = detail.get("usage")
        if not isinstance(usage, Mapping):
            continue
        calls += 1
        tokens_in, tokens_out = usage.get("input_tokens"), usage.get("output_tokens")
        if not isinstance(tokens_in, int) or not isinstance(tokens_out, int):
            without += 1
        input_tokens += tokens_in if isinstance(tokens_in, int) else 0
        output_tokens += tokens_out if isinstance(tokens_out, int) else 0
        if isinstance(detail.get("cost"), int | float):
            cost = (cost or 0.0) + float(detail["cost"])
    return {
        "calls": calls,
        "calls_without_usage": without,
        "input_tokens": input_tokens,
        "output_tokens": output_tokens,
        "cost": cost,
    }


def _empty_totals() -> dict[str, Any]:
    return {
        "calls": 0,
        "calls_without_usage": 0,
        "input_tokens": 0,
        "output_tokens": 0,
        "cost": None,
        "failed": 0,
        "reused": 0,
    }


class UsageMeter:
    """Per judge: the calls a run made, their tokens and cost, and the judgments it reused.

    ``watch`` wraps a judge, so every verdict it gives is seen as it is given: such a judgment
    is new, made in this run. ``case_done`` names the criteria a case's result holds a judgment
    for, once for each repeat holding one (``--repeats``); one the wrapper did not see came from
    the judgment cache, and counts as ``reused`` (its tokens were spent, and counted, by the
    run that first made it). ``totals()`` per
    judge criterion: ``calls`` (replies carrying usage, as ``usage_totals`` counts them),
    ``calls_without_usage``, ``input_tokens``, ``output_tokens``, ``cost`` (None unless priced),
    ``failed`` (missing judgments: the call failed or the reply was not the protocol's; the
    tokens such a reply reported are counted all the same; a verdict given without a call, such
    as that of an output without answer text, is no failed call) and ``reused``. ``prior`` continues
    totals recorded earlier (a resumed run).
    """

    def __init__(
        self, criteria: Iterable[str], prior: Mapping[str, Mapping[str, Any]] | None = None
    ) -> None:
        self._totals = {c: {**_empty_totals(), **dict((prior or {}).get(c, {}))} for c in criteria}
        # The verdicts given for a case, one per repeat judged, until the case is done.
        self._seen: dict[tuple[str, str], list[tuple[Verdict, bool]]] = {}

    def watch(self, judge: AsyncEvaluator) -> AsyncEvaluator:
        """``judge``, reporting each verdict it gives to this meter (others pass unchanged)."""
        totals = self._totals.get(judge.criterion)
        if totals is None:
            return judge
        config = getattr(judge, "config", None)
        priced = getattr(config, "price_per_input_token", None) is not None and (
            getattr(config, "price_per_output_token", None) is not None
        )
        if priced and totals["cost"] is None:
            totals["cost"] = 0.0  # priced: a run that makes no call costs nothing
        return _Watched(judge, self)

    def seen(self, case_id: str, criterion: str, verdict: Verdict, *, called: bool = True) -> None:
        """Note a verdict the judge gave for ``case_id``; ``called``: it asked its model."""
        self._seen.setdefault((case_id, criterion), []).append((verdict, called))

    def case_done(self, case_id: str, judged: Iterable[str]) -> None:
        """Count one finished case whose result holds a judgment for each of ``judged`` (a
        criterion named once for each repeat that holds one)."""
        if not self._totals:
            return
        held = Counter(judged)
        for criterion, totals in self._totals.items():
            verdicts = self._seen.pop((case_id, criterion), [])
            if not held[criterion]:
                continue
            totals["reused"] += max(0, held[criterion] - len(verdicts))
            for verdict, called in verdicts:
                self._count(totals, verdict, called)

    @staticmethod
    def _count(totals: dict[str, Any], verdict: Verdict, called: bool) -> None:
        """Add one judgment this run made to its judge's ``totals``."""
        # A call that failed (error_kind) may still have had a reply reporting the tokens it
        # used: counted as failed, its tokens and cost added all the same.
        failed = (
            called
            and verdict.status == "missing"
            and ("error_kind" in verdict.detail or "usage" not in verdict.detail)
        )
        if "usage" in verdict.detail:
            once = usage_totals([verdict.detail])
            for key in ("calls_without_usage", "input_tokens", "output_tokens"):
                totals[key] += once[key]
            totals["calls"] += 0 if failed else once["calls"]
            if once["cost"] is not None:
                totals["cost"] = (totals["cost"] or 0.0) + once["cost"]
        totals["failed"] += failed

    def totals(self) -> dict[str, dict[str, Any]]:
        return {criterion: dict(totals) for criterion, totals in self._totals.items()}


class _Watched:
    """A judge whose verdicts a ``UsageMeter`` sees (an ``AsyncEvaluator``, as the judge is)."""

    def __init__(self, judge: AsyncEvaluator, meter: UsageMeter) -> None:
        self._judge = judge
        self._meter = meter

    @property
    def criterion(self) -> str:
        return self._judge.criterion

    @property
    def kind(self) -> MetricKind:
        return self._judge.kind

    def spec(self) -> dict[str, Any]:
        return self._judge.spec()

    def reads(self) -> ReadDeclaration:
        return reads_of(self._judge)

    def case_exclusion(self, case_id: str, expected: Mapping[str, Any]) -> Verdict | None:
        """The judge's own (``ExcludesByCase``), or None for a judge that has none."""
        excludes = getattr(self._judge, "case_exclusion", None)
        return None if excludes is None else cast(Verdict | None, excludes(case_id, expected))

    async def ajudge(self, view: CaseView) -> Verdict:
        try:
            # A verdict given without asking the model (an exclusion, an output without answer
            # text) is no call, and so no failed one.
            decided = getattr(self._judge, "decided_without_call", None)
            called = decided is None or decided(view) is None
            verdict = await self._judge.ajudge(view)
        except Exception:
            # The run records the judgment as missing (evaluator_raised): a failure of this
            # run's, never a judgment "reused" from the cache, which is what an unseen one means.
            self._meter.seen(view.case_id, self.criterion, Verdict.missing("evaluator_raised"))
            raise
        self._meter.seen(view.case_id, self.criterion, verdict, called=called)
        return verdict
