"""`oloproof diagnose` on a real retriever over a real corpus, end to end through the CLI.

The project (tests/fixtures/pydocs_rag) searches the ~2,000 passages of the Python
documentation topics that ship with Python with BM25 (bm25s) at depth 20, keeps top_k 5 under a
150-word budget and answers extractively. Its questions come from the corpus itself, so the
retrieval fails in the ways a real one does: the relevant passage first for half of them, lower
down, below the cut, or not at all.

Every count the diagnosis prints is checked against an independent computation made here from
the parent run's exported rankings: the reranker applied by hand, the context assembled by hand
(the documented rule, written out again), the answer computed by the project's own generator.
"""

from __future__ import annotations

import importlib.util
import json
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from tests.support import REPO, oloproof

from oloproof import Passage

FIXTURE = REPO / "tests" / "fixtures" / "pydocs_rag"
ADDRESS = re.compile(r"sha256:[0-9a-f]{64}")
RUN_ID = re.compile(r"run_[0-9A-Z]{26}")
TOP_K, DEPTH, BUDGET = 5, 20, 150


@dataclass(frozen=True)
class Case:
    """One case of the parent run, as its export records it."""

    id: str
    question: str
    answer: str
    relevant: str
    ranking: list[dict[str, Any]]
    verdicts: dict[str, Any]

    def failed(self, criterion: str) -> bool:
        return self.verdicts[criterion]["s"] == "fail"


