"""A replay confirms a RANKED_OUT label only where it showed the model a relevant passage.

Through the real CLI, on BM25 (bm25s) over the docstrings of standard-library modules (the
corpus of ``test_diagnose_stdlib_corpus``), with a model that sometimes knows the answer
without any passage (an LLM answering from what it was trained on, made repeatable: it knows
on the calls of a question a set lists, and otherwise answers from its context). "Confirmed"
counted every RANKED_OUT case that passed under a wider cut, also those whose relevant passage
the cut still left out: a pass that had nothing to do with the passage the label is about was
read as confirming that the cut had hidden it.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.test_diagnose_stdlib_corpus import (
    diagnosis_address,
    line,
    loaded,
    module,
    ok,
    own_question,
    project,
    run,
    verified,
    write_cases,
)
from tests.support import diagnosis_release, oloproof

__all__ = ["loaded"]  # the fixture, used by name

KNOWS = '''

KNOWN = Path(__file__).with_name("known.json")


class Knows(Extractive):
    """Knows every answer on the calls of a question that RIGHT_ON lists, context or none."""

    def generate(self, input, context):
        if call_number(input["question"]) in RIGHT_ON:
            return {"answer": json.loads(KNOWN.read_text())[input["question"]], "citations": []}
        return Extractive.generate(self, input, context)
'''


def earlier(root: Path, *args: str) -> list[str]:
    """``oloproof ARGS`` as the release before this check runs it."""
    done = oloproof(*args, cwd=root, timeout=300, command=diagnosis_release(7))
    assert done.code == 0, done.out + done.err
    return done.lines


GOLD = ("--intervention", "gold-context", "--criterion", "answer_correct")
TOP_K_2 = ("--intervention", "top-k", "--top-k", "2", "--criterion", "answer_correct")


def test_a_pass_without_the_relevant_passage_confirms_nothing(tmp_path: Path, loaded: None) -> None:
    # Calls 2 to 5 of each question are the earlier release's gold run, its control, its top-k
    # run and its control; 6 to 9 today's. The model knows the answers in the top-k runs only.
    root = project(tmp_path / "p", right_on="{4, 8}")
    app_file = root / "app.py"
    app_file.write_text(app_file.read_text() + KNOWS)
    config = root / "oloproof.yaml"
    config.write_text(
        config.read_text()
        .replace("app:Extractive", "app:Knows")
        .replace('index_version: "40"', 'index_version: "40", top_k: 1')
        .replace("k: 3", "k: 1")
    )
    corpus, app = module(root, "corpus"), module(root, "app")
    cases = []
    for rank in (2, 3, 5):  # below the run's cut of 1; a cut of 2 reaches the first only
        skip = frozenset(str(c["id"]) for c in cases)
        cases.append(own_question(corpus, app, rank=rank, skip=skip))
    write_cases(root, cases)
    known = {c["input"]["question"]: c["expected"]["answer"] for c in cases}
    (root / "known.json").write_text(json.dumps(known))
    run_id = run(root)
    # The earlier release confirmed all three.
    assert earlier(root, "diagnose", run_id, *GOLD)[2:4] == [
        "Recovered under gold context: 3 of 3",
        "RANKED_OUT: 3 of 3, recovered; relevant evidence was retrieved below the top-k cut",
    ]
    before = earlier(root, "diagnose", run_id, *TOP_K_2)
    assert before[2:4] == [
        "Recovered under top-k 2: 3 of 3",
        "Confirmed under top-k 2: 3 of 3 RANKED_OUT cases also recovered",
    ]
    gold = ok(root, "diagnose", run_id, *GOLD)
    assert gold[1:4] == [
        "Control: 0 of 3 passed when re-executed without the intervention",
        "Recovered under gold context: 3 of 3",
        "RANKED_OUT: 3 of 3, recovered; relevant evidence was retrieved below the top-k cut",
    ]
    lines = ok(root, "diagnose", run_id, *TOP_K_2)
    assert lines[:4] == [
        "Selected: 3 failed cases with gold context (observed; no population claim)",
        "Control: 0 of 3 passed when re-executed without the intervention",
        "Recovered under top-k 2: 3 of 3",
        "Confirmed under top-k 2: 1 of 3 RANKED_OUT cases also recovered; 2 more recovered "
        "with no relevant passage in the context, which confirms nothing",
    ]
    assert line(lines, "Labels from gold context").endswith(
        f"{diagnosis_address(gold)}): 3 of 3 recovered"
    )
    diagnosis = diagnosis_address(lines)
    summary = json.loads("\n".join(ok(root, "inspect", diagnosis, "--json")))["body"]["summary"]
    assert (summary["ranked_out"], summary["confirmed"], summary["ranked_out_not_shown"]) == (
        3,
        1,
        2,
    )
    verified(root, diagnosis)
    # The earlier release's diagnosis re-derives as it was made.
    verified(root, diagnosis_address(before))
