"""A staged system whose generate reads what its retrieve leaves behind (``LAST``, a global its
retrieve sets), under every intervention of ``oloproof diagnose``, through the real CLI.

Gold context and the replays give generate a context that no retrieve of this execution made,
so no retrieve used to run: generate read whatever an earlier case left there (or nothing),
and the diagnosis credited the intervention with what the system would never do. Such a
system now runs retrieve for every case under every intervention, for its state alone where
the context comes from elsewhere, and a replay whose retrieve no longer returns the retrieval
it replays errors that case instead of feeding generate another retrieval's state.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.support import oloproof

RUN_ID = re.compile(r"run_[0-9A-Z]{26}")
QUESTIONS = ("q1", "q2", "q3")

APP = """
import json
from pathlib import Path

from oloproof import Passage, Retrieval, rag_system

# Read by retrieve on every call: a file the code fingerprint does not cover.
SCORES = Path(__file__).with_name("scores.json")
LAST = None


@rag_system(name="coupled", version="1", depth=3, top_k=1, token_budget=100)
class Coupled:
    def retrieve(self, input, depth):
        global LAST
        q = input["question"]
        near, answer = json.loads(SCORES.read_text())
        LAST = q
        return Retrieval(query=q, depth=depth, candidates=(
            Passage(doc_id=f"{q}-near", score=near, text=f"Something near {q}."),
            Passage(doc_id=f"{q}-answer", score=answer, text=f"ANSWER-{q}."),
            Passage(doc_id=f"{q}-far", score=0.5, text=f"Something far from {q}."),
        ))

    def generate(self, input, context):
        q = input["question"]
        # The answer only when retrieve left this very question behind.
        knows = LAST == q and any(f"ANSWER-{q}" in (p.text or "") for p in context.items)
        return {"answer": f"ANSWER-{q}" if knows else "no idea", "state": LAST}

    def count_tokens(self, passage):
        return len((passage.text or "").split())
"""

RERANK = """
def swap(input, candidates):
    return [candidates[1], candidates[0], *candidates[2:]]
"""

CONFIG = """
system:
  name: coupled
  version: "1"
  rag: {object: app:Coupled}
dataset: cases.jsonl
concurrency: 1
evaluators:
  - {type: contains, criterion: answer_correct, field: answer, expected_field: answer}
"""


def project(root: Path) -> Path:
    root.mkdir()
    (root / "app.py").write_text(APP)
    (root / "rerank.py").write_text(RERANK)
    (root / "scores.json").write_text("[2.0, 1.0]")
    (root / "oloproof.yaml").write_text(CONFIG)
    with (root / "cases.jsonl").open("w") as f:
        for q in QUESTIONS:
            expected = {
                "answer": f"ANSWER-{q}",
                "relevant": [{"doc_id": f"{q}-answer"}],
                "gold_context": [{"doc_id": f"{q}-answer", "text": f"ANSWER-{q}."}],
            }
            f.write(json.dumps({"id": q, "input": {"question": q}, "expected": expected}) + "\n")
    return root


def first_run(root: Path) -> str:
    done = oloproof("run", cwd=root)
    assert done.code == 0, done.err
    assert "Stages: retrieve 0 hit/3 miss; generate 0 hit/3 miss" in done.lines
    return RUN_ID.findall(done.lines[0])[0]


def child_runs(out: str) -> list[tuple[str, str]]:
    """The (label, run id) of each child run on the diagnosis's ``Child runs:`` line."""
    line = next(line for line in out.splitlines() if line.startswith("Child runs: "))
    return [
        (part.rsplit(" ", 1)[0], part.rsplit(" ", 1)[1])
        for part in line.removeprefix("Child runs: ").split(", ")
    ]


def outputs(root: Path, run_id: str, out: Path) -> dict[str, dict[str, object]]:
    done = oloproof("export", run_id, "--format", "jsonl", "--output", str(out), cwd=root)
    assert done.code == 0, done.err
    rows = [json.loads(line) for line in (out / "cases.jsonl").read_text().splitlines()]
    return {row["case_id"]: json.loads(row["output"]) for row in rows}


def stages(root: Path, run_id: str) -> str:
    done = oloproof("inspect", run_id, cwd=root)
    assert done.code == 0, done.err
    return next(line for line in done.lines if line.startswith("Stages:"))


def test_generate_sees_its_own_cases_state_under_every_intervention(tmp_path: Path) -> None:
    root = project(tmp_path / "p")
    run_id = first_run(root)
    diagnoses = [
        ["--intervention", "gold-context", "--repeats", "2"],
        ["--intervention", "top-k", "--top-k", "2"],
        ["--intervention", "reranker", "--reranker", "rerank:swap"],
        ["--intervention", "token-budget", "--token-budget", "200", "--top-k", "2"],
    ]
    seen: dict[str, dict[str, object]] = {}
    for n, options in enumerate(diagnoses):
        done = oloproof("diagnose", run_id, *options, "--criterion", "answer_correct", cwd=root)
        assert done.code == 0, done.err
        for label, child in child_runs(done.out):
            if label in seen:
                continue  # a replay lists the gold-context diagnosis's child runs first
            seen[label] = outputs(root, child, tmp_path / f"out-{n}-{len(seen)}")
            # Retrieve ran for every case: its retrieval is needed for the state alone.
            assert stages(root, child) == "Stages: retrieve 0 hit/3 miss; generate 0 hit/3 miss"
    assert sorted(seen) == [
        "control repeat 1",
        "control repeat 2",
        "gold context repeat 1",
        "gold context repeat 2",
        "replay control",
        "reranker rerank:swap",
        "token-budget 200 top-k 2",
        "top-k 2",
    ]
    for label, found in seen.items():
        recovers = not label.startswith(("control", "replay control"))
        assert found == {
            q: {"answer": f"ANSWER-{q}" if recovers else "no idea", "state": q} for q in QUESTIONS
        }, label


def test_a_replay_whose_retrieve_drifted_errors_its_cases(tmp_path: Path) -> None:
    """Retrieve now scores the passages otherwise than the run recorded: the state it leaves is
    not that of the replayed retrieval, so no case is observed and none counts as recovered."""
    root = project(tmp_path / "p")
    run_id = first_run(root)
    (root / "scores.json").write_text("[3.0, 1.0]")
    done = oloproof(
        "diagnose", run_id, "--intervention", "top-k", "--top-k", "2",
        "--criterion", "answer_correct", cwd=root,
    )  # fmt: skip
    assert done.code == 0, done.err
    assert done.lines[:4] == [
        "Selected: 3 failed cases with gold context (observed; no population claim)",
        "Control: 0 of 3 passed when re-executed without the intervention; 3 of 3 gave no "
        "verdict (errored or missing)",
        "Recovered under top-k 2: 0 of 3",
        "UNRESOLVED: 3 of 3, the control gave no verdict (errored or missing)",
    ]
    (_, intervention), _ = child_runs(done.out)
    failures = oloproof("inspect", intervention, "--failures", cwd=root)
    assert failures.code == 0, failures.err
    assert (
        "errored: RetrievalDriftError: retrieve() returned another retrieval than the one "
        "this run replays (the run recorded it), so the state generate reads of it would not "
        "be the replayed retrieval's; the case is not observed"
    ) in failures.out
    assert stages(root, intervention) == "Stages: retrieve 0 hit/3 miss; generate 0 hit/0 miss"
