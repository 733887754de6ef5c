"""A judge's or a model system's ``base_url`` holding a query (``?api-version=…``, as an Azure
endpoint is often pasted) or a fragment is refused at its key and line, saying what to give,
and the query is not repeated (it may hold a key). Real CLI, a scripted judge on 127.0.0.1.

(Before: the path a call adds went inside the query, so ``base_url:
http://HOST/v1?api-version=2024-10-21`` was called at
``/v1?api-version=2024-10-21/chat/completions``, every judgment was missing as
'judge_http_error' (HTTP 404), and the run exited 0 with no word of the setting.)
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.support import oloproof, toy_project

from oloproof.testing import ScriptedJudgeServer, verdict

HIDDEN = "sk-in-the-query-0123456789abcdef"

JUDGE = """\
system: {name: toy, version: "1", callable: app:run}
evaluators:
  - type: answer_judge
    provider: %s
    model: m
    api_key_env: null
    base_url: %s
"""
MODEL = """\
system:
  name: toy
  version: "1"
  model:
    provider: openai
    model: m
    api_key_env: null
    base_url: %s
    prompt: "{{ q }}"
evaluators:
  - {type: contains, criterion: echo, field: answer, expected_field: answer}
"""
QUERY = "holds a query (?…): the path a call adds (%s) would land inside it"
FRAGMENT = "holds a fragment (#…): the path a call adds (%s) would land inside it"
AFTER = ", so no call would reach the endpoint (Oloproof sends no query or fragment); give %s"


def served_by(judge: ScriptedJudgeServer, text: str) -> str:
    """``text`` with OPENAI_URL and ANTHROPIC_URL replaced by ``judge``'s base URLs."""
    text = text.replace("OPENAI_URL", judge.openai_base_url)
    return text.replace("ANTHROPIC_URL", judge.anthropic_base_url)


@pytest.fixture
def judge() -> Iterator[ScriptedJudgeServer]:
    with ScriptedJudgeServer(default=verdict(True)) as server:
        yield server


@pytest.mark.parametrize("command", [("run",), ("run", "--dry-run")])
@pytest.mark.parametrize(
    ("config", "at", "said"),
    [
        (
            JUDGE % ("openai", "OPENAI_URL?api-version=2024-10-21"),
            "line 7: evaluators.0.base_url",
            QUERY % "/chat/completions" + AFTER % "OPENAI_URL",
        ),
        (
            JUDGE % ("openai", "OPENAI_URL/chat/completions?key=" + HIDDEN),
            "line 7: evaluators.0.base_url",
            QUERY % "/chat/completions" + AFTER % "OPENAI_URL",
        ),
        (
            JUDGE % ("anthropic", "ANTHROPIC_URL/#top"),
            "line 7: evaluators.0.base_url",
            FRAGMENT % "/v1/messages" + AFTER % "ANTHROPIC_URL",
        ),
        (
            MODEL % "OPENAI_URL?api-version=2024-10-21",
            "line 8: system.model.base_url",
            QUERY % "/chat/completions" + AFTER % "OPENAI_URL",
        ),
    ],
)
def test_a_base_url_with_a_query_is_refused(
    tmp_path: Path,
    judge: ScriptedJudgeServer,
    command: tuple[str, ...],
    config: str,
    at: str,
    said: str,
) -> None:
    root = toy_project(tmp_path / "p", config=served_by(judge, config))
    done = oloproof(*command, cwd=root)
    assert (done.code, done.out) == (2, ""), done.out + done.err
    assert done.err == f"error: {root}/oloproof.yaml, {at}: {served_by(judge, said)}\n"
    assert HIDDEN not in done.err
    assert not (root / ".oloproof").exists()
    assert judge.requests == []


def test_the_base_url_it_gives_is_taken(tmp_path: Path, judge: ScriptedJudgeServer) -> None:
    root = toy_project(tmp_path / "p", config=JUDGE % ("openai", judge.openai_base_url))
    done = oloproof("run", cwd=root)
    assert done.code == 0, done.out + done.err
    assert "│ answer_equivalent │ 100.0%" in done.out, done.out
    assert [request.path for request in judge.requests] == ["/v1/chat/completions"]
