"""A model system's context file and prompt are read as strictly as the cases, through the CLI.

The probe: a `context_file` holding `NaN` ran (the passages go into the system's identity and
into every prompt); one holding a lone surrogate escape stopped the run with `cannot encode
value` naming no file, after the ledger folder was made; one nested 100,000 deep ended in a
`RecursionError` traceback. A prompt holding `{{ question }` (a brace short) or `{{ a-b }}` ran
too, and every case sent the model the text as written, without the question. Each is now
refused before anything is written, naming the file or the key (exit 2).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.support import oloproof, toy_project

CONFIG = """\
system:
  name: m
  version: "1"
  model:
    provider: openai
    model: m
    base_url: http://127.0.0.1:9/v1
    {prompt}
    context_file: ctx.json
evaluators:
  - {{type: contains, criterion: echo, field: answer, expected_field: answer}}
policy: policy.yaml
"""
PROMPT = "prompt: '{{ q }} {{ context }}'"
ENV = {"OPENAI_API_KEY": "test-key"}


def _project(tmp_path: Path, prompt: str, context: str) -> Path:
    root = toy_project(tmp_path / "p", config=CONFIG.format(prompt=prompt))
    (root / "ctx.json").write_text(context)
    return root


@pytest.mark.parametrize(
    ("context", "said"),
    [
        ('["a", {"doc_id": "d", "text": NaN}]', "(NaN is not a JSON number)"),
        ('["\\ud800"]', "surrogates not allowed)"),
        ("[" * 100_000 + "]" * 100_000, ": nested too deeply to read"),
        ('[{"doc_id": "d", "doc_id": "e"}]', "'doc_id'"),
    ],
)
def test_a_context_file_the_run_cannot_record_is_refused(
    tmp_path: Path, context: str, said: str
) -> None:
    root = _project(tmp_path, PROMPT, context)
    done = oloproof("run", cwd=root, env=ENV)
    assert done.code == 2 and "Traceback" not in done.err, done.err
    assert done.err.startswith(
        f"error: {root}/oloproof.yaml, line 4: system.model.context_file {root}/ctx.json: "
    ), done.err
    assert said in done.err
    assert not (root / ".oloproof").exists()


@pytest.mark.parametrize(
    ("prompt", "key", "near"),
    [
        ("prompt: '{{ q } {{ context }}'", "prompt", "'{{ q } '"),
        ("prompt: '{{ a-b }} {{ context }}'", "prompt", "'{{ a-b }} '"),
        ("prompt_file: prompt.txt", "prompt_file prompt.txt", "'{{ q'"),
    ],
)
def test_a_prompt_brace_that_starts_no_placeholder_is_refused(
    tmp_path: Path, prompt: str, key: str, near: str
) -> None:
    root = _project(tmp_path, prompt, '["a passage"]')
    (root / "prompt.txt").write_text("{{ context }}\nQuestion: {{ q")
    done = oloproof("run", cwd=root, env=ENV)
    assert (done.code, done.err) == (
        2,
        f"error: {root}/oloproof.yaml, line 4: system.model.{key}: {near} starts no placeholder, "
        "and would be sent to the model as it is written; a placeholder is {{ key }}, the key "
        "made of letters, digits, _ and dots (a key of the case input, or context)\n",
    )
    assert not (root / ".oloproof").exists()


def test_literal_braces_of_json_are_left_alone(tmp_path: Path) -> None:
    # Single braces, and the closing pair of a nested object, start no placeholder.
    prompt = """prompt: 'Answer as {"answer": {"text": "..."}}. {{ q }} {{ context }}'"""
    root = _project(tmp_path, prompt, '["a passage"]')
    done = oloproof("run", "--dry-run", cwd=root, env=ENV)
    assert done.code == 0, done.err
