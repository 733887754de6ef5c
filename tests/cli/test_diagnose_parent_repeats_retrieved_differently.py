"""A gold-context control is compared with every repeat of the run, not with its first alone.

Through the real CLI, on BM25 (bm25s) over a small corpus. A run made with ``--repeats`` whose
retriever does not return the same thing twice holds its own evidence against the first
repeat's positions: here its first repeat ranked the relevant chunk second (below a top_k of
1) and its second handed the model that very chunk first, and the case failed both times. A
control that happened to retrieve as the first repeat did read as no drift, so the case was
labelled ``RANKED_OUT: 1 of 1, recovered; relevant evidence was retrieved below the top-k
cut`` with ``Implicated: the top-k cut``, although the run had shown the passage to the model
and failed. Such a control drifted, as one that retrieves differently from a run made once
does.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.test_diagnose_control_drift_context import DRIFTED_AND_RECOVERED
from tests.support import assert_diagnosis_verified, diagnosis_release, normalise, oloproof

CORPUS = [
    ["warranty", "c0", "The warranty covers manufacturing defects for two years from purchase."],
    ["warranty", "c1", "Accidental damage is not covered by the warranty at all."],
    ["support", "c0", "Support is reachable by phone on weekdays from nine to five."],
    ["shipping", "c0", "Standard shipping takes five business days within the country."],
]

# Every other call, an approximate index ranks c1 first.
FLIP = """
        if calls("retrieved") % 2:
            ranked.sort(key=lambda p: p.chunk_id != "c1")
"""


def app(twist: str) -> str:
    """The system: BM25 over ``CORPUS`` at depth 3, top_k 1, its ranking then changed by
    ``twist`` (code in ``retrieve``, which may call ``calls``); a model that answers from its
    context but for one bad draw, its second call."""
    return APP.replace("        # twist\n", twist.lstrip("\n"))


APP = f"""
from pathlib import Path

import bm25s

from oloproof import Passage, Retrieval, rag_system

HERE = Path(__file__).parent
CORPUS = {CORPUS!r}


def calls(name):
    \"\"\"How many times ``name`` was called before (counted in a file beside the app).\"\"\"
    counter = HERE / name
    done = int(counter.read_text()) if counter.exists() else 0
    counter.write_text(str(done + 1))
    return done


@rag_system(name="flip", version="1", depth=3, top_k=1)
class Flip:
    def retrieve(self, input, depth):
        index = bm25s.BM25()
        texts = [text for _, _, text in CORPUS]
        index.index(bm25s.tokenize(texts, stopwords="en", show_progress=False), show_progress=False)
        query = bm25s.tokenize([input["question"]], stopwords="en", show_progress=False)
        found, scores = index.retrieve(query, k=depth, show_progress=False)
        ranked = [
            Passage(doc_id=CORPUS[i][0], chunk_id=CORPUS[i][1], score=float(s), text=CORPUS[i][2])
            for i, s in zip(found[0], scores[0], strict=True)
        ]
        # twist
        return Retrieval(query=input["question"], depth=depth, candidates=tuple(ranked))

    def generate(self, input, context):
        if calls("generated") == 1:  # the model's one bad draw
            return {{"answer": "I do not know"}}
        return {{"answer": " ".join(p.text for p in context.items)}}
"""

CONFIG = """
system: {name: flip, version: "1", rag: {object: app:Flip}}
dataset: cases.jsonl
concurrency: 1
evaluators:
  - {type: contains, criterion: answer_correct, field: answer, expected_field: answer}
  - {type: hit_rate, k: 1, relevance_unit: chunk}
"""

CASE = {
    "id": "damage",
    "input": {"question": "warranty defects"},
    "expected": {
        "answer": "Accidental damage",
        "relevant": [{"doc_id": "warranty", "chunk_id": "c1"}],
        "gold_context": [{"doc_id": "warranty", "chunk_id": "c1", "text": CORPUS[1][2]}],
    },
}


def diagnosed(root: Path, command: tuple[str, ...] = ("-m", "oloproof")) -> list[str]:
    """The gold-context diagnosis (made by ``command``) of a run of two repeats whose first
    ranked the relevant chunk second and whose second ranked it first; checked by
    ``verify``."""
    root.mkdir()
    (root / "app.py").write_text(app(FLIP))
    (root / "oloproof.yaml").write_text(CONFIG)
    (root / "cases.jsonl").write_text(json.dumps(CASE) + "\n")
    done = oloproof("run", "--repeats", "2", cwd=root)
    assert done.code == 0, done.out + done.err
    shown = oloproof("inspect", "latest", "--case", "damage", "--json", cwd=root)
    repeats = json.loads(shown.out)["repeats"]
    # Failed in both repeats, once with the relevant chunk in the model's context.
    assert [r["verdicts"]["answer_correct"]["s"] for r in repeats] == ["fail", "fail"]
    assert [r["verdicts"]["hit_rate_at_1"]["s"] for r in repeats] == ["fail", "pass"]
    diagnosis = oloproof(
        "diagnose", "latest", "--intervention", "gold-context", "--criterion", "answer_correct",
        cwd=root, command=command,
    )  # fmt: skip
    assert diagnosis.code == 0, diagnosis.out + diagnosis.err
    address = diagnosis.out.split("Diagnosis ")[1].split()[0]
    assert_diagnosis_verified(root, address)
    return normalise(diagnosis.out).splitlines()


def test_a_control_that_retrieved_as_only_one_repeat_of_the_run_did_drifted(
    tmp_path: Path,
) -> None:
    lines = diagnosed(tmp_path / "p")
    assert lines[:5] == DRIFTED_AND_RECOVERED
    assert not any(line.startswith(("RANKED_OUT", "Implicated")) for line in lines)


def test_a_diagnosis_recorded_before_re_derives_as_it_was_made(tmp_path: Path) -> None:
    lines = diagnosed(tmp_path / "p", command=diagnosis_release(11))
    assert lines[2:4] == [
        "Recovered under gold context: 1 of 1",
        "RANKED_OUT: 1 of 1, recovered; relevant evidence was retrieved below the top-k cut",
    ]
