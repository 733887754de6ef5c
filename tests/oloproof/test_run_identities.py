"""A run's identities through the library: the fingerprint is computed once per run, a repeated
input is executed once even after its first occurrence was written, and each count says where
its result came from. Real runs into a real ledger, with systems written into a temp folder.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from oloproof import execute
from oloproof.evaluator_config import ContainsConfig
from oloproof.evaluators.base import CaseView
from oloproof.evaluators.reads import WholeCase, reads_of
from oloproof.evaluators.text import Contains
from oloproof.execute import CacheCounts
from oloproof.fingerprint import _walk
from oloproof.identities import ReadKeys, RunMemory, judgment_identity
from oloproof.runner import execute_run, plan_run
from oloproof.store import open_project_ledger

APP = """
from pathlib import Path

from oloproof import system

LOG = Path(__file__).with_name("calls.log")


@system(name="echo", version="1")
def echo(case):
    with LOG.open("a") as log:
        log.write(case["q"] + "\\n")
    return {"answer": case["q"].upper()}
"""


@pytest.fixture(autouse=True)
def _restore_imports() -> Iterator[None]:
    path = list(sys.path)
    yield
    sys.path[:] = path
    sys.modules.pop("echo_app", None)


def project(root: Path, questions: list[str], evaluators: list[dict[str, Any]]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "echo_app.py").write_text(APP)
    lines = [
        {"id": f"c{i}", "input": {"q": q}, "expected": {"answer": q.upper()}}
        for i, q in enumerate(questions)
    ]
    (root / "cases.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    config = {
        "system": {"name": "echo", "version": "1", "callable": "echo_app:echo"},
        "dataset": "cases.jsonl",
        "evaluators": evaluators,
        "concurrency": 2,
    }
    (root / "oloproof.yaml").write_text(yaml.safe_dump(config))
    return root


@pytest.fixture
def written_case_by_case(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every case is written before the next starts (its flush waited for, not written on the
    run's way), so a repeat finds the first occurrence in the ledger, not in the run's memory."""
    monkeypatch.setattr(execute, "_FLUSH_EVENTS", 1)
    original = execute.EventWriter.maybe_flush

    def written(self: execute.EventWriter, memory: RunMemory) -> None:
        original(self, memory)
        behind = self._behind
        if behind is not None:
            behind.thread.join()
            original(self, memory)  # settles it: the run forgets what it wrote

    monkeypatch.setattr(execute.EventWriter, "maybe_flush", written)


CONTAINS = {"type": "contains", "criterion": "answer_correct"}
EQUALS = {"type": "equals", "criterion": "answer_exact"}


def run(root: Path, *, use_cache: bool = True) -> CacheCounts:
    plan = plan_run(root / "oloproof.yaml")
    with open_project_ledger(root) as ledger:
        outcome = asyncio.run(execute_run(ledger, plan, use_cache=use_cache))
    cache = outcome.report.cache
    counts = CacheCounts(*cache["execution"][:2], *cache["judgment"][:2])
    counts.execution_shared, counts.judgment_shared = cache["execution"][2], cache["judgment"][2]
    return counts


def calls(root: Path) -> list[str]:
    log = root / "calls.log"
    text = log.read_text() if log.exists() else ""
    log.unlink(missing_ok=True)
    return text.splitlines()


def counts(c: CacheCounts) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
    return (
        (c.execution_hit, c.execution_miss, c.execution_shared),
        (c.judgment_hit, c.judgment_miss, c.judgment_shared),
    )


def test_the_fingerprint_is_computed_once_per_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = project(tmp_path, [f"q{i}" for i in range(40)], [CONTAINS])
    walks: list[object] = []
    original = _walk.Walk.run

    def counted(self: _walk.Walk) -> None:
        walks.append(self)
        original(self)

    monkeypatch.setattr(_walk.Walk, "run", counted)
    run(root)
    assert len(walks) == 1  # at planning, for 40 cases


@pytest.mark.parametrize("use_cache", [True, False])
@pytest.mark.usefixtures("written_case_by_case")
def test_a_repeat_after_its_first_occurrence_was_written_still_shares_it(
    tmp_path: Path, use_cache: bool
) -> None:
    root = project(tmp_path, ["a", "b", "a", "c", "a"], [CONTAINS])
    assert counts(run(root, use_cache=use_cache)) == ((0, 3, 2), (0, 3, 2))
    assert sorted(calls(root)) == ["a", "b", "c"]


@pytest.mark.usefixtures("written_case_by_case")
def test_a_repeat_of_a_reused_execution_is_a_hit_and_a_new_judgment_is_shared(
    tmp_path: Path,
) -> None:
    root = project(tmp_path, ["a", "b", "a"], [CONTAINS])
    run(root)
    calls(root)
    assert counts(run(root)) == ((3, 0, 0), (3, 0, 0))
    assert calls(root) == []
    # A second evaluator: the executions are reused; its judgments are new, and the repeat
    # shares its first occurrence's.
    project(root, ["a", "b", "a"], [CONTAINS, EQUALS])
    assert counts(run(root)) == ((3, 0, 0), (3, 2, 1))


@pytest.mark.usefixtures("written_case_by_case")
def test_executions_made_again_keep_judgments_and_share_new_ones(tmp_path: Path) -> None:
    # --no-cache executes again; the events come out identical to the stored ones, so their
    # judgments are reused (hits), and a judgment made now is shared by the repeat, not a hit.
    root = project(tmp_path, ["a", "b", "a"], [CONTAINS])
    run(root)
    project(root, ["a", "b", "a"], [CONTAINS, EQUALS])
    calls(root)
    assert counts(run(root, use_cache=False)) == ((0, 2, 1), (3, 2, 1))
    assert sorted(calls(root)) == ["a", "b"]


def test_a_judgment_identity_is_what_its_evaluator_reads() -> None:
    contains = Contains(ContainsConfig(type="contains", criterion="c"))
    declaration = reads_of(contains)

    def key(**changes: Any) -> str:
        parts: dict[str, Any] = {
            "case_id": "one",
            "input": {"q": "x"},
            "expected": {"answer": "14 days", "relevant": [{"doc_id": "kb-1"}]},
            "metadata": {"topic": "billing"},
            "output": {"answer": "Within 14 days.", "citations": ["kb-1"]},
            "artifacts": {},
        }
        parts.update(changes)
        view = CaseView(**parts)
        return judgment_identity("spec", ReadKeys(view).of(declaration))

    base = key()
    assert key(expected={"answer": "14 days"}) == base  # labels dropped
    assert key(metadata={}, case_id="two", input={"q": "y"}) == base
    assert key(output={"answer": "Within 14 days."}) == base  # citations it never reads
    assert key(expected={"answer": "15 days"}) != base
    assert key(output={"answer": "Within 15 days."}) != base
    assert key(output={}) != base  # a missing field is not a present one
    assert key(output={"answer": None}) != key(output={})
    # An evaluator that declares nothing reads the whole case.
    assert isinstance(reads_of(object()), WholeCase)
