"""A YAML merge key (``<<``) cannot give a setting two values, through the real CLI.

The probe: 40 cases, all answered right. ``min: 0.95`` blocks the gate (exit 3: 40 of 40 cannot
show a 95% floor), but a rule holding ``<<: {min: 0.95}`` and then ``<<: {min: 0.5}``, or
``<<: [{min: 0.95}, {min: 0.5}]``, was read with ``min: 0.5`` and the gate passed (exit 0).
Which of two merged values wins is not something YAML readers agree on (the merge-key spec
says the earlier mapping of a list; PyYAML keeps the later), so the file had no one meaning.
Now a mapping may hold one ``<<``, and the mappings one ``<<`` merges may not give the same key
unless the mapping gives it too: one sentence naming the file and the line, exit 2, nothing
written. A key written beside a merge overrides it (every reader agrees), and a merge whose
mappings give different keys is read as before.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.support import oloproof, patterns_project

CASES = 40

STRICT = "version: 1\nrules:\n  - {id: floor, metric: answer_correct, min: 0.95}\n"


def _project(root: Path) -> Path:
    """40 cases the system answers right; the policy is the strict floor, which blocks."""
    return patterns_project(root, [("p", "p")] * CASES, policy=STRICT)


def _gate(root: Path, policy: str) -> tuple[int, str]:
    (root / "policy.yaml").write_text(policy)
    done = oloproof("run", cwd=root)
    assert done.code in (0, 1, 3), done.out + done.err
    return done.code, next(line for line in done.lines if line.startswith("Gate:"))


def test_a_floor_written_beside_or_merged_from_a_template_decides_the_gate(
    tmp_path: Path,
) -> None:
    root = _project(tmp_path / "p")
    assert _gate(root, STRICT) == (3, "Gate: BLOCK (exit 3)")
    # A key beside the merge overrides the merged one, wherever it is written.
    for rule in (
        "  - id: floor\n    <<: {metric: answer_correct, min: 0.5}\n    min: 0.95\n",
        "  - id: floor\n    min: 0.95\n    <<: {metric: answer_correct, min: 0.5}\n",
        # Two merged mappings that give different keys: no order to read.
        "  - id: floor\n    <<: [{metric: answer_correct}, {min: 0.95}]\n",
    ):
        assert _gate(root, "version: 1\nrules:\n" + rule) == (3, "Gate: BLOCK (exit 3)"), rule
    # A template rule merged into a second one, which raises its floor.
    templated = (
        "version: 1\nrules:\n"
        "  - &floor {id: floor, metric: answer_correct, min: 0.5}\n"
        "  - {<<: *floor, id: high}\n"
    )
    assert _gate(root, templated) == (0, "Gate: PASS (exit 0)")
    raised = templated.replace("id: high}", "id: high, min: 0.95}")
    assert _gate(root, raised) == (3, "Gate: BLOCK (exit 3)")


REFUSED = {
    "two merges in one rule": (
        "policy.yaml",
        "version: 1\nrules:\n  - id: floor\n    metric: answer_correct\n"
        "    <<: {min: 0.95}\n    <<: {min: 0.5}\n",
        "{root}/policy.yaml, line 6: key '<<' appears twice in one mapping (first on line 5); "
        "readers of YAML disagree on what a second merge does, so merge once, a list of "
        "mappings if need be (<<: [*a, *b])",
    ),
    "two merged mappings that give the same key": (
        "policy.yaml",
        "version: 1\nrules:\n  - id: floor\n    metric: answer_correct\n"
        "    <<: [{min: 0.95}, {min: 0.5}]\n",
        "{root}/policy.yaml, line 5: rules.0: two of the mappings merged here give 'min' (both "
        "on line 5), and readers of YAML disagree on which one wins; give 'min' in one of "
        "them only, or beside the << to override both",
    ),
    "the same key through a merge inside a merged mapping": (
        "policy.yaml",
        "version: 1\nrules:\n  - &base {id: a, metric: answer_correct, min: 0.95}\n"
        "  - id: b\n    metric: answer_correct\n    <<:\n      - {<<: *base}\n      - {min: 0.5}\n",
        "{root}/policy.yaml, line 6: rules.1: two of the mappings merged here give 'min' (on "
        "lines 3 and 8), and readers of YAML disagree on which one wins; give 'min' in one of "
        "them only, or beside the << to override both",
    ),
    "a merged value named at its own line": (
        "policy.yaml",
        "version: 1\nrules:\n  - id: floor\n    metric: answer_correct\n    <<:\n      min: true\n",
        "{root}/policy.yaml, line 6: rules.0.min: expected a number, found the boolean true",
    ),
    "two merges in oloproof.yaml": (
        "oloproof.yaml",
        'system: {name: cand, version: "1", callable: "app:cand"}\n'
        "dataset: cases.jsonl\nevaluators:\n"
        "  - <<: {type: contains, criterion: answer_correct}\n"
        "    <<: {field: answer, expected_field: answer}\n"
        "policy: policy.yaml\n",
        "{root}/oloproof.yaml, line 5: key '<<' appears twice in one mapping (first on line 4); "
        "readers of YAML disagree on what a second merge does, so merge once, a list of "
        "mappings if need be (<<: [*a, *b])",
    ),
}


@pytest.mark.parametrize("name", list(REFUSED))
def test_a_merge_with_no_one_meaning_is_refused_before_anything_is_written(
    tmp_path: Path, name: str
) -> None:
    root = _project(tmp_path / "p")
    file, text, sentence = REFUSED[name]
    (root / file).write_text(text)
    done = oloproof("run", cwd=root)
    assert (done.code, done.err) == (2, f"error: {sentence.format(root=root)}\n"), done.out
    assert not (root / ".oloproof").exists()
