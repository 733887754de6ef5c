"""A judge's or a model system's ``base_url`` given as the whole endpoint (ending in the path
its protocol adds: ``/chat/completions``, or ``/v1/messages`` and ``/v1`` for the messages
protocol) is refused at its key and line, saying what to give. Real CLI.

(Before: ``base_url: http://HOST/v1/chat/completions`` was called at
``.../chat/completions/chat/completions``; every judgment was missing, 'judge_http_error', and
the run exited 0 with no word of the setting.)
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.support import oloproof, toy_project

JUDGE = """\
system: {name: toy, version: "1", callable: app:run}
evaluators:
  - type: answer_judge
    provider: %s
    model: m
    base_url: %s
"""
MODEL = """\
system:
  name: toy
  version: "1"
  model:
    provider: openai
    model: m
    base_url: http://127.0.0.1:9/v1/chat/completions/
    prompt: "{{ q }}"
evaluators:
  - {type: contains, criterion: echo, field: answer, expected_field: answer}
"""


@pytest.mark.parametrize(
    ("config", "at", "said"),
    [
        (
            JUDGE % ("openai", "https://api.openai.com/v1/chat/completions"),
            "line 6: evaluators.0.base_url",
            "ends in /chat/completions, which Oloproof adds itself (a call goes to "
            "base_url/chat/completions); give https://api.openai.com/v1",
        ),
        (
            JUDGE % ("anthropic", "https://api.anthropic.com/v1/messages"),
            "line 6: evaluators.0.base_url",
            "ends in /v1/messages, which Oloproof adds itself (a call goes to "
            "base_url/v1/messages); give https://api.anthropic.com",
        ),
        (
            JUDGE % ("anthropic", "https://api.anthropic.com/v1"),
            "line 6: evaluators.0.base_url",
            "ends in /v1, which Oloproof adds itself (a call goes to base_url/v1/messages); "
            "give https://api.anthropic.com",
        ),
        (
            MODEL,
            "line 7: system.model.base_url",
            "ends in /chat/completions, which Oloproof adds itself (a call goes to "
            "base_url/chat/completions); give http://127.0.0.1:9/v1",
        ),
    ],
)
def test_an_endpoint_given_whole_is_refused(
    tmp_path: Path, config: str, at: str, said: str
) -> None:
    root = toy_project(tmp_path / "p", config=config)
    done = oloproof("run", cwd=root)
    assert (done.code, done.out) == (2, ""), done.out + done.err
    assert done.err == f"error: {root}/oloproof.yaml, {at}: {said}\n"
    assert not (root / ".oloproof").exists()


def test_the_base_urls_the_docs_give_are_taken(tmp_path: Path) -> None:
    config = JUDGE % ("openai", "http://127.0.0.1:8000/v1")
    root = toy_project(tmp_path / "p", config=config + "    api_key_env: null\n")
    done = oloproof("run", "--dry-run", cwd=root)
    assert done.code == 0, done.out + done.err
