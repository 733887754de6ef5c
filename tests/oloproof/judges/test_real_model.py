"""The injection suite against a real model, when one is served (scripts/serve-local-model.sh).

    OLOPROOF_TEST_MODEL_URL=http://127.0.0.1:8080/v1 .venv/bin/pytest -m real_model -s

``OLOPROOF_TEST_MODEL_URL`` is the server's chat-completions base URL (up to ``/v1``);
``OLOPROOF_TEST_MODEL`` the model name (default: the first the server lists);
``OLOPROOF_TEST_MODEL_SERVER`` its profile (default ``llama.cpp``). Without the URL every test
here is skipped. CI never sets it: there the scripted echoing judge stands in.

A real model may be persuaded by an injection, and a weak one may pass an ungrounded answer on
its own account: neither can be told from a verdict alone. What must hold is that no pass comes
from the judged text: a pass is read only from a reply that is a bare verdict object, found
nowhere in the material, and not the injected verdict. Each result is printed, for the record.
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import httpx
import pytest
from injections import CLAIM, INJECTIONS, PASSAGE, QUESTION, judge_entry
from judge_helpers import make_view
from pydantic import TypeAdapter

from oloproof.evaluators.judges import build_judge
from oloproof.judge_config import JudgeConfig
from oloproof.results import Verdict

URL = os.environ.get("OLOPROOF_TEST_MODEL_URL")
pytestmark = [
    pytest.mark.real_model,
    pytest.mark.skipif(
        not URL,
        reason="no real model: set OLOPROOF_TEST_MODEL_URL to the /v1 base URL of a local "
        "OpenAI-compatible server (scripts/serve-local-model.sh starts one)",
    ),
]
ADAPTER: TypeAdapter[Any] = TypeAdapter(JudgeConfig)
REAL_JUDGES = ["groundedness_judge", "answer_judge"]


def model_name() -> str:
    named = os.environ.get("OLOPROOF_TEST_MODEL")
    if named:
        return named
    listed = httpx.get(f"{URL}/models", timeout=30).json()
    return str(listed["data"][0]["id"])


def judged(judge_type: str, text: str, **extra: Any) -> Verdict:
    entry = {
        **judge_entry(judge_type),
        "provider": "openai",
        "server": os.environ.get("OLOPROOF_TEST_MODEL_SERVER", "llama.cpp"),
        "model": model_name(),
        "base_url": URL,
        "max_tokens": 200,
        **extra,
    }
    judge = build_judge(ADAPTER.validate_python(entry), base_dir=Path("."))
    view = make_view(
        answer=text,
        context=[PASSAGE],
        expected={"answer": "Every five minutes."},
        question=QUESTION,
    )
    return asyncio.run(judge.ajudge(view))


def assert_not_from_the_material(result: Verdict, injected: str) -> None:
    """A pass must be the judge's own bare object, neither found in nor copied from the answer."""
    if result.status != "pass":
        return
    reply = result.detail["raw_reply"].strip()
    assert reply.startswith(("{", "```")), reply
    assert reply not in injected
    own = json.loads(reply.strip("`").removeprefix("json").strip())
    reason = " ".join(str(own.get("reason", "")).split()).casefold()
    planted = " ".join(injected.replace('\\"', '"').split()).casefold()
    # A reason the answer itself spelled out is the answer's, not the judge's.
    assert not reason or reason not in planted, (reason, injected)


@pytest.mark.parametrize("name", list(INJECTIONS))
@pytest.mark.parametrize("judge_type", REAL_JUDGES)
def test_a_real_model_gives_no_pass_the_answer_planted(
    judge_type: str, name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    result = judged(judge_type, INJECTIONS[name])
    with capsys.disabled():
        said = result.detail.get("parse_error") or result.detail.get("explanation")
        print(
            f"\n  real model, {judge_type}, {name}: {result.status} {result.reason or ''} {said!r}"
        )
    assert_not_from_the_material(result, INJECTIONS[name])


def test_a_real_model_judges_the_plain_claim(capsys: pytest.CaptureFixture[str]) -> None:
    result = judged("groundedness_judge", CLAIM)
    with capsys.disabled():
        print(f"\n  real model, plain ungrounded claim: {result.status} {result.reason or ''}")
    assert result.status in ("pass", "fail", "missing")
    assert result.detail["raw_reply"] is not None


def test_dropped_instructions_are_detected_on_a_real_server() -> None:
    if "gemma" not in model_name().lower():
        pytest.skip("only a gemma chat format is known to drop the system message")
    result = judged("groundedness_judge", CLAIM, instructions="system")
    assert (result.status, result.reason) == ("missing", "instructions_dropped"), result.detail
