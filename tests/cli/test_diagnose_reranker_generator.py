"""A reranker that returns a generator runs its code where the reranker runs, never on the loop.

Through the real CLI, on BM25 (bm25s) over the docstrings of standard-library modules (the
corpus of ``test_diagnose_stdlib_corpus``). Iterating a generator runs the reranker's own code:
done on the event loop that every case of the child run shares, one case whose reranker hangs
there held up the cases beside it, which were recorded as timed out although their reranker
returned at once, and its own error blamed "blocking code in an async system" on a system that
has none.
"""

from __future__ import annotations

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
    write_cases,
)
from tests.support import oloproof

__all__ = ["loaded"]  # the fixture, used by name

RERANKERS = '''
import time


def reversed_lazily(input, candidates):
    """Reverses the ranking as a generator, and hangs on one question while producing it."""
    if input["question"] == {question!r}:
        time.sleep(600)
    yield from reversed(candidates)
'''


def test_a_reranker_generator_that_hangs_errors_its_own_case_alone(
    tmp_path: Path, loaded: None
) -> None:
    root = project(tmp_path / "p")
    config = root / "oloproof.yaml"
    config.write_text(config.read_text().replace("concurrency: 1", "concurrency: 3\ntimeout_s: 3"))
    corpus, app = module(root, "corpus"), module(root, "app")
    cases: list[dict[str, object]] = []
    for rank in (4, 5, 6):  # each case's passage below the cut of 3: the run fails them
        skip = frozenset(str(c["id"]) for c in cases)
        cases.append(own_question(corpus, app, rank=rank, skip=skip))
    write_cases(root, cases)
    hanging = cases[1]
    question = hanging["input"]["question"]  # type: ignore[index]
    (root / "rerank.py").write_text(RERANKERS.format(question=question))
    run_id = run(root)
    lines = ok(
        root,
        "diagnose",
        run_id,
        "--intervention",
        "reranker",
        "--reranker",
        "rerank:reversed_lazily",
        "--criterion",
        "answer_correct",
    )
    assert line(lines, "Selected: ").startswith("Selected: 3 failed cases")
    # Only the case whose reranker hung went unobserved.
    assert line(lines, "UNRESOLVED: ") == (
        "UNRESOLVED: 1 of 3, the intervention gave no verdict (errored or missing)"
    )
    shown = ok(root, "inspect", diagnosis_address(lines))
    assert [text.split(": under ")[0] for text in shown if "intervention_not_observed" in text] == [
        hanging["id"]
    ]
    reranked = line(lines, "Child runs: ").split()[4].rstrip(",")
    failures = oloproof("inspect", reranked, "--failures", cwd=root).out
    assert "errored: TimeoutError: the case took longer than 3 s\n" in failures
    assert "held up the event loop" not in failures
    assert failures.count("errored:") == 1
