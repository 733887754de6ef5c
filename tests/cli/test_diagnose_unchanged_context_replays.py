"""A replay credits nothing to an intervention that gave the model the context its control did.

Through the real CLI. A system whose retriever finds one passage, under a cut of 1, with a
generate that stands in for a model at a non-zero temperature (right on every second call,
counted in a file beside it): a wider cut or a reranker that keeps the order hands generate
exactly what the replay control hands it, so a pass under the intervention beside a fail under
the control is the system's own variation. The case is UNRESOLVED (``context_unchanged``), never
recovered, and a line says so. On the support example, whose top-k 4 replay changes no case's
context either, the output stays the guides' word for word; the cases read as untested in
``inspect`` and the JSON.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.support import copy_example, diagnosis_release, normalise, oloproof

ADDRESS_LINE = "Diagnosis sha256:…"

FLAKY_APP = """
from pathlib import Path

from oloproof import Context, Passage, Retrieval, rag_system

CALLS = Path(__file__).parent / "calls.txt"


@rag_system(name="flaky", version="1", depth=4, top_k=1)
class Flaky:
    def retrieve(self, input, depth):
        # One passage matches, so no cut wider than 1 adds anything.
        return Retrieval(query=input["question"], depth=depth, candidates=(
            Passage(doc_id="kb-A", text="Refunds are reviewed within two business days."),
        ))

    def generate(self, input, context: Context):
        # A model at a non-zero temperature, made deterministic: right on every second call,
        # from the passage its context holds.
        n = int(CALLS.read_text()) + 1 if CALLS.exists() else 1
        CALLS.write_text(str(n))
        given = " ".join(item.text or "" for item in context.items)
        right = n % 2 == 0 and "two business days" in given
        return {"answer": "two business days" if right else "I am not sure."}
"""

RERANK = """
def unchanged(input, candidates):
    return list(candidates)
"""

CONFIG = """
system: {name: flaky, version: "1", rag: {object: app:Flaky}}
dataset: cases.jsonl
concurrency: 1
evaluators:
  - {type: contains, criterion: answer_correct, field: answer, expected_field: answer}
"""

CASE = {
    "id": "refund",
    "input": {"question": "When are refunds reviewed?"},
    "expected": {
        "answer": "two business days",
        "relevant": [{"doc_id": "kb-A"}],
        "gold_context": [
            {"doc_id": "kb-A", "text": "Refunds are reviewed within two business days."}
        ],
    },
}

UNCHANGED_1 = (
    "UNRESOLVED: 1 of 1, the intervention gave the model the very context the control did "
    "(context_unchanged), so it tested nothing there; 1 passed under it all the same, which is "
    "the system's own variation, not a recovery"
)


def flaky_project(root: Path) -> Path:
    root.mkdir()
    (root / "app.py").write_text(FLAKY_APP)
    (root / "rerank.py").write_text(RERANK)
    (root / "oloproof.yaml").write_text(CONFIG)
    (root / "cases.jsonl").write_text(json.dumps(CASE) + "\n")
    done = oloproof("run", cwd=root)
    assert done.code == 0, done.out + done.err  # call 1: the case fails
    return root


def ok(root: Path, *args: str) -> list[str]:
    done = oloproof(*args, cwd=root)
    assert done.code == 0, done.out + done.err
    return done.lines


@pytest.mark.parametrize(
    ("args", "label"),
    [
        (["--intervention", "top-k", "--top-k", "3"], "top-k 3"),
        (
            ["--intervention", "reranker", "--reranker", "rerank:unchanged"],
            "reranker rerank:unchanged",
        ),
    ],
)
def test_a_pass_under_an_unchanged_context_is_not_a_recovery(
    tmp_path: Path, args: list[str], label: str
) -> None:
    root = flaky_project(tmp_path / "flaky")
    # The intervention runs first (call 2: right), its control second (call 3: wrong).
    lines = ok(root, "diagnose", "latest", *args, "--criterion", "answer_correct")
    assert normalise("\n".join(lines)).splitlines() == [
        "Selected: 1 failed case with gold context (observed; no population claim)",
        "Control: 0 of 1 passed when re-executed without the intervention",
        f"Recovered under {label}: 0 of 1",
        UNCHANGED_1,
        "No gold-context diagnosis of this run yet; run one to label the cases.",
        ADDRESS_LINE,
        f"Child runs: {label} run_…, replay control run_…",
        "Cases: oloproof inspect sha256:…",
    ]
    address = lines[-1].split()[-1]
    assert ok(root, "inspect", address) == [
        f"refund: under {label}: UNRESOLVED, context_unchanged, strength none, best relevant "
        "position 1; no gold-context label"
    ]
    body = json.loads(oloproof("inspect", address, "--json", cwd=root).out)["body"]
    assert body["summary"]["recovered"] == 0
    assert body["summary"]["context_unchanged"] == 1
    assert body["summary"]["context_unchanged_passed"] == 1
    assert body["summary"]["unresolved"] == []
    assert ok(root, "diagnose", "--verify", address)[0].endswith(
        "every label and count re-derives "
        "from the parent run, the child "
        "runs and the carried labels"
    )


def test_the_guides_top_k_replay_prints_as_they_show_and_marks_its_cases_untested(
    tmp_path: Path,
) -> None:
    root = copy_example("support_rag", tmp_path)
    done = oloproof("run", cwd=root)
    assert done.code == 3, done.out + done.err
    run_id = done.lines[0].split()[1]
    ok(root, "diagnose", run_id, "--intervention", "gold-context", "--criterion", "answer_correct")
    lines = ok(
        root,
        "diagnose",
        run_id,
        "--intervention",
        "top-k",
        "--top-k",
        "4",
        "--criterion",
        "answer_correct",
    )
    # rag-evaluation-guide.md and the tutorial print these lines; no case's context changed.
    assert normalise("\n".join(lines[:5])).splitlines() == [
        "Selected: 4 failed cases with gold context (observed; no population claim)",
        "Control: 0 of 4 passed when re-executed without the intervention",
        "Recovered under top-k 4: 0 of 4",
        "Confirmed under top-k 4: 0 of 0 RANKED_OUT cases also recovered",
        "Labels from gold context (diagnosis sha256:…): 3 of 4 recovered",
    ]
    address = lines[-1].split()[-1]
    cases = ok(root, "inspect", address)
    assert [line.split(": under top-k 4: ")[1].split(", best")[0] for line in cases] == [
        "UNRESOLVED, context_unchanged, strength none"
    ] * 4
    summary = json.loads(oloproof("inspect", address, "--json", cwd=root).out)["body"]["summary"]
    assert (summary["context_unchanged"], summary["context_unchanged_passed"]) == (4, 0)
    assert oloproof("diagnose", "--verify", address, cwd=root).code == 0


DETERMINISTIC_APP = """
from oloproof import Context, Passage, Retrieval, rag_system


