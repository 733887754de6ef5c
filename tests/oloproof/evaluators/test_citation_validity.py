"""citation_validity: every cited id names a passage of the context."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import TypeAdapter

from oloproof.evaluator_config import EvaluatorConfig
from oloproof.evaluators import build_evaluator
from oloproof.evaluators.base import CaseView, Evaluator
from oloproof.evaluators.citations import cited_outside
from oloproof.results import Verdict

ADAPTER: TypeAdapter[EvaluatorConfig] = TypeAdapter(EvaluatorConfig)


def build(**settings: Any) -> Evaluator:
    config = ADAPTER.validate_python({"type": "citation_validity", **settings})
    return build_evaluator(config, base_dir=Path("."))


def view(
    cited: list[str] | None, context: list[str] | None, dropped: tuple[str, ...] = ()
) -> CaseView:
    artifacts: dict[str, list[dict[str, Any]]] = {}
    if cited is not None:
        artifacts["citations/v1"] = [{"ids": cited}]
    if context is not None:
        artifacts["context/v1"] = [
            {
                "items": [{"doc_id": d, "position": i + 1} for i, d in enumerate(context)],
                "dropped": [{"doc_id": d, "reason": "token_budget"} for d in dropped],
                "source": "retrieval",
            }
        ]
    return CaseView("c1", {}, {}, {}, {"answer": "a", "citations": cited}, artifacts)


def test_citations_inside_the_context_pass() -> None:
    ev = build()
    assert (ev.criterion, ev.kind) == ("citations_valid", "pass_fail")
    assert ev.judge(view(["kb-01"], ["kb-01", "kb-02"])) == Verdict.passed()
    assert ev.judge(view(["kb-02", "kb-01", "kb-02"], ["kb-01", "kb-02"])).status == "pass"


def test_a_citation_outside_the_context_fails_and_is_named() -> None:
    verdict = build().judge(view(["kb-01", "kb-07", "kb-09", "kb-07"], ["kb-01", "kb-02"]))
    assert (verdict.status, verdict.reason) == ("fail", "cited_outside_context")
    assert verdict.detail == {"cited_outside": ["kb-07", "kb-09"]}


def test_citing_a_dropped_passage_is_citing_outside_the_context() -> None:
    verdict = build().judge(view(["kb-03"], ["kb-01"], dropped=("kb-03",)))
    assert verdict.reason == "cited_outside_context"


def test_no_citations_pass_unless_required() -> None:
    assert build().judge(view([], ["kb-01"])).status == "pass"
    verdict = build(require_citations=True).judge(view([], ["kb-01"]))
    assert (verdict.status, verdict.reason) == ("fail", "no_citations")
    # An empty context with nothing cited: the tutorial's money_back case.
    assert build(require_citations=True).judge(view([], [])).reason == "no_citations"
    assert build().judge(view([], [])).status == "pass"


def test_citations_with_an_empty_context_fail() -> None:
    assert build().judge(view(["kb-01"], [])).reason == "cited_outside_context"


def test_exclusions() -> None:
    # Ids cited with no context recorded: nothing can check them, so missing (counted against
    # the system), not excluded (version 2). Nothing cited and no context: excluded.
    for ev in (build(), build(require_citations=True)):
        no_context = ev.judge(view(["kb-01"], None))
        assert (no_context.status, no_context.reason) == ("missing", "no_context_recorded")
    nothing_cited = build().judge(view([], None))
    assert (nothing_cited.status, nothing_cited.reason) == ("excluded", "no_context_recorded")
    no_citations = build().judge(view(None, ["kb-01"]))
    assert (no_citations.status, no_citations.reason) == ("excluded", "no_citations_recorded")


def test_unrecorded_citations_fail_when_required() -> None:
    # Nothing recorded is nothing cited, with a context or without one.
    for context in (["kb-01"], None):
        verdict = build(require_citations=True).judge(view(None, context))
        assert (verdict.status, verdict.reason) == ("fail", "no_citations")


def test_the_last_artifacts_are_read() -> None:
    artifacts: dict[str, list[dict[str, Any]]] = {
        "citations/v1": [{"ids": ["kb-09"]}, {"ids": ["kb-01"]}],
        "context/v1": [{"items": [{"doc_id": "kb-02"}]}, {"items": [{"doc_id": "kb-01"}]}],
    }
    assert build().judge(CaseView("c1", {}, {}, {}, {}, artifacts)).status == "pass"
    artifacts["context/v1"].reverse()
    assert build().judge(CaseView("c1", {}, {}, {}, {}, artifacts)).status == "fail"


def test_spec() -> None:
    assert build(criterion="cites_ok", require_citations=True).spec() == {
        "type": "citation_validity",
        "criterion": "cites_ok",
        "require_citations": True,
        "version": 3,
    }


def test_cited_outside_keeps_order_and_drops_repeats() -> None:
    assert cited_outside(["b", "a", "b", "c"], {"c"}) == ["b", "a"]
    assert cited_outside([], set()) == []
