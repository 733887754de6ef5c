"""A diagnosis of a system whose generate never reads its context is refused, not labelled.

Through the real CLI, on BM25 (bm25s) over the docstrings of standard-library modules (the
corpus of ``test_diagnose_stdlib_corpus``), with a system written the way a wrapped pipeline
often is: ``retrieve`` keeps its hits on ``self``, and ``generate`` answers from them, never
from the ``context`` it is handed. Gold context then handed generate passages it never read,
both roles failed alike, and every case was labelled GENERATION_FAILURE ("still failed with
the gold context"): a stage blamed on evidence the model never saw.
"""

from __future__ import annotations

from pathlib import Path

from tests.cli.test_diagnose_stdlib_corpus import (
    loaded,
    module,
    own_question,
    project,
    run,
    write_cases,
)
from tests.support import oloproof

from oloproof.systems.context_use import ignores_context

__all__ = ["loaded"]  # the fixture, used by name

STATEFUL = '''

class Stateful(Extractive):
    """retrieve keeps its best hit; generate answers from it, whatever context it is given."""

    def retrieve(self, input, depth):
        found = Extractive.retrieve(self, input, depth)
        self.hits = [(p.doc_id, p.text or "") for p in found.candidates[:1]]
        return found

    def generate(self, input, context):
        return answer(input["question"], self.hits)
'''

RERANK = """
def reverse(input, candidates):
    return list(reversed(candidates))
"""

REFUSED = (
    "error: oloproof diagnose: --intervention {kind} cannot change answer_correct: "
    "app:Stateful.generate never reads its context parameter, so what an intervention hands "
    "it never reaches its answer (it answers from something else, such as what retrieve left "
    "behind); make generate answer from its context, run again and diagnose the new run"
)


def test_an_intervention_on_a_context_generate_never_reads_is_refused(
    tmp_path: Path, loaded: None
) -> None:
    root = project(tmp_path / "p")
    (root / "app.py").write_text((root / "app.py").read_text() + STATEFUL)
    (root / "rerank.py").write_text(RERANK)
    config = root / "oloproof.yaml"
    config.write_text(config.read_text().replace("app:Extractive", "app:Stateful"))
    corpus, app = module(root, "corpus"), module(root, "app")
    second = own_question(corpus, app, rank=2)
    third = own_question(corpus, app, rank=3, skip=frozenset({second["id"]}))
    write_cases(root, [second, third])
    run_id = run(root)
    # Both failed: the generator answered from the first hit alone. Given its gold passage it
    # answers right (own_question makes each case so), but this generate is never given it.
    failed = oloproof("inspect", run_id, "--failures", cwd=root)
    assert second["id"] in failed.out and third["id"] in failed.out, failed.out
    before = oloproof("runs", "--all", cwd=root).out

    for kind, extra in (("gold-context", ()), ("top-k", ("--top-k", "5"))):
        done = oloproof(
            "diagnose",
            run_id,
            "--intervention",
            kind,
            *extra,
            "--criterion",
            "answer_correct",
            cwd=root,
        )
        assert (done.code, done.out) == (2, ""), done.out + done.err
        assert done.err.strip() == REFUSED.format(kind=kind)
    # Nothing was written: no child run, no diagnosis.
    assert oloproof("runs", "--all", cwd=root).out == before

    # A ranking criterion reads no answer: a reranker still moves it, and runs.
    done = oloproof(
        "diagnose",
        run_id,
        "--intervention",
        "reranker",
        "--reranker",
        "rerank:reverse",
        "--criterion",
        "hit_rate_at_3",
        cwd=root,
    )
    assert done.code == 0, done.out + done.err


class _Reads:
    def generate(self, input, context):  # type: ignore[no-untyped-def]
        return helper(input, context)


class _Ignores:
    def generate(self, input, context):  # type: ignore[no-untyped-def]
        return {"answer": input["question"]}


class _Varargs:
    def generate(self, *args):  # type: ignore[no-untyped-def]
        return {"answer": ""}


def helper(input: object, context: object) -> dict[str, str]:
    return {"answer": str(context)}


def test_only_a_generate_that_certainly_never_loads_its_context_ignores_it() -> None:
    assert ignores_context(_Ignores, frozenset())
    assert not ignores_context(_Ignores, frozenset({"locals"}))  # it may read it another way
    assert not ignores_context(_Reads, frozenset())
    assert not ignores_context(_Varargs, frozenset())