@dataclass(frozen=True)
class Project:
    path: Path
    run_id: str
    cases: dict[str, Case]

    def module(self, name: str) -> ModuleType:
        """The project's own module ``name`` (its reranker, its generator)."""
        if str(self.path) not in sys.path:
            sys.path.insert(0, str(self.path))
        spec = importlib.util.spec_from_file_location(f"pydocs_{name}", self.path / f"{name}.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module


def ok(*args: str, cwd: Path) -> str:
    done = oloproof(*args, cwd=cwd, timeout=600)
    assert done.code == 0, done.err + done.out
    return done.out


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Project:
    path = tmp_path_factory.mktemp("real") / "pydocs_rag"
    shutil.copytree(FIXTURE, path, ignore=shutil.ignore_patterns("__pycache__", ".oloproof"))
    subprocess.run([sys.executable, "make_cases.py"], cwd=path, check=True, timeout=120)
    done = oloproof("run", cwd=path, timeout=600)
    assert done.code in (0, 1, 3), done.err
    run_id = RUN_ID.findall(done.lines[0])[0]
    ok("export", run_id, cwd=path)
    bundle = path / ".oloproof" / "bundles" / run_id / "cases.jsonl"
    cases = {}
    for line in bundle.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        cases[record["id"]] = Case(
            id=record["id"],
            question=record["input"]["question"],
            answer=record["expected"]["answer"],
            relevant=record["expected"]["relevant"][0]["doc_id"],
            ranking=record["artifacts"]["retrieval/v1"][0]["candidates"],
            verdicts=record["verdicts"],
        )
    return Project(path, run_id, cases)


def words(text: str | None) -> int:
    return len((text or "").split())


def assemble(ranking: list[dict[str, Any]], top_k: int, budget: int) -> list[dict[str, Any]]:
    """The documented context assembly, written out again: the first top_k candidates in
    order, each kept when it still fits the word budget (a passage that does not fit is
    skipped and the next ones are still tried)."""
    kept, used = [], 0
    for candidate in ranking[:top_k]:
        if used + words(candidate.get("text")) <= budget:
            kept.append(candidate)
            used += words(candidate.get("text"))
    return kept


def answers(project: Project, case: Case, context: list[dict[str, Any]]) -> bool:
    """Whether the project's generator, given ``context``, answers the case correctly."""
    generate: Callable[..., dict[str, Any]] = project.module("app").answer
    output = generate(case.question, [(c["doc_id"], c.get("text") or "") for c in context])
    return case.answer.casefold() in output["answer"].casefold()


def line(out: str, prefix: str) -> str:
    found = [text for text in out.splitlines() if text.startswith(prefix)]
    assert len(found) == 1, (prefix, out)
    return found[0]


def count(text: str, prefix: str) -> tuple[int, int]:
    found = re.match(re.escape(prefix) + r": (\d+) of (\d+)", line(text, prefix))
    assert found is not None, text
    return int(found[1]), int(found[2])


def by_case(project: Project, diagnosis: str) -> dict[str, str]:
    """inspect DIAGNOSIS's lines by case id (case ids here contain a colon: ``topic:n``)."""
    out = ok("inspect", diagnosis, cwd=project.path)
    lines: dict[str, str] = {}
    for text in out.splitlines():
        case_id = next(c for c in project.cases if text.startswith(c + ": "))
        lines[case_id] = text
    return lines


def rerank(project: Project, case: Case) -> list[str]:
    function = project.module("rerank").word_overlap
    passages = [Passage(**c) for c in case.ranking]
    return [p.doc_id for p in function({"question": case.question}, passages)]


def test_the_corpus_is_real_and_its_retrieval_fails_in_every_way(project: Project) -> None:
    passages = project.module("corpus").passages()
    assert len(passages) > 1500  # a few thousand passages of real prose
    positions = []
    for case in project.cases.values():
        ids = [c["doc_id"] for c in case.ranking]
        assert len(ids) == DEPTH
        positions.append(ids.index(case.relevant) + 1 if case.relevant in ids else None)
    assert any(p == 1 for p in positions)
    assert any(p is not None and 1 < p <= TOP_K for p in positions)
    assert any(p is not None and p > TOP_K for p in positions)
    assert any(p is None for p in positions)


def test_a_reranker_is_scored_on_its_own_ranking(project: Project) -> None:
    out = ok(
        "diagnose",
        project.run_id,
        *("--intervention", "reranker", "--reranker", "rerank:word_overlap"),
        *("--criterion", "hit_rate_at_5"),
        cwd=project.path,
    )
    failed = [c for c in project.cases.values() if c.failed("hit_rate_at_5")]
    moved_in = {c.id for c in failed if c.relevant in rerank(project, c)[:TOP_K]}
    assert moved_in, "the reranker moves some relevant passages into the top 5"
    assert count(out, "Recovered under reranker rerank:word_overlap") == (
        len(moved_in),
        len(failed),
    )
    # A ranking criterion: what the budget did cannot matter, so nothing is said of it.
    assert "Undone by the token budget" not in out
    diagnosis = ADDRESS.findall(out.splitlines()[-1])[0]
    lines = by_case(project, diagnosis)
    assert set(lines) == {c.id for c in failed}
    for case in failed:
        before = [c["doc_id"] for c in case.ranking]
        after = rerank(project, case)
        shown = f"best relevant position {before.index(case.relevant) + 1 if case.relevant in before else 'none'}"
        if case.relevant in after and after.index(case.relevant) != before.index(case.relevant):
            shown += f", {after.index(case.relevant) + 1} under reranker rerank:word_overlap"
        assert shown + ";" in lines[case.id] or lines[case.id].endswith(shown), lines[case.id]
        assert (": recovered," in lines[case.id]) == (case.id in moved_in)

    # The child run records both rankings: the one it started from, then the reranked one.
    child = RUN_ID.findall(line(out, "Child runs:"))[-2]
    some = sorted(moved_in)[0]
    detail = json.loads(ok("inspect", child, "--case", some, "--json", cwd=project.path))
    recorded = detail["artifacts"]["retrieval/v1"]
    assert [c["doc_id"] for c in recorded[0]["candidates"]] == [
        c["doc_id"] for c in project.cases[some].ranking
    ]
    assert [c["doc_id"] for c in recorded[1]["candidates"]] == rerank(project, project.cases[some])
    assert detail["verdicts"]["hit_rate_at_5"]["s"] == "pass"
    assert ok("diagnose", "--verify", diagnosis, cwd=project.path).startswith(
        f"Diagnosis {diagnosis}: every label"
    )


def admitted_and_dropped(case: Case, top_k: int, budget: int) -> bool:
    """By hand: the relevant passage lies within the wider cut but below the run's own, and
    the budget leaves it out of the context."""
    ids = [c["doc_id"] for c in case.ranking]
    if case.relevant not in ids:
        return False
    position = ids.index(case.relevant) + 1
    if not TOP_K < position <= top_k:
        return False
    return case.relevant not in [c["doc_id"] for c in assemble(case.ranking, top_k, budget)]


def test_a_wider_cut_the_budget_undoes_is_said_so(project: Project) -> None:
    ok("diagnose", project.run_id, "--intervention", "gold-context", *ANSWER, cwd=project.path)
    out = ok(
        "diagnose",
        project.run_id,
        "--intervention",
        "top-k",
        "--top-k",
        "20",
        *ANSWER,
        cwd=project.path,
    )
    failed = [c for c in project.cases.values() if c.failed("answer_correct")]
    undone = {c.id for c in failed if admitted_and_dropped(c, 20, BUDGET)}
    recovered = {c.id for c in failed if answers(project, c, assemble(c.ranking, 20, BUDGET))}
    assert undone, "a wider cut under a 150-word budget drops what it admits"
    assert count(out, "Recovered under top-k 20") == (len(recovered), len(failed))
    assert count(out, "Undone by the token budget") == (len(undone), len(failed))
    assert line(out, "Undone by the token budget").endswith(
        "a relevant passage admitted under top-k 20 was dropped by token_budget "
        "(admitted_then_dropped_by_budget)"
    )
    assert line(out, "Candidate experiment:").startswith(
        "Candidate experiment: a larger token budget at top-k 20 (--intervention token-budget "
        "--token-budget N --top-k 20)"
    )
    lines = by_case(project, ADDRESS.findall(out.splitlines()[-1])[0])
    labelled = {
        case_id for case_id, text in lines.items() if "admitted_then_dropped_by_budget" in text
    }
    assert labelled == undone


def test_a_token_budget_replay_tests_the_larger_budget(project: Project) -> None:
    ok("diagnose", project.run_id, "--intervention", "gold-context", *ANSWER, cwd=project.path)
    out = ok(
        "diagnose",
        project.run_id,
        *("--intervention", "token-budget", "--token-budget", "2000", "--top-k", "20"),
        *ANSWER,
        cwd=project.path,
    )
    failed = [c for c in project.cases.values() if c.failed("answer_correct")]
    recovered = {c.id for c in failed if answers(project, c, assemble(c.ranking, 20, 2000))}
    assert recovered, "with room for all 20 passages some answers come right"
    assert count(out, "Recovered under token-budget 2000 top-k 20") == (
        len(recovered),
        len(failed),
    )
    # It carries the gold-context labels forward, like the other replays.
    assert line(out, "Labels from gold context (diagnosis sha256:")
    assert "Confirmed under token-budget 2000 top-k 20: " in out
    assert "token-budget 2000 top-k 20 run_" in line(out, "Child runs:")
    diagnosis = ADDRESS.findall(out.splitlines()[-1])[0]
    lines = by_case(project, diagnosis)
    assert {c for c, text in lines.items() if ": recovered," in text} == recovered
    ok("diagnose", "--verify", diagnosis, cwd=project.path)


def test_every_control_generates_afresh(project: Project) -> None:
    out = ok(
        "diagnose",
        project.run_id,
        "--intervention",
        "top-k",
        "--top-k",
        "10",
        *ANSWER,
        cwd=project.path,
    )
    n = count(out, "Recovered under top-k 10")[1]
    control = RUN_ID.findall(line(out, "Child runs:"))[-1]
    report = json.loads(ok("inspect", control, "--json", cwd=project.path))
    # Nothing comes from a cache: every execution is made by the control itself, once per
    # distinct input (cases whose questions repeat share it, counted as shared).
    hit, made, shared = report["cache"]["execution"]
    assert hit == 0 and made + shared == n and made > 0
    assert report["stages"] == {"retrieve": [0, 0], "generate": [0, made]}


def test_gold_context_cannot_change_a_ranking_metric(project: Project) -> None:
    before = ok("runs", "--json", cwd=project.path)
    done = oloproof(
        "diagnose",
        project.run_id,
        "--intervention",
        "gold-context",
        "--criterion",
        "hit_rate_at_5",
        cwd=project.path,
    )
    assert done.code == 2
    assert done.out == ""
    assert done.err.strip() == (
        "error: oloproof diagnose: --intervention gold-context cannot change hit_rate_at_5: it "
        "replaces the context the model is given and never touches the retrieval, and "
        "hit_rate_at_5 scores the ranking alone. The intervention that can: reranker "
        "(--intervention reranker --reranker module:function)"
    )
    assert ok("runs", "--json", cwd=project.path) == before


ANSWER = ("--criterion", "answer_correct")
