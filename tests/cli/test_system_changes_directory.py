"""A system that changes the working directory does not move the run's reports.

The system's code runs in Oloproof's own process, and the `--junit` and `--summary` files were
written at the end of the run by the paths as given: relative to whatever directory the
system's code had moved to. The CI job then read the report a run before had left where it
looked, a stale PASS, or found none.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.support import oloproof

APP = """
import os

from oloproof import system


@system(name="moves", version="1")
def moves(case):
    os.chdir({elsewhere!r})
    return {{"answer": "no"}}
"""

CONFIG = """
system: {name: moves, version: "1", callable: app:moves}
dataset: cases.jsonl
policy: policy.yaml
evaluators:
  - {type: contains, criterion: answered, field: answer, expected_field: answer}
"""

POLICY = "version: 1\nrules:\n  - {id: answers, metric: answered, min: 0.5}\n"


def test_the_reports_are_written_where_they_were_asked_for(tmp_path: Path) -> None:
    root, elsewhere = tmp_path / "p", tmp_path / "elsewhere"
    root.mkdir()
    elsewhere.mkdir()
    (root / "app.py").write_text(APP.format(elsewhere=str(elsewhere)))
    (root / "oloproof.yaml").write_text(CONFIG)
    (root / "policy.yaml").write_text(POLICY)
    (root / "cases.jsonl").write_text(
        "".join(
            json.dumps({"id": f"c{i}", "input": {"q": "x"}, "expected": {"answer": "yes"}}) + "\n"
            for i in range(3)
        )
    )
    (root / "reports").mkdir()
    (root / "reports" / "gate.xml").write_text("<testsuites><!-- a run before --></testsuites>")
    result = oloproof("run", "--junit", "reports/gate.xml", "--summary", "summary.md", cwd=root)
    assert result.code == 3, result.out + result.err  # too few cases to say more than BLOCK
    assert sorted(p.name for p in elsewhere.iterdir()) == []
    junit = (root / "reports" / "gate.xml").read_text()
    assert "a run before" not in junit
    assert 'name="answers (answered)"' in junit, junit
    assert "BLOCK" in (root / "summary.md").read_text()
