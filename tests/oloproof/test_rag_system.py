"""Staged RAG systems: context assembly, stage caches, settings, errors and staged slices.

Every run here is real: the test systems are written into a temp folder, planned from their own
oloproof.yaml and executed into a real ledger there (through ``plan_run`` + ``execute_run``, or
the CLI in a subprocess where the exit code and the printed lines are the point). Each system
appends one line per stage call to ``calls.log`` beside it, so a test can tell a cache hit from
a call the system really received.
"""

from __future__ import annotations

import asyncio
import importlib.util
import inspect
import json
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from tests.support import oloproof

from oloproof.metrics import case_results
from oloproof.report import RunReport
from oloproof.runner import execute_run, plan_run
from oloproof.sdk import Context, Passage, Retrieval
from oloproof.store import open_project_ledger
from oloproof.systems.rag import assemble_context

# A knowledge base whose passages are 1 to 6 words long: count_tokens counts words.
KB_AND_BASE = """
import asyncio
from pathlib import Path

from oloproof import Passage, Retrieval, rag_system

KB = {
    "d1": "alpha",
    "d2": "bravo bravo",
    "d3": "charlie charlie charlie",
    "d4": "delta delta delta delta",
    "d5": "echo echo echo echo echo",
    "d6": "foxtrot foxtrot foxtrot foxtrot foxtrot foxtrot",
}
LOG = Path(__file__).with_name("calls.log")


def log(what):
    with LOG.open("a") as f:
        f.write(what + "\\n")


def search(question, ranking, depth):
    log(f"retrieve {question} depth={depth}")
    return Retrieval(
        query=question,
        depth=depth,
        candidates=[Passage(doc_id=d, text=KB[d]) for d in ranking[:depth]],
    )


def answer(question, context):
    log(f"generate {question}")
    return {
        "answer": " ".join(item.text for item in context.items),
        "citations": [item.doc_id for item in context.items],
    }


class Base:
    def retrieve(self, input, depth):
        return search(input["question"], input["ranking"], depth)

    def generate(self, input, context):
        return answer(input["question"], context)

    def count_tokens(self, passage):
        log("count_tokens " + passage.doc_id)
        return len(passage.text.split())
"""

APP = (
    KB_AND_BASE
    + '''

@rag_system(name="staged", version="1", depth=4, top_k=2, index_version="kb-1")
class Sync(Base):
    """Both stages are plain methods."""


@rag_system(name="staged", version="1", depth=4, top_k=2, index_version="kb-1")
class Async(Base):
    """Both stages are coroutines; they await before answering."""

    async def retrieve(self, input, depth):
        await asyncio.sleep(0)
        return search(input["question"], input["ranking"], depth)

    async def generate(self, input, context):
        await asyncio.sleep(0)
        return answer(input["question"], context)


@rag_system(name="staged", version="1", depth=4, top_k=2, index_version="kb-1")
class Left(Base):
    """Inherits retrieve and generate unchanged."""


@rag_system(name="staged", version="1", depth=4, top_k=2, index_version="kb-1")
class Right(Base):
    """Inherits the same retrieve and generate as Left."""


@rag_system(name="staged", version="1", depth=2, top_k=1, index_version="decorator")
class Narrow(Base):
    """Settings that oloproof.yaml overrides."""


class Undecorated(Base):
    """Has both stages but was never declared with @rag_system."""


@rag_system(name="staged", version="1", depth=4, top_k=2)
class Malformed(Base):
    """Returns document ids where passages belong, for one case."""

    def retrieve(self, input, depth):
        if input["question"] == "broken":
            return {"query": "broken", "candidates": ["d1", "d2"]}
        return super().retrieve(input, depth)


@rag_system(name="staged", version="1", depth=2, top_k=1)
class Greedy(Base):
    """Ignores the depth it is asked for: returns its whole ranking."""

    def retrieve(self, input, depth):
        return search(input["question"], input["ranking"], len(input["ranking"]))
'''
)

