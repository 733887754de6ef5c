"""A judge (or a model system) with ``provider: anthropic`` and a local server's profile (``server: vllm``,
``llama.cpp`` or ``ollama``, profiles of the chat-completions protocol) is refused with the
sentence that says so, at its line. Real CLI.

(Before: the profile's own base_url, which the entry does not hold, was checked first, and the
error said ``evaluators.0: ends in /v1, which Oloproof adds itself (a call goes to
base_url/v1/messages); give http://127.0.0.1:11434``: a setting nobody wrote, and a remedy
that led only to the next refusal.)
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.support import oloproof, toy_project

JUDGE = """\
system: {name: toy, version: "1", callable: app:run}
evaluators:
  - type: answer_judge
    provider: anthropic
    model: m
    server: %s
"""
MODEL = """\
system:
  name: toy
  version: "1"
  model:
    provider: anthropic
    model: m
    server: %s
    prompt: "{{ q }}"
evaluators:
  - {type: contains, criterion: echo, field: answer, expected_field: answer}
"""


@pytest.mark.parametrize("command", [("run",), ("run", "--dry-run")])
@pytest.mark.parametrize("server", ["vllm", "llama.cpp", "ollama"])
@pytest.mark.parametrize(
    ("config", "at"), [(JUDGE, "line 3: evaluators.0"), (MODEL, "line 4: system.model")]
)
def test_a_chat_completions_profile_is_refused_for_the_messages_protocol(
    tmp_path: Path, config: str, at: str, server: str, command: tuple[str, ...]
) -> None:
    root = toy_project(tmp_path / "p", config=config % server)
    done = oloproof(*command, cwd=root)
    assert (done.code, done.out) == (2, ""), done.out + done.err
    assert done.err == (
        f"error: {root}/oloproof.yaml, {at}: server: {server} speaks the "
        "chat-completions protocol: use provider: openai\n"
    )
    assert not (root / ".oloproof").exists()
