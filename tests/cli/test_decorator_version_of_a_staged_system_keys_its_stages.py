"""Bumping ``@rag_system(version=...)`` while oloproof.yaml still names the old version runs
both stages again, through the real CLI, as running.md promises of the decorator's version
("say, after changing a data file the code reads, which no fingerprint sees").

The decorator's version joined the execution's identity but neither stage's key: after the
index file changed and the decorator's version was bumped, the run executed every case and
read every stage from the cache (``Stages: retrieve 2 hit/0 miss; generate 2 hit/0 miss``),
so its answers were those of the old index.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.support import oloproof, write_project

APP = """
import json
from pathlib import Path
from oloproof import Passage, Retrieval, rag_system

INDEX = Path(__file__).parent / "index.json"


@rag_system(name="s", version="1", depth=2, top_k=1)
class Staged:
    def retrieve(self, input, depth):
        docs = json.loads(INDEX.read_text())
        found = (Passage(doc_id=d, text=t) for d, t in docs.items())
        return Retrieval(query=input["q"], depth=depth, candidates=tuple(found)[:depth])

    def generate(self, input, context):
        return {"answer": " ".join(item.text for item in context.items)}
"""
CONFIG = """
system: {name: s, version: "1", rag: {object: "app:Staged"}}
dataset: cases.jsonl
policy: policy.yaml
evaluators:
  - {type: contains, criterion: answered, field: answer, expected_field: answer}
"""


def test_bumping_it_after_the_index_changed_runs_both_stages_again(tmp_path: Path) -> None:
    cases = (
        {"id": f"q{i}", "input": {"q": f"q{i}"}, "expected": {"answer": "new"}} for i in (0, 1)
    )
    policy = "version: 1\nrules:\n  - {id: answers, metric: answered, min: 0.5}\n"
    root = write_project(tmp_path / "p", app=APP, config=CONFIG, policy=policy, cases=cases)
    index = root / "index.json"
    index.write_text(json.dumps({"kb-01": "old"}))
    first = oloproof("run", cwd=root)
    assert "Stages: retrieve 0 hit/2 miss; generate 0 hit/2 miss" in first.lines, first.err
    index.write_text(json.dumps({"kb-01": "new"}))
    app = root / "app.py"
    app.write_text(app.read_text().replace('version="1"', 'version="2"'))

    dry = oloproof("run", "--dry-run", cwd=root)
    changed = "the name or version its decorator declares changed"
    assert f"  2 retrievals: {changed}" in dry.lines, dry.out
    rerun = oloproof("run", cwd=root)
    assert "Cache: execution 0 hit/2 miss; judgment 0 hit/2 miss" in rerun.lines, rerun.out
    assert "Stages: retrieve 0 hit/2 miss; generate 0 hit/2 miss" in rerun.lines, rerun.out