# (id, ranking the retriever returns, relevant doc ids or None for no labels)
CASES: list[tuple[str, list[str], list[str] | None]] = [
    ("first", ["d1", "d2", "d3", "d4"], ["d1"]),
    ("second", ["d2", "d3", "d1", "d4"], ["d3"]),
    ("cut_off", ["d4", "d5", "d2", "d1"], ["d2"]),
    ("missing", ["d1", "d2", "d3", "d4"], ["d6"]),
    ("unlabelled", ["d3", "d1", "d2", "d4"], None),
]


def case_line(case_id: str, ranking: list[str], relevant: list[str] | None) -> dict[str, Any]:
    expected: dict[str, Any] = {"answer": "a"}
    if relevant is not None:
        expected["relevant"] = [{"doc_id": d} for d in relevant]
    return {"id": case_id, "input": {"question": case_id, "ranking": ranking}, "expected": expected}


def write_project(
    root: Path,
    obj: str = "Sync",
    cases: list[dict[str, Any]] | None = None,
    **settings: Any,
) -> Path:
    """A project folder with the test systems, the cases and an oloproof.yaml for ``obj``."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "staged_app.py").write_text(APP)
    lines = cases if cases is not None else [case_line(*c) for c in CASES]
    (root / "cases.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    set_system(root, obj, **settings)
    return root


def set_system(root: Path, obj: str, **settings: Any) -> None:
    """(Re)write oloproof.yaml so that ``system.rag`` names ``obj`` with ``settings``."""
    config = {
        "system": {
            "name": "staged",
            "version": "1",
            "rag": {"object": f"staged_app:{obj}", **settings},
        },
        "dataset": "cases.jsonl",
        "evaluators": [
            {"type": "contains", "criterion": "answer_correct"},
            {"type": "hit_rate", "k": 2},
        ],
        # context_truncated only with a budget to truncate (a slice of one value is refused).
        "slices": [
            "relevant_position",
            *(["context_truncated"] if settings.get("token_budget") else []),
        ],
        "min_slice_support": 1,
        "concurrency": 2,
    }
    (root / "oloproof.yaml").write_text(yaml.safe_dump(config, sort_keys=False))


def calls(root: Path) -> Counter[str]:
    """How many times each stage was really called, by stage name; the log is then cleared."""
    log = root / "calls.log"
    text = log.read_text() if log.exists() else ""
    log.unlink(missing_ok=True)
    return Counter(line.split()[0] for line in text.splitlines())


@dataclass
class Run:
    report: RunReport
    results: dict[str, Mapping[str, Any]]
    executions: dict[str, Mapping[str, Any]]

    @property
    def stages(self) -> dict[str, list[int]]:
        assert self.report.stages is not None
        return self.report.stages

    def context(self, case_id: str) -> dict[str, Any]:
        contexts: list[dict[str, Any]] = self.executions[case_id]["artifacts"]["context/v1"]
        return contexts[-1]

    def labels(self, name: str) -> dict[str, str]:
        return {case_id: body["labels"][name] for case_id, body in self.results.items()}


def run(root: Path, *, use_cache: bool = True) -> Run:
    """Plan and execute the project in ``root`` into its own ledger, as ``oloproof run`` does."""
    plan = plan_run(root / "oloproof.yaml")
    with open_project_ledger(root) as ledger:
        outcome = asyncio.run(execute_run(ledger, plan, use_cache=use_cache))
        results = {body["case_id"]: body for _, body in case_results(ledger, outcome.run_id)}
        executions = {cid: ledger.get(body["execution"]).body for cid, body in results.items()}
    return Run(outcome.report, results, executions)


@pytest.fixture(autouse=True)
def _restore_import_state() -> Iterator[None]:
    # Planning puts the project folder on sys.path and imports staged_app from it.
    path = list(sys.path)
    yield
    sys.path[:] = path
    sys.modules.pop("staged_app", None)


# --- context assembly, as a pure function -----------------------------------------------------


def passages(*sizes: int) -> Retrieval:
    return Retrieval(
        candidates=tuple(Passage(doc_id=f"p{i}", text="w " * n) for i, n in enumerate(sizes, 1))
    )


class TokenCounter:
    def __init__(self) -> None:
        self.seen: list[str] = []

    def __call__(self, passage: Passage) -> int:
        self.seen.append(passage.doc_id)
        return len((passage.text or "").split())


def test_assembly_drops_past_top_k_without_counting_their_tokens() -> None:
    counter = TokenCounter()
    context = assemble_context(
        passages(1, 2, 3, 4, 5), top_k=3, token_budget=None, count_tokens=counter
    )
    assert [(i.doc_id, i.position, i.tokens) for i in context.items] == [
        ("p1", 1, 1),
        ("p2", 2, 2),
        ("p3", 3, 3),
    ]
    assert [(d.doc_id, d.position, d.reason, d.tokens) for d in context.dropped] == [
        ("p4", 4, "top_k", None),
        ("p5", 5, "top_k", None),
    ]
    assert counter.seen == ["p1", "p2", "p3"]
    assert context.source == "retrieval" and context.token_budget is None


def test_assembly_drops_what_overflows_the_budget_and_later_smaller_passages_still_fit() -> None:
    counter = TokenCounter()
    context = assemble_context(
        passages(5, 8, 3, 2, 9), top_k=4, token_budget=10, count_tokens=counter
    )
    # p1 (5) fits; p2 would make 13 and is dropped; p3 makes 8; p4 makes exactly 10 and fits;
    # p5 is past top_k, dropped for that reason and never counted.
    assert [(i.doc_id, i.position, i.tokens) for i in context.items] == [
        ("p1", 1, 5),
        ("p3", 3, 3),
        ("p4", 4, 2),
    ]
    assert [(d.doc_id, d.position, d.reason, d.tokens) for d in context.dropped] == [
        ("p2", 2, "token_budget", 8),
        ("p5", 5, "top_k", None),
    ]
    assert counter.seen == ["p1", "p2", "p3", "p4"]
    assert context.token_budget == 10


def test_assembly_keeps_the_retrievers_order_and_never_reranks() -> None:
    retrieval = Retrieval(
        candidates=(
            Passage(doc_id="low", score=0.1, text="a"),
            Passage(doc_id="high", score=0.9, text="b"),
            Passage(doc_id="mid", score=0.5, text="c"),
        )
    )
    context = assemble_context(retrieval, top_k=3, token_budget=None, count_tokens=None)
    assert [i.doc_id for i in context.items] == ["low", "high", "mid"]
    assert [i.tokens for i in context.items] == [None, None, None]
    assert context.dropped == ()
    assert isinstance(context, Context)


# --- sync and async stages --------------------------------------------------------------------


def test_async_stages_run_exactly_like_sync_ones(tmp_path: Path) -> None:
    sync_root = write_project(tmp_path / "sync", "Sync", token_budget=4)
    async_root = write_project(tmp_path / "async", "Async", token_budget=4)
    spec = importlib.util.spec_from_file_location("written_app", async_root / "staged_app.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert inspect.iscoroutinefunction(module.Async.retrieve)
    assert inspect.iscoroutinefunction(module.Async.generate)

    sync, async_ = run(sync_root), run(async_root)
    assert (
        calls(sync_root)
        == calls(async_root)
        == Counter({"retrieve": 5, "generate": 5, "count_tokens": 10})
    )
    for case_id, result in sync.results.items():
        other = async_.results[case_id]
        assert other["status"] == result["status"] == "ok"
        assert other["verdicts"] == result["verdicts"]
        assert other["labels"] == result["labels"]
        assert async_.executions[case_id]["output"] == sync.executions[case_id]["output"]
        assert async_.executions[case_id]["artifacts"] == sync.executions[case_id]["artifacts"]
    assert async_.report.metrics == sync.report.metrics
    assert async_.report.slices == sync.report.slices
    assert async_.stages == sync.stages == {"retrieve": [0, 5], "generate": [0, 5]}


# --- stage caches -----------------------------------------------------------------------------


def test_subclasses_sharing_one_retrieve_search_again_and_no_cache_runs_every_stage(
    tmp_path: Path,
) -> None:
    root = write_project(tmp_path / "p", "Left")
    left = oloproof("run", cwd=root)
    assert left.code == 0, left.err
    assert "Stages: retrieve 0 hit/5 miss; generate 0 hit/5 miss" in left.lines
    assert calls(root) == Counter({"retrieve": 5, "generate": 5, "count_tokens": 10})

    # Right inherits the very same retrieve, yet it could read an attribute Right changed.
    set_system(root, "Right")
    right = oloproof("run", cwd=root)
    assert right.code == 0, right.err
    assert "Stages: retrieve 0 hit/5 miss; generate 0 hit/5 miss" in right.lines
    assert calls(root) == Counter({"retrieve": 5, "generate": 5, "count_tokens": 10})

    # The same class again: every execution is reused whole, and no stage runs.
    set_system(root, "Left")
    again = oloproof("run", cwd=root)
    assert again.code == 0, again.err
    assert "Stages: retrieve 0 hit/0 miss; generate 0 hit/0 miss" in again.lines
    assert calls(root) == Counter()

    # --no-cache executes every case again, each of its stages included.
    fresh = oloproof("run", "--no-cache", cwd=root)
    assert fresh.code == 0, fresh.err
    assert "Stages: retrieve 0 hit/5 miss; generate 0 hit/5 miss" in fresh.lines
    assert calls(root) == Counter({"retrieve": 5, "generate": 5, "count_tokens": 10})


def test_a_new_index_version_searches_again_but_reuses_generations(tmp_path: Path) -> None:
    root = write_project(tmp_path / "p", "Sync", index_version="kb-1")
    assert run(root).stages == {"retrieve": [0, 5], "generate": [0, 5]}
    assert calls(root) == Counter({"retrieve": 5, "generate": 5, "count_tokens": 10})

    set_system(root, "Sync", index_version="kb-2")
    second = run(root)
    # Every case searches again; the index returned the same passages, so the contexts are
    # identical and each generation is found in the cache.
    assert second.stages == {"retrieve": [0, 5], "generate": [5, 0]}
    assert calls(root) == Counter({"retrieve": 5, "count_tokens": 10})


def test_top_k_and_token_budget_are_outside_the_retrieve_identity(tmp_path: Path) -> None:
    root = write_project(tmp_path / "p", "Sync", top_k=2)
    first = run(root)
    assert first.stages == {"retrieve": [0, 5], "generate": [0, 5]}
    calls(root)

    set_system(root, "Sync", top_k=3)
    wider = run(root)
    # Every case keeps a third passage now, so every context changed and generate runs again.
    assert wider.stages == {"retrieve": [5, 0], "generate": [0, 5]}
    assert calls(root) == Counter({"generate": 5, "count_tokens": 15})

    # A budget of 3 words at top_k 2: only the cases whose first two passages overflow it get
    # a different context (and a new generation); the others hit the top_k-2 generations.
    set_system(root, "Sync", top_k=2, token_budget=3)
    budget = run(root)
    changed = {
        case_id
        for case_id in budget.results
        if budget.context(case_id)["items"] != first.context(case_id)["items"]
    }
    assert changed == {"second", "cut_off", "unlabelled"}
    assert budget.stages == {"retrieve": [5, 0], "generate": [2, 3]}
    assert calls(root) == Counter({"generate": 3, "count_tokens": 10})


# --- settings ---------------------------------------------------------------------------------


def test_settings_in_oloproof_yaml_override_the_decorator(tmp_path: Path) -> None:
    root = write_project(tmp_path / "decorator", "Narrow")
    narrow = run(root)
    assert narrow.report.system["depth"] == 2
    assert narrow.report.system["top_k"] == 1
    assert narrow.report.system["index_version"] == "decorator"
    assert narrow.report.system["token_budget"] is None
    assert "retrieve first depth=2" in (root / "calls.log").read_text()
    assert [i["doc_id"] for i in narrow.context("first")["items"]] == ["d1"]

    root = write_project(
        tmp_path / "config", "Narrow", depth=4, top_k=3, token_budget=5, index_version="config"
    )
    wide = run(root)
    assert {
        k: wide.report.system[k] for k in ("depth", "top_k", "token_budget", "index_version")
    } == {
        "depth": 4,
        "top_k": 3,
        "token_budget": 5,
        "index_version": "config",
    }
    assert "retrieve first depth=4" in (root / "calls.log").read_text()
    # d1 (1) + d2 (2) fit in 5 words, d3 (3) does not, d4 is past top_k 3.
    context = wide.context("first")
    assert [i["doc_id"] for i in context["items"]] == ["d1", "d2"]
    assert [(d["doc_id"], d["reason"]) for d in context["dropped"]] == [
        ("d3", "token_budget"),
        ("d4", "top_k"),
    ]
    assert context["token_budget"] == 5


# --- errors (exit 2, one sentence) ------------------------------------------------------------


def test_a_malformed_retrieval_stops_the_run_naming_the_case(tmp_path: Path) -> None:
    cases = [case_line("fine", ["d1", "d2"], ["d1"]), case_line("broken", ["d1"], ["d1"])]
    root = write_project(tmp_path / "p", "Malformed", cases=cases)
    result = oloproof("run", cwd=root)
    assert result.code == 2, result.out
    assert result.err.startswith(
        "error: case 'broken': retrieve() returned a malformed retrieval/v1"
    )
    assert result.err.count("\n") == 1
    assert "Traceback" not in result.err


def test_a_retrieval_longer_than_its_depth_stops_the_run_naming_the_case(tmp_path: Path) -> None:
    # Recorded, four candidates would sit under a run whose depth says two: a replay's cut,
    # refused past the depth, and every reader of the run would be told a falsehood.
    cases = [case_line("fine", ["d1", "d2"], ["d1"]), case_line("long", CASES[0][1], ["d1"])]
    root = write_project(tmp_path / "p", "Greedy", cases=cases)
    result = oloproof("run", cwd=root)
    assert result.code == 2, result.out
    assert result.err == (
        "error: case 'long': retrieve() returned a malformed retrieval/v1: 4 candidates at "
        "depth 2; retrieve(input, depth) returns up to depth candidates\n"
    )


# A release before the depth check: it stored the long retrieval as a stage output.
EARLIER = """
from pathlib import Path

