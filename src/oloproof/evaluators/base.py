"""The contract every evaluator keeps.

An evaluator reads one executed case (a ``CaseView``) and returns a ``Verdict``. It never sees
an errored case: the engine records those as missing itself, unless the evaluator
``ExcludesByCase`` and would exclude that case whatever its output. ``spec()`` returns the
evaluator's type and settings; it is part of every judgment's identity, so any setting that can
change a verdict must be in it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from oloproof.results import MetricKind, Verdict


@dataclass(frozen=True)
class CaseView:
    """What an evaluator may read of one executed case."""

    case_id: str
    input: Mapping[str, Any]
    expected: Mapping[str, Any]
    metadata: Mapping[str, Any]
    output: Any
    artifacts: Mapping[str, list[dict[str, Any]]]

    def artifact(self, kind: str) -> dict[str, Any] | None:
        """The last artifact of ``kind`` the case recorded, or None."""
        found = self.artifacts.get(kind)
        return found[-1] if found else None


@runtime_checkable
class Evaluator(Protocol):
    """A synchronous evaluator. ``criterion`` names the metric its verdicts feed."""

    @property
    def criterion(self) -> str: ...

    @property
    def kind(self) -> MetricKind: ...

    def spec(self) -> dict[str, Any]: ...

    def judge(self, view: CaseView) -> Verdict: ...


@runtime_checkable
class ExcludesByCase(Protocol):
    """An evaluator that can tell from a case's expected values alone that it excludes the
    case whatever its output (no labels, no expected value: ``repeats.CASE_EXCLUSIONS``).

    ``case_exclusion`` returns that exclusion, the one ``judge`` returns for the case, or None.
    An errored case records it instead of a missing verdict: it could never have counted for
    the criterion, so it must not widen the metric's interval as a missing case does. An
    evaluator without it (an LLM judge) leaves an errored case missing."""

    def case_exclusion(self, case_id: str, expected: Mapping[str, Any]) -> Verdict | None: ...


@runtime_checkable
class AsyncEvaluator(Protocol):
    """An evaluator that waits on something outside (an LLM judge)."""

    @property
    def criterion(self) -> str: ...

    @property
    def kind(self) -> MetricKind: ...

    def spec(self) -> dict[str, Any]: ...

    async def ajudge(self, view: CaseView) -> Verdict: ...
