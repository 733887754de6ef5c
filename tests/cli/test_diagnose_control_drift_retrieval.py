"""A gold-context control that retrieves differently from the run is reported, not hidden.

Through the real CLI. The gold-context control re-executes the whole system, retrieval
included; when what it retrieves is not what the run retrieved, the system re-executed is not
the one that ran, and the labels read from the run's retrieval ("no relevant evidence was
retrieved") may describe a system that no longer exists. Two ways it happens, each made
deterministic: the retriever reads its index from a file outside the code fingerprint, edited
after the run; or the retriever does not return the same thing twice (the second call onwards,
counted in a file, finds one passage more). Either way the output counts the drifted controls,
and a recovered case gets no stage label; one that fails with the gold passages, which reads no
retrieval, is still a generation failure.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.support import normalise, oloproof

A = ["kb-A", "Refunds are reviewed within two business days."]
B = ["kb-B", "Refunds reviewed by billing are paid to the card."]

GENERATE = """
    def generate(self, input, context: Context):
        # Answers from the first passage it is given.
        return {"answer": context.items[0].text if context.items else "unknown"}
"""

CORPUS_APP = (
    """
import json
from pathlib import Path

from oloproof import Context, Passage, Retrieval, rag_system

HERE = Path(__file__).parent


@rag_system(name="corpus", version="1", depth=4, top_k=2)
class Corpus:
    def retrieve(self, input, depth):
        # The index is a file: editing it changes no fingerprint.
        corpus = json.loads((HERE / "corpus.json").read_text())
        return Retrieval(query=input["question"], depth=depth, candidates=tuple(
            Passage(doc_id=doc_id, text=text) for doc_id, text in corpus
        ))
"""
    + GENERATE
)

UNSTEADY_APP = (
    f"""
from pathlib import Path

from oloproof import Context, Passage, Retrieval, rag_system

CALLS = Path(__file__).parent / "retrieve_calls.txt"


@rag_system(name="unsteady", version="1", depth=4, top_k=2)
class Unsteady:
    def retrieve(self, input, depth):
        # An approximate index, made deterministic: from its third call on (the run's two cases
        # had the first two), it also finds kb-A.
        n = int(CALLS.read_text()) + 1 if CALLS.exists() else 1
        CALLS.write_text(str(n))
        found = [{B!r}] + ([{A!r}] if n > 2 else [])
        return Retrieval(query=input["question"], depth=depth, candidates=tuple(
            Passage(doc_id=doc_id, text=text) for doc_id, text in found
        ))
"""
    + GENERATE
)

CONFIG = """
system: {name: NAME, version: "1", rag: {object: app:CLASS}}
dataset: cases.jsonl
concurrency: 1
evaluators:
  - {type: contains, criterion: answer_correct, field: answer, expected_field: answer}
  - {type: hit_rate, k: 2}
"""


def case(case_id: str, answer: str) -> dict[str, object]:
    return {
        "id": case_id,
        # Questions of their own: two cases with one input would share one execution.
        "input": {"question": f"When are refunds reviewed? ({case_id})"},
        "expected": {
            "answer": answer,
            "relevant": [{"doc_id": "kb-A"}],
            "gold_context": [{"doc_id": A[0], "text": A[1]}],
        },
    }


def drifting_project(root: Path, kind: str) -> Path:
    """A project of ``kind`` run once, its index file (read by ``corpus`` alone) edited since."""
    root.mkdir()
    app, name, cls = (
        (CORPUS_APP, "corpus", "Corpus")
        if kind == "corpus"
        else (UNSTEADY_APP, "unsteady", "Unsteady")
    )
    (root / "app.py").write_text(app)
    (root / "oloproof.yaml").write_text(CONFIG.replace("NAME", name).replace("CLASS", cls))
    cases = [case("hopeless", "thirty days"), case("refund", "two business days")]
    (root / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases))
    corpus = root / "corpus.json"
    corpus.write_text(json.dumps([B]))
    done = oloproof("run", cwd=root)
    assert done.code == 0, done.out + done.err
    corpus.write_text(json.dumps([B, A]))
    return root


DRIFTED_2 = (
    "Drifted: 2 of 2, the control retrieved or assembled other passages than the run did, so "
    "the system re-executed is not the one that ran (an index, a tokenizer or another file "
    "outside its fingerprint changed, or its retriever is not deterministic); no stage is read "
    "from the run's retrieval or context for them"
)


@pytest.mark.parametrize("kind", ["corpus", "unsteady"])
def test_a_control_that_retrieved_differently_is_counted_and_labels_nothing_from_it(
    tmp_path: Path, kind: str
) -> None:
    root = drifting_project(tmp_path / kind, kind)
    done = oloproof(
        "diagnose",
        "latest",
        "--intervention",
        "gold-context",
        "--criterion",
        "answer_correct",
        cwd=root,
    )
    assert done.code == 0, done.out + done.err
    assert normalise(done.out).splitlines() == [
        "Selected: 2 failed cases with gold context (observed; no population claim)",
        "Control: 0 of 2 passed when re-executed without the intervention",
        DRIFTED_2,
        "Recovered under gold context: 1 of 2",
        "GENERATION_FAILURE: 1 of 2, still failed with the gold context",
        "UNRESOLVED: 1 of 2, recovered, but the control retrieved or assembled other passages "
        "than the run did, so the run's retrieval and context no longer tell which stage failed",
        "Diagnosis sha256:…",
        "Child runs: gold context run_…, control run_…",
        "Cases: oloproof inspect sha256:…",
    ]
    address = done.lines[-1].split()[-1]
    inspected = oloproof("inspect", address, cwd=root)
    assert inspected.lines == [
        "hopeless: GENERATION_FAILURE, fails_with_gold_context, strength "
        "intervention_non_recovery, best relevant position none",
        "refund: UNRESOLVED, control_retrieval_drifted, strength intervention_recovery, best "
        "relevant position none",
    ]
    body = json.loads(oloproof("inspect", address, "--json", cwd=root).out)["body"]
    assert body["summary"]["control_drifted"] == 2
    cases = json.loads(
        oloproof(
            "diagnose",
            "latest",
            "--intervention",
            "gold-context",
            "--criterion",
            "answer_correct",
            "--json",
            cwd=root,
        ).out
    )
    assert [c["control_drifted"] for c in cases["diagnosis"]["cases"]] == [True, True]
    verified = oloproof("diagnose", "--verify", address, cwd=root)
    assert verified.code == 0, verified.out
