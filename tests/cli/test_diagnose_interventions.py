"""Interventions on small staged projects written here, end to end through the CLI.

- A reranker that moves the relevant document from position 2 to 1 under top_k 1 recovers
  hit_rate_at_1 for every case (it used to be scored on the retriever's order: 0 of 12).
- ``--repeats``: a system that does not answer the same way twice (its generate counts its calls
  in a file beside it) is re-executed K times per role, each repeat really calling generate, and
  the output says in how many repeats each case recovered.
- A replay that would change nothing, or that a system cannot run, is refused before anything
  is written.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from tests.support import oloproof

from ledger import Event
from oloproof.store import open_project_ledger

ADDRESS = re.compile(r"sha256:[0-9a-f]{64}")
RUN_ID = re.compile(r"run_[0-9A-Z]{26}")

SWAP_APP = '''
import json
from pathlib import Path

from oloproof import Context, Passage, Retrieval, rag_system

CALLS = Path(__file__).parent / "calls.json"


def called(question):
    """How many times generate has been called for this question, this call included."""
    calls = json.loads(CALLS.read_text()) if CALLS.exists() else {}
    calls[question] = calls.get(question, 0) + 1
    CALLS.write_text(json.dumps(calls))
    return calls[question]


@rag_system(name="swap", version="1", depth=3, top_k=1, token_budget=100)
class Swap:
    def retrieve(self, input, depth):
        q = input["question"]
        return Retrieval(
            query=q,
            depth=depth,
            candidates=(
                Passage(doc_id=f"{q}-near", score=2.0, text=f"Something near {q}."),
                Passage(doc_id=f"{q}-answer", score=1.0, text=f"ANSWER-{q}."),
                Passage(doc_id=f"{q}-far", score=0.5, text=f"Something far from {q}."),
            ),
        )

    def generate(self, input, context):
        q = input["question"]
        n = called(q)
        given = " ".join(item.text or "" for item in context.items)
        knows = f"ANSWER-{q}" in given
        # steady answers whenever the answer is given; sometimes only on its 4th call; flaky
        # answers on its 5th call whatever it is given; hopeless never.
        right = {
            "steady": knows,
            "sometimes": knows and n == 4,
            "flaky": n == 5,
            "hopeless": False,
        }.get(q, knows)
        answer = f"ANSWER-{q}" if right else "no idea"
        return {"answer": answer, "citations": [context.items[0].doc_id] if context.items else []}

    def count_tokens(self, passage):
        return len((passage.text or "").split())
'''

RERANK = '''
def swap(input, candidates):
    """Move the second candidate to the front."""
    return [candidates[1], candidates[0], *candidates[2:]]
'''

CONFIG = """
system:
  name: swap
  version: "1"
  rag: {object: app:Swap}
dataset: cases.jsonl
concurrency: 1
evaluators:
  - {type: contains, criterion: answer_correct, field: answer, expected_field: answer}
  - {type: hit_rate, k: 1}
