"""A generate that reads what its retrieve leaves behind (the scores, kept on the instance or in
a module dict), through the real CLI over BM25 (bm25s) on real text: a retrieval taken from the
stage cache runs no retrieve, so such a generate must never be run on one, nor its answer reused
for a retrieval that differs only in its scores.

The corpus is the docstrings of a few standard-library modules, one passage a paragraph. Each
expected answer is worked out here, from the corpus and bm25s, never read from the run.
"""

from __future__ import annotations

import importlib
import json
import re
from pathlib import Path

import bm25s
import pytest
from tests.support import oloproof

MODULES = ("argparse", "heapq", "pprint", "tempfile", "gzip", "uuid", "hashlib", "textwrap")
QUESTIONS = {
    "q1": "parse command-line arguments",
    "q2": "heap queue algorithm priority",
    "q3": "pretty print data structures",
    "q4": "temporary files and directories",
}


def passages() -> list[dict[str, str]]:
    found = []
    for name in MODULES:
        paragraphs = re.split(r"\n\s*\n", importlib.import_module(name).__doc__ or "")
        for n, text in enumerate(p for p in paragraphs if len(p.split()) >= 4):
            found.append({"doc_id": name, "chunk_id": f"c{n}", "text": " ".join(text.split())})
    return found


# Where the scores are kept: on the instance, or in a dict of the module.
KEPT = {
    "instance": ("self.scores = {}", "self.scores"),
    "module": ("pass", "SCORES"),
}

APP = """
import json
from pathlib import Path

import bm25s
from oloproof import Passage, Retrieval, rag_system

DOCS = [json.loads(line) for line in Path(__file__).with_name("corpus.jsonl").open()]
INDEX = bm25s.BM25()
INDEX.index(bm25s.tokenize([d["text"] for d in DOCS], show_progress=False), show_progress=False)
SCORES = {{}}
SCALE = 1.0


@rag_system(name="kept", version="1", depth=4, top_k=2)
class Rag:
    def __init__(self):
        {init}

    def retrieve(self, input, depth):
        query = bm25s.tokenize([input["question"]], show_progress=False)
        found, scores = INDEX.retrieve(query, k=depth, show_progress=False)
        {kept}[input["question"]] = float(scores[0][0]) * SCALE
        return Retrieval(query=input["question"], depth=depth, candidates=tuple(
            Passage(doc_id=DOCS[int(i)]["doc_id"], chunk_id=DOCS[int(i)]["chunk_id"],
                    score=float(s) * SCALE, text=DOCS[int(i)]["text"])
            for i, s in zip(found[0], scores[0], strict=True)
        ))

    def generate(self, input, context):
        top = {kept}.get(input["question"])
        if top is None:
            return {{"answer": "no retrieval score"}}
        return {{"answer": "v1 " + context.items[0].doc_id, "top": round(top, 3)}}
"""

CONFIG = """
system:
  name: kept
  version: "1"
  rag: {object: app:Rag}
dataset: cases.jsonl
concurrency: 2
evaluators:
  - {type: contains, criterion: answered, field: answer, expected_field: answer}
"""


def top_scores(scale: float) -> dict[str, tuple[str, float]]:
    """Each question's best passage and its score, as bm25s ranks the corpus."""
    docs = passages()
    index = bm25s.BM25()
    index.index(bm25s.tokenize([d["text"] for d in docs], show_progress=False), show_progress=False)
    found = {}
    for case_id, question in QUESTIONS.items():
        query = bm25s.tokenize([question], show_progress=False)
        ids, scores = index.retrieve(query, k=4, show_progress=False)
        found[case_id] = (docs[int(ids[0][0])]["doc_id"], round(float(scores[0][0]) * scale, 3))
    return found


def project(root: Path, kept: str) -> Path:
    root.mkdir()
    init, where = KEPT[kept]
    (root / "app.py").write_text(APP.format(init=init, kept=where))
    (root / "oloproof.yaml").write_text(CONFIG)
    (root / "corpus.jsonl").write_text("".join(json.dumps(p) + "\n" for p in passages()))
    cases = (
        {"id": case_id, "input": {"question": q}, "expected": {"answer": "v"}}
        for case_id, q in QUESTIONS.items()
    )
    (root / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases))
    return root


def edit(root: Path, old: str, new: str) -> None:
    app = root / "app.py"
    assert old in app.read_text()
    app.write_text(app.read_text().replace(old, new))


def outputs(root: Path, out: Path) -> dict[str, dict[str, object]]:
    """Each case's output in the latest run."""
    run_id = oloproof("runs", cwd=root).lines[0].split()[0]
    exported = oloproof("export", run_id, "--format", "jsonl", "--output", str(out), cwd=root)
    assert exported.code == 0, exported.err
    rows = [json.loads(line) for line in (out / "cases.jsonl").read_text().splitlines()]
    return {row["case_id"]: json.loads(row["output"]) for row in rows}


def stages_line(out: str) -> str:
    return next(line for line in out.splitlines() if line.startswith("Stages:"))


@pytest.mark.parametrize("kept", sorted(KEPT))
def test_a_generate_reading_what_retrieve_kept_runs_after_retrieve(
    tmp_path: Path, kept: str
) -> None:
    root = project(tmp_path / "p", kept)
    first = oloproof("run", cwd=root)
    assert first.code == 0, first.err
    edit(root, '"v1 "', '"v2 "')  # generate only: its retrieval would otherwise be reused
    second = oloproof("run", cwd=root)
    assert second.code == 0, second.err
    assert stages_line(second.out) == "Stages: retrieve 0 hit/4 miss; generate 0 hit/4 miss"
    expected = {c: {"answer": f"v2 {doc}", "top": top} for c, (doc, top) in top_scores(1).items()}
    assert outputs(root, tmp_path / "out") == expected


def test_a_retrieval_scored_anew_generates_again(tmp_path: Path) -> None:
    """The same passages in the same order under new scores: generate read the scores, so its
    answer made from the old ones is not reused."""
    root = project(tmp_path / "p", "instance")
    assert oloproof("run", cwd=root).code == 0
    edit(root, "SCALE = 1.0", "SCALE = 2.0")
    second = oloproof("run", cwd=root)
    assert second.code == 0, second.err
    assert stages_line(second.out) == "Stages: retrieve 0 hit/4 miss; generate 0 hit/4 miss"
    expected = {c: {"answer": f"v1 {doc}", "top": top} for c, (doc, top) in top_scores(2).items()}
    assert outputs(root, tmp_path / "out") == expected
