"""Helpers shared by the judge tests: the secret key, cases, judge settings."""

from __future__ import annotations

from typing import Any

from oloproof.evaluators.base import CaseView
from oloproof.testing import ScriptedJudgeServer

SECRET = "sk-test-SECRET-0123456789abcdef"
KEY_ENV = "OLOPROOF_TEST_JUDGE_KEY"


def base_url(server: ScriptedJudgeServer, provider: str) -> str:
    return server.openai_base_url if provider == "openai" else server.anthropic_base_url


def judge_settings(server: ScriptedJudgeServer, provider: str, **extra: Any) -> dict[str, Any]:
    """Provider keys for a judge pointed at ``server``, with fast timeouts and retries."""
    return {
        "provider": provider,
        "model": "judge-model-1",
        "base_url": base_url(server, provider),
        "api_key_env": KEY_ENV,
        "timeout_s": 2.0,
        "max_retries": 2,
        "retry_backoff_s": 0.01,
        **extra,
    }


def make_view(
    *,
    case_id: str = "seat_count",
    answer: Any = "Team plans include five seats [kb-03].",
    context: list[dict[str, Any]] | None = None,
    citations: list[str] | None = None,
    expected: dict[str, Any] | None = None,
    question: str = "How many seats does a team plan include?",
) -> CaseView:
    artifacts: dict[str, list[dict[str, Any]]] = {}
    if context is not None:
        artifacts["context/v1"] = [{"items": context, "dropped": [], "source": "retrieval"}]
    if citations is not None:
        artifacts["citations/v1"] = [{"ids": citations}]
    output = answer if not isinstance(answer, str) else {"answer": answer}
    return CaseView(
        case_id=case_id,
        input={"question": question},
        expected=expected or {},
        metadata={},
        output=output,
        artifacts=artifacts,
    )


KB03 = {"doc_id": "kb-03", "text": "Team plans include five seats. Extra seats cost 8 EUR."}
KB07 = {"doc_id": "kb-07", "text": "Support is open 09:00 to 17:00 on weekdays."}