"""


def write_project(root: Path, questions: list[str]) -> Path:
    root.mkdir(parents=True)
    (root / "app.py").write_text(SWAP_APP)
    (root / "rerank.py").write_text(RERANK)
    (root / "oloproof.yaml").write_text(CONFIG)
    with (root / "cases.jsonl").open("w") as f:
        for q in questions:
            expected = {
                "answer": f"ANSWER-{q}",
                "relevant": [{"doc_id": f"{q}-answer"}],
                "gold_context": [{"doc_id": f"{q}-answer", "text": f"ANSWER-{q}."}],
            }
            f.write(json.dumps({"id": q, "input": {"question": q}, "expected": expected}) + "\n")
    return root


def ok(*args: str, cwd: Path) -> str:
    done = oloproof(*args, cwd=cwd)
    assert done.code == 0, done.err + done.out
    return done.out


def run(path: Path) -> str:
    done = oloproof("run", cwd=path)
    assert done.code in (0, 1, 3), done.err
    return RUN_ID.findall(done.lines[0])[0]


def norm(text: str) -> list[str]:
    return RUN_ID.sub("run_…", ADDRESS.sub("sha256:…", text)).splitlines()


def test_a_reranker_moving_the_relevant_passage_up_recovers_hit_rate(tmp_path: Path) -> None:
    path = write_project(tmp_path / "p", [f"q{i:02}" for i in range(12)])
    run_id = run(path)
    out = ok(
        "diagnose",
        run_id,
        "--intervention",
        "reranker",
        "--reranker",
        "rerank:swap",
        "--criterion",
        "hit_rate_at_1",
        cwd=path,
    )
    assert norm(out) == [
        "Selected: 12 failed cases with gold context (observed; no population claim)",
        "Control: 0 of 12 passed when re-executed without the intervention",
        "Recovered under reranker rerank:swap: 12 of 12",
        "Diagnosis sha256:…",
        "Child runs: reranker rerank:swap run_…, replay control run_…",
        "Cases: oloproof inspect sha256:…",
    ]
    lines = ok("inspect", ADDRESS.findall(out)[-1], cwd=path).splitlines()
    assert lines[0] == (
        "q00: under reranker rerank:swap: recovered, strength intervention_recovery, best "
        "relevant position 2, 1 under reranker rerank:swap; no gold-context label"
    )
    # The reranked child's own report scores its ranking; the replay control, the original.
    treated, control = RUN_ID.findall(out.splitlines()[-2])
    assert re.search(r"│ hit_rate_at_1 +│ 100\.0% ", ok("inspect", treated, cwd=path))
    assert re.search(r"│ hit_rate_at_1 +│ 0\.0% ", ok("inspect", control, cwd=path))


def calls(path: Path) -> dict[str, int]:
    counted: dict[str, int] = json.loads((path / "calls.json").read_text())
    return counted


def test_repeats_run_each_role_k_times_and_say_how_often_a_case_recovered(
    tmp_path: Path,
) -> None:
    path = write_project(tmp_path / "p", ["flaky", "hopeless", "sometimes", "steady"])
    run_id = run(path)
    assert calls(path) == {"flaky": 1, "hopeless": 1, "sometimes": 1, "steady": 1}
    out = ok(
        "diagnose",
        run_id,
        "--intervention",
        "gold-context",
        "--criterion",
        "answer_correct",
        "--repeats",
        "3",
        cwd=path,
    )
    assert norm(out) == [
        "Selected: 4 failed cases with gold context (observed; no population claim)",
        "Control: 1 of 4 passed in at least one of 3 re-executions without the intervention",
        "Recovered under gold context: 2 of 4; 1 recovered in 3 of 3, 1 recovered in 1 of 3",
        "RANKED_OUT: 2 of 4, recovered; relevant evidence was retrieved below the top-k cut",
        "GENERATION_FAILURE: 1 of 4, still failed with the gold context",
        "UNRESOLVED: 1 of 4, passed under the control as well, so unstable rather than diagnosed",
        "Implicated: the top-k cut, in 2 of the 2 recovered failures.",
        "Candidate experiment: a larger top_k. This is a hypothesis to test, not an established "
        "cause.",
        "Candidate experiment: a reranker. This is a hypothesis to test, not an established cause.",
        "Diagnosis sha256:…",
        "Child runs: gold context repeat 1 run_…, control repeat 1 run_…, gold context repeat 2 "
        "run_…, control repeat 2 run_…, gold context repeat 3 run_…, control repeat 3 run_…",
        "Cases: oloproof inspect sha256:…",
    ]
    # Every repeat of every role called generate: nothing came from a cache.
    assert calls(path) == {"flaky": 7, "hopeless": 7, "sometimes": 7, "steady": 7}
    address = ADDRESS.findall(out)[-1]
    assert ok("inspect", address, cwd=path).splitlines() == [
        "flaky: UNRESOLVED, passes_under_control, the control passed in 1 of 3, strength "
        "control_recovery, best relevant position 2",
        "hopeless: GENERATION_FAILURE, fails_with_gold_context, strength "
        "intervention_non_recovery, best relevant position 2",
        "sometimes: RANKED_OUT, relevant_ranked_out, recovered in 1 of 3, strength "
        "intervention_recovery, best relevant position 2",
        "steady: RANKED_OUT, relevant_ranked_out, recovered in 3 of 3, strength "
        "intervention_recovery, best relevant position 2",
    ]
    ok("diagnose", "--verify", address, cwd=path)
    # A diagnosis that claims fewer repeats than its child runs show does not verify.
    ledger = open_project_ledger(path, create=False)
    try:
        event = ledger.get(address)
        body = json.loads(json.dumps(event.body))
        body["repeats"] = 1
        forged = ledger.put(Event(event.type, event.schema, body, event.refs))
    finally:
        ledger.close()
    done = oloproof("diagnose", "--verify", forged, cwd=path)
    assert done.code == 1
    assert "is not one of the runs 1 repeat(s) of this intervention make" in done.out

    # A replay with repeats: each repeat of the replay control generates afresh too.
    out = ok(
        "diagnose",
        run_id,
        "--intervention",
        "top-k",
        "--top-k",
        "2",
        "--criterion",
        "answer_correct",
        "--repeats",
        "2",
        cwd=path,
    )
    assert calls(path) == {"flaky": 11, "hopeless": 11, "sometimes": 11, "steady": 11}
    assert "Recovered under top-k 2: 1 of 4; 1 recovered in 2 of 2" in out
    lines = ok("inspect", ADDRESS.findall(out)[-1], cwd=path).splitlines()
    assert lines[-1] == (
        "steady: under top-k 2: recovered in 2 of 2, strength intervention_recovery, best "
        "relevant position 2; gold context: RANKED_OUT, relevant_ranked_out"
    )


@pytest.fixture(scope="module")
def swap(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    path = write_project(tmp_path_factory.mktemp("swap") / "p", ["steady", "hopeless"])
    return path, run(path)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--intervention", "top-k", "--top-k", "1"],
            "--top-k 1 is the run's own top_k, so the replay would change nothing",
        ),
        (
            ["--intervention", "top-k", "--top-k", "4"],
            "--top-k 4 cuts past the recorded retrievals, which hold at most 3 candidates (the "
            "run's depth); use --top-k 3 or less",
        ),
        (
            ["--intervention", "token-budget", "--token-budget", "100"],
            "--token-budget 100 is the run's own token_budget, so the replay would change nothing",
        ),
        (["--intervention", "token-budget"], "needs --token-budget N"),
        (["--intervention", "token-budget", "--token-budget", "0"], "1 or more, not 0"),
        (["--intervention", "top-k", "--top-k", "2", "--token-budget", "9"], "applies only"),
        (["--intervention", "gold-context", "--repeats", "0"], "--repeats must be 1 or more"),
        (
            ["--intervention", "top-k", "--top-k", "2", "--criterion", "hit_rate_at_1"],
            "--intervention top-k cannot change hit_rate_at_1: it changes how many retrieved "
            "passages reach the model, never their order",
        ),
    ],
)
def test_a_replay_that_cannot_change_anything_is_refused(
    swap: tuple[Path, str], args: list[str], message: str
) -> None:
    path, run_id = swap
    before = ok("runs", "--json", cwd=path)
    criterion = [] if "--criterion" in args else ["--criterion", "answer_correct"]
    done = oloproof("diagnose", run_id, *args, *criterion, cwd=path)
    assert done.code == 2, done.out + done.err
    assert message in done.err
    assert done.err.startswith("error: ") and done.out == ""
    assert ok("runs", "--json", cwd=path) == before


def test_a_token_budget_needs_count_tokens(tmp_path: Path) -> None:
    path = write_project(tmp_path / "p", ["steady"])
    app = path / "app.py"
    app.write_text(
        app.read_text()
        .replace(", token_budget=100", "")
        .replace("    def count_tokens(self, passage):\n", "    def unused(self, passage):\n")
    )
    run_id = run(path)
    done = oloproof(
        "diagnose",
        run_id,
        "--intervention",
        "token-budget",
        "--token-budget",
        "5",
        "--criterion",
        "answer_correct",
        cwd=path,
    )
    assert done.code == 2
    assert "needs the system's count_tokens(passage)" in done.err
