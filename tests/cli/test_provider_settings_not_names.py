"""A judge's or a model system's ``server:`` or ``provider:``, or a judge's ``type:``, given as
a list or a mapping (``server: [llama.cpp]``) is refused at its line, exit 2, as any other
value that names none is. Real CLI.

(Before: the profile's or provider's defaults were looked up with the value as a key, and the
command ended in a traceback, 'TypeError: unhashable type: 'list'', exit 1.)
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.support import oloproof, toy_project

JUDGE = """\
system: {name: toy, version: "1", callable: app:run}
evaluators:
  - type: %s
    provider: %s
    server: %s
    model: m
"""
MODEL = """\
system:
  name: m
  version: "1"
  model: {provider: %s, server: %s, model: m, prompt: hi}
"""
SERVERS = "Input should be 'vllm', 'llama.cpp' or 'ollama'"
PROVIDERS = "Input should be 'openai' or 'anthropic'"


@pytest.mark.parametrize("value", ["[llama.cpp]", "{ollama: 1}"])
@pytest.mark.parametrize(
    ("config", "said"),
    [
        (JUDGE % ("answer_judge", "openai", "%s"), f"line 5: evaluators.0.server: {SERVERS}"),
        (JUDGE % ("answer_judge", "%s", "vllm"), f"line 4: evaluators.0.provider: {PROVIDERS}"),
        (MODEL % ("openai", "%s"), f"line 4: system.model.server: {SERVERS}"),
        (MODEL % ("%s", "vllm"), f"line 4: system.model.provider: {PROVIDERS}"),
    ],
)
def test_a_setting_that_is_no_name_is_refused(
    tmp_path: Path, config: str, said: str, value: str
) -> None:
    root = toy_project(tmp_path / "p", config=config % value)
    done = oloproof("run", "--dry-run", cwd=root)
    assert (done.code, done.out) == (2, ""), done.out + done.err
    assert done.err == f"error: {root}/oloproof.yaml, {said}\n"
    assert not (root / ".oloproof").exists()


def test_a_judge_type_that_is_no_name_is_refused(tmp_path: Path) -> None:
    root = toy_project(tmp_path / "p", config=JUDGE % ("[answer_judge]", "openai", "vllm"))
    done = oloproof("run", "--dry-run", cwd=root)
    assert (done.code, done.out) == (2, ""), done.out + done.err
    assert done.err.startswith(
        f"error: {root}/oloproof.yaml, line 3: evaluators.0: unknown evaluator type "
        "\"['answer_judge']\"; did you mean 'answer_judge'?"
    )