@rag_system(name="ranked", version="1", depth=4, top_k=1)
class Ranked:
    def retrieve(self, input, depth):
        return Retrieval(query=input["question"], depth=depth, candidates=(
            Passage(doc_id="noise", text="Unrelated."),
            Passage(doc_id="kb-A", text="Refunds are reviewed within two business days."),
        ))

    def generate(self, input, context: Context):
        given = " ".join(item.text or "" for item in context.items)
        return {"answer": "two business days" if "two business days" in given else "unknown"}
"""


def test_a_wider_cut_that_reaches_the_passage_still_recovers(tmp_path: Path) -> None:
    root = tmp_path / "ranked"
    root.mkdir()
    (root / "app.py").write_text(DETERMINISTIC_APP)
    (root / "oloproof.yaml").write_text(CONFIG.replace("app:Flaky", "app:Ranked"))
    (root / "cases.jsonl").write_text(json.dumps(CASE) + "\n")
    assert oloproof("run", cwd=root).code == 0
    lines = ok(
        root,
        "diagnose",
        "latest",
        "--intervention",
        "top-k",
        "--top-k",
        "2",
        "--criterion",
        "answer_correct",
    )
    assert lines[2:4] == [
        "Recovered under top-k 2: 1 of 1",
        "No gold-context diagnosis of this run yet; run one to label the cases.",
    ]
    assert ok(root, "inspect", lines[-1].split()[-1]) == [
        "refund: under top-k 2: recovered, strength intervention_recovery, best relevant "
        "position 2; no gold-context label"
    ]


def test_a_replay_an_earlier_release_recorded_verifies_as_it_was_made(tmp_path: Path) -> None:
    import subprocess
    import sys

    root = copy_example("support_rag", tmp_path)
    done = oloproof("run", cwd=root)
    assert done.code == 3, done.out + done.err
    run_id = done.lines[0].split()[1]

    def earlier(*intervention: str) -> str:
        """``diagnose`` as a release that wrote diagnoses of schema 5, comparing no contexts,
        ran it."""
        made = subprocess.run(
            [sys.executable, *diagnosis_release(5), "diagnose", run_id, *intervention],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert made.returncode == 0, made.stdout + made.stderr
        return made.stdout.splitlines()[-1].split()[-1]

    earlier("--intervention", "gold-context", "--criterion", "answer_correct")
    address = earlier("--intervention", "top-k", "--top-k", "4", "--criterion", "answer_correct")
    stored = json.loads(oloproof("inspect", address, "--json", cwd=root).out)
    assert "context_unchanged" not in stored["body"]["summary"]  # its four went uncompared
    assert oloproof("diagnose", "--verify", address, cwd=root).code == 0
    assert oloproof("verify", cwd=root).code == 0
