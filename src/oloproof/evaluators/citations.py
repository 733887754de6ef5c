"""``citation_validity``: every id an answer cites names a passage it was given.

Reads the last ``citations/v1`` artifact (the cited ids) and the last ``context/v1`` artifact
(the passages that reached the model). The check is about provenance, not support: a cited id
that is in the context passes whether or not the passage backs the claim (the LLM judges
``citation_support_judge`` and ``groundedness_judge`` ask that question).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from oloproof.evaluator_config import CitationValidityConfig
from oloproof.evaluators.base import CaseView
from oloproof.evaluators.reads import Reads
from oloproof.results import MetricKind, Verdict

CITATIONS_KIND = "citations/v1"
CONTEXT_KIND = "context/v1"


def cited_outside(cited: list[str] | tuple[str, ...], context_doc_ids: set[str]) -> list[str]:
    """The cited ids that name no passage of the context, once each, in citation order."""
    outside: list[str] = []
    for doc_id in cited:
        if doc_id not in context_doc_ids and doc_id not in outside:
            outside.append(doc_id)
    return outside


@dataclass(frozen=True)
class CitationValidity:
    """Pass when every cited id is the ``doc_id`` of an item of the context.

    * nothing cited (an empty citation list, or no ``citations/v1`` recorded) with
      ``require_citations`` → fail ``no_citations``
    * no ``citations/v1`` recorded → excluded ``no_citations_recorded``
    * ids cited but no ``context/v1`` recorded → missing ``no_context_recorded``: the answer
      makes a claim nothing recorded can check, so it counts against the system
    * nothing cited and no ``context/v1`` recorded → excluded ``no_context_recorded``
    * an empty citation list → pass
    * any cited id not among the context items' doc ids → fail ``cited_outside_context``, the
      detail ``cited_outside`` lists those ids (once each, in citation order)

    Passages the context dropped (``context.dropped``) never reached the model, so citing one
    is citing outside the context.

    Version 2 fails an answer that recorded no citations when they are required: a system may
    record them only when its answer has some (a staged system records them from the output's
    ``citations`` key), and version 1 excluded such an answer, so the answers that cited
    nothing left the denominator and the rest passed the requirement. Version 3 counts an
    answer that cites ids without a recorded context as missing: version 2 excluded it, so a
    system that recorded its context only where retrieval worked left its fallback answers'
    citations (to ids no context held) out of the metric.
    """

    config: CitationValidityConfig
    VERSION: ClassVar[int] = 3

    @property
    def criterion(self) -> str:
        return self.config.criterion

    @property
    def kind(self) -> MetricKind:
        return "pass_fail"

    def spec(self) -> dict[str, Any]:
        return {**self.config.model_dump(mode="json", by_alias=True), "version": self.VERSION}

    def reads(self) -> Reads:
        return Reads(artifacts=(CITATIONS_KIND, CONTEXT_KIND))

    def judge(self, view: CaseView) -> Verdict:
        citations = view.artifact(CITATIONS_KIND)
        cited = () if citations is None else citations.get("ids", ())
        if not cited and self.config.require_citations:
            return Verdict.failed("no_citations")
        if citations is None:
            return Verdict.excluded("no_citations_recorded")
        context = view.artifact(CONTEXT_KIND)
        if context is None:
            if cited:
                return Verdict.missing("no_context_recorded")
            return Verdict.excluded("no_context_recorded")
        if not cited:
            return Verdict.passed()
        in_context = {item["doc_id"] for item in context.get("items", ())}
        outside = cited_outside(cited, in_context)
        if outside:
            return Verdict.failed("cited_outside_context", cited_outside=outside)
        return Verdict.passed()
