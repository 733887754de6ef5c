"""An evaluator entry that cannot be built (a judge's ``template_version`` this Oloproof does
not ship, a ``rubric_file`` missing or empty, a ``schema_path`` missing) is refused naming the
config file and the entry's line, by ``run``, ``run --dry-run`` and ``calibrate`` alike, before
anything is written. Real CLI.

(Before: ``error: prompt template 'rubric_pass_fail' has no version 2 (this Oloproof ships 1)
(...)`` named neither the file nor the line, nor which of the judges had asked for it; a rubric
or schema file's error named the file read, not the entry of oloproof.yaml that named it.)
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.support import TOY_CONFIG, oloproof, toy_project

_CHECK = "  - {type: contains, criterion: echo, field: answer, expected_field: answer}\n"
_JUDGE = "provider: openai, model: m, base_url: 'http://127.0.0.1:9/v1', api_key_env: null"
ENTRIES = {
    "template_version": (
        f"  - {{type: rubric_judge, criterion: r, rubric: be kind, template_version: 2, {_JUDGE}}}",
        "prompt template 'rubric_pass_fail' has no version 2 (this Oloproof ships 1) (remove "
        "template_version to use the newest, or upgrade Oloproof)",
    ),
    "rubric_file missing": (
        f"  - {{type: rubric_judge, criterion: r, rubric_file: nope.md, {_JUDGE}}}",
        "rubric_file ROOT/nope.md: no such file",
    ),
    "rubric_file empty": (
        f"  - {{type: rubric_judge, criterion: r, rubric_file: empty.md, {_JUDGE}}}",
        "rubric_file ROOT/empty.md is empty",
    ),
    "schema_path missing": (
        "  - {type: json_schema, criterion: r, schema_path: nope.json}",
        "ROOT/nope.json: no such file",
    ),
}
COMMANDS = {
    "run": ("run",),
    "dry run": ("run", "--dry-run"),
    "calibrate": ("calibrate", "--evaluator", "r", "--labels", "labels.jsonl"),
}


# calibrate builds only the judge it measures.
CALLED = [
    (e, c) for e in ENTRIES for c in COMMANDS if (e, c) != ("schema_path missing", "calibrate")
]


@pytest.mark.parametrize(("entry", "command"), CALLED)
def test_an_entry_that_cannot_be_built_is_named_at_its_line(
    tmp_path: Path, entry: str, command: str
) -> None:
    written, said = ENTRIES[entry]
    config = TOY_CONFIG.replace(_CHECK, _CHECK + written + "\n")
    root = toy_project(tmp_path / "p", config=config)
    (root / "empty.md").write_text("")
    (root / "labels.jsonl").write_text(
        '{"id": "a", "input": {"q": "x"}, "output": {"answer": "x"}, "label": true}\n'
    )
    line = config.splitlines().index(written) + 1
    done = oloproof(*COMMANDS[command], cwd=root)
    assert (done.code, done.out) == (2, ""), done.out + done.err
    expected = said.replace("ROOT", str(root))
    assert done.err == f"error: {root}/oloproof.yaml, line {line}: evaluators.1: {expected}\n"
    assert not (root / ".oloproof").exists()
