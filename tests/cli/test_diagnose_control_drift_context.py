"""A gold-context control that assembles another context than the run did is reported too.

Through the real CLI. The labels read where the run's relevant passage was: in its context,
dropped from it by the token budget, or below the cut. A tokenizer reads its vocabulary from a
file (a tokenizer.json, a BPE file), which no code fingerprint covers; when that file changes
after the run, the control retrieves exactly what the run did yet assembles another context,
and CONTEXT_ASSEMBLY_LOSS ("relevant evidence within top-k was left out of the context",
"Implicated: context budget") would describe a budget the re-executed control no longer
applied: here its context held the relevant passage, and it still failed. Such a control
drifted as one that retrieves differently does. A tokenizer that counts otherwise but keeps the
same passages changes nothing the labels read, and is no drift.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.support import assert_diagnosis_verified, diagnosis_release, normalise, oloproof

A = ["kb-A", "Refunds are reviewed within two business days."]  # 7 words
B = ["kb-B", "Refunds reviewed by billing are paid to the card."]  # 9 words

APP = f"""
import json
from pathlib import Path

from oloproof import Context, Passage, Retrieval, rag_system

HERE = Path(__file__).parent


@rag_system(name="tokens", version="1", depth=4, top_k=2, token_budget=12)
class Tokens:
    def retrieve(self, input, depth):
        return Retrieval(query=input["question"], depth=depth, candidates=tuple(
            Passage(doc_id=doc_id, text=text) for doc_id, text in [{B!r}, {A!r}]
        ))

    def generate(self, input, context: Context):
        # Answers from the first passage it is given.
        return {{"answer": context.items[0].text if context.items else "unknown"}}

    def count_tokens(self, passage):
        # The vocabulary is a file: editing it changes no fingerprint.
        per_word = json.loads((HERE / "tokenizer.json").read_text())["per_word"]
        return int(len(passage.text.split()) * per_word)
"""

CONFIG = """
system: {name: tokens, version: "1", rag: {object: app:Tokens}}
dataset: cases.jsonl
evaluators:
  - {type: contains, criterion: answer_correct, field: answer, expected_field: answer}
"""

CASE = {
    "id": "refund",
    "input": {"question": "When are refunds reviewed?"},
    "expected": {
        "answer": "two business days",
        "relevant": [{"doc_id": "kb-A"}],
        "gold_context": [{"doc_id": A[0], "text": A[1]}],
    },
}


def diagnosed(
    root: Path, per_word: float, command: tuple[str, ...] = ("-m", "oloproof")
) -> list[str]:
    """The gold-context diagnosis of a run made with one token per word, made (by ``command``)
    after the tokenizer's file changed to ``per_word``; checked by ``verify``."""
    root.mkdir()
    (root / "app.py").write_text(APP)
    (root / "oloproof.yaml").write_text(CONFIG)
    (root / "cases.jsonl").write_text(json.dumps(CASE) + "\n")
    tokenizer = root / "tokenizer.json"
    tokenizer.write_text(json.dumps({"per_word": 1}))
    done = oloproof("run", cwd=root)
    assert done.code == 0, done.out + done.err
    tokenizer.write_text(json.dumps({"per_word": per_word}))
    diagnosis = oloproof(
        "diagnose", "latest", "--intervention", "gold-context", "--criterion", "answer_correct",
        cwd=root, command=command,
    )  # fmt: skip
    assert diagnosis.code == 0, diagnosis.out + diagnosis.err
    address = diagnosis.out.split("Diagnosis ")[1].split()[0]
    assert_diagnosis_verified(root, address)
    shown = oloproof("inspect", address, cwd=root)
    assert shown.code == 0, shown.err
    return normalise(diagnosis.out + shown.out).splitlines()


# What a diagnosis of one failed case says when its control drifted and gold context recovered
# it (test_diagnose_parent_repeats_retrieved_differently reads it too).
DRIFTED_AND_RECOVERED = [
    "Selected: 1 failed case with gold context (observed; no population claim)",
    "Control: 0 of 1 passed when re-executed without the intervention",
    "Drifted: 1 of 1, the control retrieved or assembled other passages than the run did, "
    "so the system re-executed is not the one that ran (an index, a tokenizer or another "
    "file outside its fingerprint changed, or its retriever is not deterministic); no stage "
    "is read from the run's retrieval or context for them",
    "Recovered under gold context: 1 of 1",
    "UNRESOLVED: 1 of 1, recovered, but the control retrieved or assembled other passages "
    "than the run did, so the run's retrieval and context no longer tell which stage failed",
]


def test_a_control_given_another_context_drifted(tmp_path: Path) -> None:
    # The run kept kb-B (9 tokens) and dropped kb-A (7) by the budget of 12; at half a token a
    # word the control keeps both, answers from kb-B and fails all the same.
    lines = diagnosed(tmp_path / "p", 0.5)
    assert lines[:5] == DRIFTED_AND_RECOVERED
    assert not any(line.startswith("Implicated") for line in lines)
    assert (
        "refund: UNRESOLVED, control_retrieval_drifted, strength intervention_recovery, best "
        "relevant position 2"
    ) in lines


@pytest.mark.parametrize("per_word", [1, 0.9])
def test_a_control_given_the_same_passages_did_not_drift(tmp_path: Path, per_word: float) -> None:
    # At 0.9 a word kb-B counts 8 tokens, not 9: kb-A still does not fit, so the control is
    # handed the very passages the run was.
    lines = diagnosed(tmp_path / "p", per_word)
    assert not any(line.startswith("Drifted") for line in lines)
    assert lines[2:4] == [
        "Recovered under gold context: 1 of 1",
        "CONTEXT_ASSEMBLY_LOSS: 1 of 1, recovered; relevant evidence within top-k was left out "
        "of the context",
    ]


def test_a_diagnosis_recorded_before_re_derives_as_it_was_made(tmp_path: Path) -> None:
    lines = diagnosed(tmp_path / "p", 0.5, command=diagnosis_release(10))
    assert lines[2:4] == [
        "Recovered under gold context: 1 of 1",
        "CONTEXT_ASSEMBLY_LOSS: 1 of 1, recovered; relevant evidence within top-k was left out "
        "of the context",
    ]
