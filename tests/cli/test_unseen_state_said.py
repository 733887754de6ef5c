"""A run that reuses results says what its code fingerprint could not see.

A prompt template held in a ``string.Template`` is state the fingerprint cannot read: editing it
reuses every execution made with the old one. ``run --dry-run`` listed such state; a run that
reused results on the strength of the fingerprint said nothing, so the old answers read as the
new template's.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.support import oloproof

APP = """
import string

from oloproof import system

TEMPLATE = string.Template("$q, WORDING")


@system(name="templated", version="1")
def answer(case):
    return {"answer": TEMPLATE.substitute(q=case["q"])}
"""

CONFIG = """
system: {name: templated, version: "1", callable: app:answer}
dataset: cases.jsonl
evaluators:
  - {type: contains, criterion: answered, field: answer, expected_field: answer}
"""

UNSEEN = (
    "Not seen by the code fingerprint (change system.version when they change): "
    "app.TEMPLATE: a string.Template object"
)


def test_a_run_that_reused_results_names_what_the_fingerprint_cannot_see(tmp_path: Path) -> None:
    root = tmp_path / "templated"
    root.mkdir()
    (root / "app.py").write_text(APP.replace("WORDING", "first"))
    (root / "oloproof.yaml").write_text(CONFIG)
    (root / "cases.jsonl").write_text(
        json.dumps({"id": "c1", "input": {"q": "q1"}, "expected": {"answer": "q1"}}) + "\n"
    )
    first = oloproof("run", cwd=root)
    assert first.code == 0, first.out + first.err
    assert UNSEEN not in first.lines  # nothing was reused
    (root / "app.py").write_text(APP.replace("WORDING", "second"))
    again = oloproof("run", cwd=root)
    assert again.code == 0, again.out + again.err
    assert "Cache: execution 1 hit/0 miss; judgment 1 hit/0 miss" in again.lines
    assert UNSEEN in again.lines
    assert UNSEEN in oloproof("inspect", "latest", cwd=root).lines
    assert UNSEEN in oloproof("run", "--dry-run", cwd=root).lines
