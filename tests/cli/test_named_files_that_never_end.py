"""A file oloproof.yaml names that is no regular file is refused at its key and line, through
the real CLI, before anything is recorded.

Before the fix a ``schema_path``, ``rubric_file``, ``prompt_file`` or ``context_file`` naming a
named pipe waited for a writer for ever, and one naming ``/dev/zero`` read it until memory ran
out: ``oloproof run`` never ended. A dataset that was one was refused without its key and line.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from tests.support import TOY_CONFIG, oloproof, toy_project

_CHECK = "  - {type: contains, criterion: echo, field: answer, expected_field: answer}\n"
_JUDGE = "provider: openai, model: m, base_url: 'http://127.0.0.1:9/v1'"
MODEL = (
    """\
system:
  name: toy
  version: "1"
  model:
    provider: openai
    model: m
    base_url: http://127.0.0.1:9/v1
    PROMPT
evaluators:
"""
    + _CHECK
)
# Each key, with a config that names FILE with it.
NAMED = {
    "dataset": TOY_CONFIG + "dataset: FILE\n",
    "evaluators.0.schema_path": TOY_CONFIG.replace(
        _CHECK, "  - {type: json_schema, criterion: s, schema_path: FILE}\n"
    ),
    "evaluators.0.rubric_file": TOY_CONFIG.replace(
        _CHECK, f"  - {{type: rubric_judge, criterion: r, rubric_file: FILE, {_JUDGE}}}\n"
    ),
    "system.model.prompt_file": MODEL.replace("PROMPT", "prompt_file: FILE"),
    "system.model.context_file": MODEL.replace(
        "PROMPT", "prompt: '{{ q }} {{ context }}'\n    context_file: FILE"
    ),
}


@pytest.mark.parametrize("kind", ["a named pipe", "a character device"])
@pytest.mark.parametrize("key", list(NAMED))
def test_a_named_file_that_is_no_regular_file_is_refused_at_its_key(
    tmp_path: Path, key: str, kind: str
) -> None:
    root = toy_project(tmp_path)
    target = root / "pipe" if kind == "a named pipe" else Path("/dev/zero")
    if kind == "a named pipe":
        os.mkfifo(target)
    text = NAMED[key].replace("FILE", str(target))
    (root / "oloproof.yaml").write_text(text)
    line = next(n for n, row in enumerate(text.splitlines(), 1) if str(target) in row)
    result = oloproof("run", cwd=root, env={"OPENAI_API_KEY": "sk-test"}, timeout=30)
    expected = (
        f"error: {root}/oloproof.yaml, line {line}: {key}: {target}: cannot read it ({kind}, "
        "not a regular file)\n"
    )
    assert (result.code, result.out, result.err) == (2, "", expected)
    assert not (root / ".oloproof").exists()