import oloproof
from oloproof.sdk import Retrieval
from oloproof.systems import rag

rag.RagSystem._checked = lambda self, case, result: (
    result if isinstance(result, Retrieval) else Retrieval.model_validate(result)
)
print(oloproof.evaluate(Path("oloproof.yaml")).run_id)
"""


def test_a_long_retrieval_an_earlier_release_cached_stops_the_run_too(tmp_path: Path) -> None:
    cases = [case_line("fine", ["d1", "d2"], ["d1"]), case_line("long", CASES[0][1], ["d1"])]
    root = write_project(tmp_path / "p", "Greedy", cases=cases)
    earlier = subprocess.run(
        [sys.executable, "-c", EARLIER], cwd=root, capture_output=True, text=True, check=False
    )
    assert earlier.returncode == 0, earlier.stdout + earlier.stderr
    # generate changed: each case is executed again, and its retrieval found in the stage cache.
    app = root / "staged_app.py"
    app.write_text(app.read_text().replace('    log(f"generate {question}")\n', ""))
    result = oloproof("run", cwd=root)
    assert result.code == 2, result.out
    assert result.err == (
        "error: case 'long': retrieve() returned a malformed retrieval/v1: 4 candidates at "
        "depth 2; retrieve(input, depth) returns up to depth candidates\n"
    )


def test_a_class_without_rag_system_is_refused_before_anything_is_recorded(tmp_path: Path) -> None:
    root = write_project(tmp_path / "p", "Undecorated")
    result = oloproof("run", cwd=root)
    assert result.code == 2, result.out
    assert result.err.endswith(
        "system.rag.object: 'staged_app:Undecorated' is not a class decorated with @rag_system\n"
    )
    assert "Traceback" not in result.err
    assert not (root / ".oloproof").exists()
    assert not (root / "calls.log").exists()


# --- staged slices ----------------------------------------------------------------------------


def test_relevant_position_says_where_the_best_relevant_document_sits(tmp_path: Path) -> None:
    cases = [case_line(*c) for c in CASES] + [
        # Two relevant documents: the better placed one counts.
        case_line("best_of_two", ["d1", "d2", "d3", "d4"], ["d3", "d2"]),
        # A grade of 0 is a label saying "not relevant": nothing relevant is labelled.
        {
            **case_line("graded_zero", ["d1", "d2"], None),
            "expected": {"answer": "a", "relevant": [{"doc_id": "d1", "grade": 0}]},
        },
    ]
    root = write_project(tmp_path / "p", "Sync", cases=cases, top_k=2)
    result = run(root)
    assert result.labels("relevant_position") == {
        "first": "1",
        "second": "2",
        "cut_off": "below_top_k",
        "missing": "not_retrieved",
        "unlabelled": "unlabelled",
        "best_of_two": "2",
        "graded_zero": "unlabelled",
    }
    rows = {(row.slice, row.value) for row in result.report.slices}
    assert {value for name, value in rows if name == "relevant_position"} == {
        "1",
        "2",
        "below_top_k",
        "not_retrieved",
        "unlabelled",
    }


def test_context_truncated_is_true_only_when_the_budget_dropped_a_passage(tmp_path: Path) -> None:
    root = write_project(tmp_path / "p", "Sync", top_k=2, token_budget=3)
    result = run(root)
    truncated = result.labels("context_truncated")
    # first: d1 (1) + d2 (2) = 3 fits exactly; the others overflow 3 words within their top 2.
    assert truncated == {
        "first": "false",
        "second": "true",
        "cut_off": "true",
        "missing": "false",
        "unlabelled": "true",
    }
    for case_id, value in truncated.items():
        reasons = {d["reason"] for d in result.context(case_id)["dropped"]}
        assert ("token_budget" in reasons) == (value == "true")
        # Every case drops passages 3 and 4 for top_k; that alone is not truncation.
        assert "top_k" in reasons

    unbounded = run(write_project(tmp_path / "q", "Sync", top_k=2))
    assert set(unbounded.labels("context_truncated").values()) == {"false"}


# --- count_tokens is user code, like the stages ------------------------------------------------

MEASURING_APP = (
    KB_AND_BASE
    + '''

import os
import time


@rag_system(name="staged", version="1", depth=4, top_k=2, token_budget=10)
class Measuring(Base):
    """count_tokens hangs or raises on passage d3, as OLOPROOF_TEST_TOKENIZER says."""

    def count_tokens(self, passage):
        behaviour = os.environ.get("OLOPROOF_TEST_TOKENIZER", "")
        if passage.doc_id == "d3" and behaviour == "hang":
            time.sleep(3600)
        if passage.doc_id == "d3" and behaviour == "raise":
            raise RuntimeError("tokenizer crashed")
        return super().count_tokens(passage)
'''
)


@pytest.mark.parametrize("behaviour", ["hang", "raise"])
def test_a_count_tokens_that_hangs_or_raises_costs_its_cases_not_the_run(
    tmp_path: Path, behaviour: str
) -> None:
    # Cases whose retrieval puts d3 in the top 2 meet the hanging (or raising) count_tokens;
    # the others never call it on d3.
    root = write_project(tmp_path / "p", "Measuring")
    (root / "staged_app.py").write_text(MEASURING_APP)
    config = yaml.safe_load((root / "oloproof.yaml").read_text())
    config["timeout_s"] = 1
    (root / "oloproof.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    result = oloproof("run", cwd=root, env={"OLOPROOF_TEST_TOKENIZER": behaviour}, timeout=30)
    assert "Traceback" not in result.err
    error = {"hang": "TimeoutError", "raise": "RuntimeError: tokenizer crashed"}[behaviour]
    assert result.lines[1].startswith(f"2 of 5 cases errored: {error}"), result.out
    run_id = result.out.split()[1]
    with open_project_ledger(root) as ledger:
        statuses = {body["case_id"]: body["status"] for _, body in case_results(ledger, run_id)}
    # d3 is within the top 2 of these two cases only: the other three ran to the end.
    assert statuses == {
        "first": "ok",
        "second": "errored",
        "cut_off": "ok",
        "missing": "ok",
        "unlabelled": "errored",
    }
