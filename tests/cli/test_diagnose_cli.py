"""`oloproof diagnose`, end to end: the real CLI in subprocesses over copies of the examples.

Golden outputs are the spec's (rag-evaluation-guide.md and the tutorial), with addresses and run
ids normalised.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from ledger import Event
from oloproof import events as ev
from oloproof.diagnosis.audit import diagnosis_checks, verify_diagnosis
from oloproof.store import open_project_ledger
from oloproof.stored_runs import load_run

REPO = Path(__file__).resolve().parents[2]
SRC = REPO / "src"
EXAMPLES = REPO / "examples"

ADDRESS = re.compile(r"sha256:[0-9a-f]{64}")
RUN_ID = re.compile(r"run_[0-9A-Z]{26}")

GOLD = ["--intervention", "gold-context", "--criterion", "answer_correct"]
TOP_K = ["--intervention", "top-k", "--top-k", "4", "--criterion", "answer_correct"]
RERANK = "--intervention reranker --reranker rerank:shortest_first --criterion answer_correct"

SELECTED_4 = "Selected: 4 failed cases with gold context (observed; no population claim)"
SELECTED_2 = "Selected: 2 failed cases with gold context (observed; no population claim)"
EXCLUDED_2 = (
    "Excluded: 2 failed cases, no_gold_context - declare the passages that would have answered "
    "the case in its `expected.gold_context`, as a list of `{doc_id, text}` objects; an "
    "intervention needs them to tell a retrieval failure from a generation one"
)
LABELS_4 = [
    "RETRIEVAL_MISS: 1 of 4, recovered; no relevant evidence was retrieved",
    "CONTEXT_ASSEMBLY_LOSS: 2 of 4, recovered; relevant evidence within top-k was left out of "
    "the context",
    "GENERATION_FAILURE: 1 of 4, still failed with the gold context",
]
GOLD_LINES = [
    SELECTED_4,
    "Control: 0 of 4 passed when re-executed without the intervention",
    "Recovered under gold context: 3 of 4",
    *LABELS_4,
    "Implicated: context budget, in 2 of the 3 recovered failures.",
    "Candidate experiment: a larger token budget. This is a hypothesis to test, not an "
    "established cause.",
    "Candidate experiment: smaller chunks. This is a hypothesis to test, not an established cause.",
    "Diagnosis sha256:…",
    "Child runs: gold context run_…, control run_…",
    "Cases: oloproof inspect sha256:…",
]
CASE_LINES = [
    "money_back: RETRIEVAL_MISS, relevant_not_retrieved, strength intervention_recovery, "
    "best relevant position none",
    "refund_review: CONTEXT_ASSEMBLY_LOSS, relevant_dropped_from_context, strength "
    "intervention_recovery, best relevant position 2",
    "seat_count: GENERATION_FAILURE, fails_with_gold_context, strength "
    "intervention_non_recovery, best relevant position 1",
    "security_review: CONTEXT_ASSEMBLY_LOSS, relevant_dropped_from_context, strength "
    "intervention_recovery, best relevant position 2",
]


def replay_lines(label: str) -> list[str]:
    return [
        SELECTED_4,
        "Control: 0 of 4 passed when re-executed without the intervention",
        f"Recovered under {label}: 0 of 4",
        f"Confirmed under {label}: 0 of 0 RANKED_OUT cases also recovered",
        "Labels from gold context (diagnosis sha256:…): 3 of 4 recovered",
        *LABELS_4,
        "Diagnosis sha256:…",
        f"Child runs: gold context run_…, control run_…, {label} run_…, replay control run_…",
        "Cases: oloproof inspect sha256:…",
    ]


def environment() -> dict[str, str]:
    path = os.pathsep.join(p for p in (str(SRC), os.environ.get("PYTHONPATH")) if p)
    return {**os.environ, "PYTHONPATH": path, "PYTHONDONTWRITEBYTECODE": "1"}


def oloproof(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "oloproof", *args],
        cwd=cwd,
        env=environment(),
        capture_output=True,
        text=True,
        timeout=300,
    )


def ok(*args: str, cwd: Path) -> str:
    done = oloproof(*args, cwd=cwd)
    assert done.returncode == 0, done.stderr + done.stdout
    return done.stdout


def normalise(text: str) -> list[str]:
    return RUN_ID.sub("run_…", ADDRESS.sub("sha256:…", text)).splitlines()


def address_in(line: str) -> str:
    found = ADDRESS.search(line)
    assert found is not None, line
    return found.group(0)


@dataclass(frozen=True)
class Project:
    path: Path
    run_id: str


def make_project(root: Path, example: str, edit: dict[str, list[str]] | None = None) -> Project:
    """Copy an example, apply ``edit`` (case id → expected fields to delete) and run it."""
    path = root / example
    shutil.copytree(EXAMPLES / example, path, ignore=shutil.ignore_patterns(".oloproof"))
    if edit:
        cases = path / "cases.jsonl"
        records = [json.loads(line) for line in cases.read_text().splitlines() if line]
        for record in records:
            for field in edit.get(record["id"], []):
                del record["expected"][field]
        cases.write_text("".join(json.dumps(r) + "\n" for r in records))
    done = oloproof("run", cwd=path)
    assert done.returncode in (0, 1, 3), done.stderr
    found = RUN_ID.search(done.stdout.splitlines()[0])
    assert found is not None, done.stdout
    return Project(path, found.group(0))


@pytest.fixture(scope="module")
def support(tmp_path_factory: pytest.TempPathFactory) -> Project:
    return make_project(tmp_path_factory.mktemp("support"), "support_rag")


@pytest.fixture(scope="module")
def blackbox(tmp_path_factory: pytest.TempPathFactory) -> Project:
    return make_project(tmp_path_factory.mktemp("blackbox"), "blackbox_rag")


def runs(project: Project) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = json.loads(ok("runs", "--all", "--json", cwd=project.path))
    return rows


def diagnoses(project: Project) -> list[str]:
    ledger = open_project_ledger(project.path, create=False)
    try:
        return [address for address, _ in ledger.events(ev.DIAGNOSIS)]
    finally:
        ledger.close()


# -- staged: gold context -----------------------------------------------------------------


def test_gold_context_prints_the_spec_lines(support: Project) -> None:
    out = ok("diagnose", support.run_id, *GOLD, cwd=support.path)
    assert normalise(out) == GOLD_LINES
    lines = out.splitlines()
    assert address_in(lines[-3]) == address_in(lines[-1])


def test_the_child_runs_are_real_runs_of_the_parent(support: Project) -> None:
    out = ok("diagnose", support.run_id, *GOLD, cwd=support.path)
    child_ids = RUN_ID.findall(out.splitlines()[-2])
    assert len(child_ids) == 2
    children = {r["run_id"]: r for r in runs(support)}
    for run_id in child_ids:
        assert children[run_id]["child_of"] == support.run_id
        assert children[run_id]["cases"] == 4
        report = ok("inspect", run_id, cwd=support.path)
        assert report.startswith(f"Run {run_id}")


def test_inspect_lists_the_case_behind_every_count(support: Project) -> None:
    out = ok("diagnose", support.run_id, *GOLD, cwd=support.path)
    address = address_in(out.splitlines()[-1])
    assert ok("inspect", address, cwd=support.path).splitlines() == CASE_LINES
    assert ok("inspect", address[:20], cwd=support.path).splitlines() == CASE_LINES


def test_json_output_carries_the_labels(support: Project) -> None:
    data = json.loads(ok("diagnose", support.run_id, *GOLD, "--json", cwd=support.path))
    body = data["diagnosis"]
    assert body["run_id"] == support.run_id
    assert body["selected"] == ["money_back", "refund_review", "seat_count", "security_review"]
    assert {c["case_id"]: c["label"] for c in body["cases"]} == {
        "money_back": "RETRIEVAL_MISS",
        "refund_review": "CONTEXT_ASSEMBLY_LOSS",
        "security_review": "CONTEXT_ASSEMBLY_LOSS",
        "seat_count": "GENERATION_FAILURE",
    }
    assert [c["label"] for c in body["child_runs"]] == ["gold context", "control"]


# -- staged: replays ----------------------------------------------------------------------


def test_top_k_replays_the_retrieval_and_carries_the_gold_labels(support: Project) -> None:
    gold = ok("diagnose", support.run_id, *GOLD, cwd=support.path).splitlines()
    out = ok("diagnose", support.run_id, *TOP_K, cwd=support.path)
    assert normalise(out) == replay_lines("top-k 4")
    lines = out.splitlines()
    assert address_in(lines[4]) == address_in(gold[-1])  # the latest gold-context diagnosis
    assert lines[-2].startswith(gold[-2] + ", top-k 4 run_")


def test_a_replay_generates_afresh_where_its_context_is_the_parents(support: Project) -> None:
    """Under the example's token budget, top-k 4 assembles the very contexts the run had: the
    replay must still ask the model again, never read back the answers the run failed with."""
    ok("diagnose", support.run_id, *GOLD, cwd=support.path)
    out = ok("diagnose", support.run_id, *TOP_K, cwd=support.path)
    assert normalise(out) == replay_lines("top-k 4")
    for run_id in RUN_ID.findall(out.splitlines()[-2])[-2:]:
        report = json.loads(ok("inspect", run_id, "--json", cwd=support.path))
        assert report["stages"]["generate"] == [0, 4], run_id


def test_reranker_replays_through_the_users_function(support: Project) -> None:
    ok("diagnose", support.run_id, *GOLD, cwd=support.path)
    out = ok("diagnose", support.run_id, *RERANK.split(), cwd=support.path)
    assert normalise(out) == replay_lines("reranker rerank:shortest_first")
    address = address_in(out.splitlines()[-1])
    first = ok("inspect", address, cwd=support.path).splitlines()[0]
    # Its retriever found nothing for money_back: the reranker handed the model the very
    # context the control did, so it tested nothing there.
    assert first == (
        "money_back: under reranker rerank:shortest_first: UNRESOLVED, context_unchanged, "
        "strength none, best relevant position none; gold context: RETRIEVAL_MISS, "
        "relevant_not_retrieved"
    )


# -- verification -------------------------------------------------------------------------


def test_verify_re_derives_every_diagnosis_and_catches_a_tampered_one(support: Project) -> None:
    gold = address_in(ok("diagnose", support.run_id, *GOLD, cwd=support.path).splitlines()[-1])
    top_k = address_in(ok("diagnose", support.run_id, *TOP_K, cwd=support.path).splitlines()[-1])
    for address in (gold, top_k):
        out = ok("diagnose", "--verify", address, cwd=support.path)
        assert out.startswith(f"Diagnosis {address}: every label and count re-derives")

    ledger = open_project_ledger(support.path, create=False)
    try:
        event = ledger.get(gold)
        body = json.loads(json.dumps(event.body))
        (page_address,) = body["case_pages"]
        page = ledger.get(page_address)
        records = json.loads(json.dumps(page.body["records"]))
        for case in records:
            if case["case_id"] == "money_back":
                case["label"] = "RANKED_OUT"
        forged_page = ledger.put(Event(page.type, page.schema, {"records": records}))
        body["case_pages"] = [forged_page]
        body["summary"]["recovered"] = 4
        refs = [r if r != page_address else forged_page for r in event.refs]
        forged = ledger.put(Event(event.type, event.schema, body, refs))
        stale = {(p.kind, p.address) for p in diagnosis_checks(ledger)}
        assert stale == {("StaleSummary", forged)}
        assert verify_diagnosis(ledger, gold) == []
    finally:
        ledger.close()
    done = oloproof("diagnose", "--verify", forged, cwd=support.path)
    assert done.returncode == 1, done.stderr
    assert done.stdout.splitlines() == [
        f"Diagnosis {forged} does not match what the ledger re-derives:",
        "  case money_back: label stored 'RANKED_OUT', re-derived 'RETRIEVAL_MISS'",
        "  summary.recovered: stored 4, re-derived 3",
    ]
    # `oloproof verify` re-derives every diagnosis too, and names the forged one alone.
    done = oloproof("verify", cwd=support.path)
    assert done.returncode == 1, done.stdout + done.stderr
    assert [line for line in done.stdout.splitlines() if "problem" in line or "Stale" in line] == [
        f"StaleSummary {forged}: diagnosis: case money_back: label stored 'RANKED_OUT', "
        "re-derived 'RETRIEVAL_MISS'; summary.recovered: stored 4, re-derived 3",
        done.stdout.splitlines()[-1],
    ]
    assert done.stdout.splitlines()[-1].endswith(": 1 problem(s)")


# -- cases with and without gold passages -------------------------------------------------


def test_cases_without_gold_passages_are_excluded_not_dropped(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    project = make_project(
        tmp_path_factory.mktemp("variant"),
        "support_rag",
        {"seat_count": ["gold_context"], "money_back": ["gold_context", "relevant"]},
    )
    # A replay before any gold-context diagnosis has no labels to carry.
    replay = normalise(ok("diagnose", project.run_id, *TOP_K, cwd=project.path))
    assert replay == [
        SELECTED_2,
        EXCLUDED_2,
        "Control: 0 of 2 passed when re-executed without the intervention",
        "Recovered under top-k 4: 0 of 2",
        "No gold-context diagnosis of this run yet; run one to label the cases.",
        "Diagnosis sha256:…",
        "Child runs: top-k 4 run_…, replay control run_…",
        "Cases: oloproof inspect sha256:…",
    ]

    out = normalise(ok("diagnose", project.run_id, *GOLD, cwd=project.path))
    assert out[:5] == [
        SELECTED_2,
        EXCLUDED_2,
        "Control: 0 of 2 passed when re-executed without the intervention",
        "Recovered under gold context: 2 of 2",
        "CONTEXT_ASSEMBLY_LOSS: 2 of 2, recovered; relevant evidence within top-k was left out "
        "of the context",
    ]
    assert out[5] == "Implicated: context budget, in 2 of the 2 recovered failures."


def test_a_criterion_no_case_failed_says_so(support: Project) -> None:
    out = ok(
        "diagnose",
        support.run_id,
        "--intervention",
        "gold-context",
        "--criterion",
        "citations_valid",
        cwd=support.path,
    )
    assert normalise(out)[:2] == [
        "Selected: 0 failed cases with gold context (observed; no population claim)",
        "Nothing was re-executed: no case failed citations_valid in the parent run.",
    ]


# -- black box ----------------------------------------------------------------------------


def test_a_black_box_is_never_re_executed(blackbox: Project) -> None:
    before = len(runs(blackbox))
    for args in (GOLD, TOP_K, RERANK.replace("rerank:shortest_first", "app:run").split()):
        out = ok("diagnose", blackbox.run_id, *args, cwd=blackbox.path)
        assert normalise(out) == [
            SELECTED_4,
            "UNRESOLVED: 4 of 4, the system is not staged, so no case was re-executed",
            "Diagnosis sha256:…",
            "Cases: oloproof inspect sha256:…",
        ]
        address = address_in(out.splitlines()[-1])
        cases = ok("inspect", address, cwd=blackbox.path).splitlines()
        assert [line.split(":")[0] for line in cases] == [
            "money_back",
            "refund_review",
            "seat_count",
            "security_review",
        ]
        assert all(
            ": UNRESOLVED, intervention_unsupported, strength none, " in line for line in cases
        )
        ok("diagnose", "--verify", address, cwd=blackbox.path)
    assert len(runs(blackbox)) == before


def test_an_http_black_box_is_never_re_executed(tmp_path: Path) -> None:
    path = tmp_path / "blackbox_rag"
    shutil.copytree(EXAMPLES / "blackbox_rag", path, ignore=shutil.ignore_patterns(".oloproof"))
    with subprocess.Popen(
        [sys.executable, "server.py", "0"],
        cwd=path,
        env=environment(),
        stdout=subprocess.PIPE,
        text=True,
    ) as server:
        try:
            assert server.stdout is not None
            found = re.search(r"http://127\.0\.0\.1:\d+/answer", server.stdout.readline())
            assert found is not None
            config = path / "oloproof.http.yaml"
            config.write_text(config.read_text().replace("http://127.0.0.1:8766/answer", found[0]))
            done = oloproof("run", "--config", "oloproof.http.yaml", cwd=path)
            assert done.returncode in (0, 1, 3), done.stderr
            run_id = RUN_ID.findall(done.stdout)[0]
            out = ok("diagnose", run_id, *GOLD, cwd=path)
        finally:
            server.terminate()
    assert normalise(out) == [
        SELECTED_4,
        "UNRESOLVED: 4 of 4, the system is not staged, so no case was re-executed",
        "Diagnosis sha256:…",
        "Cases: oloproof inspect sha256:…",
    ]


# -- bad input ----------------------------------------------------------------------------


def bad_inputs(run_id: str) -> Iterator[list[str]]:
    yield ["run_00000000000000000000000000", *GOLD]
    yield [run_id, "--intervention", "gold-context", "--criterion", "no_such_criterion"]
    yield [run_id, "--intervention", "top-k", "--criterion", "answer_correct"]
    yield [run_id, "--intervention", "top-k", "--top-k", "0", "--criterion", "answer_correct"]
    yield [run_id, "--intervention", "magic", "--criterion", "answer_correct"]
    yield [run_id, "--intervention", "reranker", "--criterion", "answer_correct"]
    yield [run_id, *RERANK.replace("shortest_first", "missing").split()]
    yield [run_id, *RERANK.replace("rerank:shortest_first", "no_colon").split()]
    yield [run_id, *RERANK.replace("rerank:", "no_such_module:").split()]
    yield [run_id, "--criterion", "answer_correct"]
    yield ["--verify", run_id]
    yield ["--verify", "sha256:0000000000"]


def test_bad_input_exits_2_and_writes_nothing(support: Project) -> None:
    before = (len(runs(support)), len(diagnoses(support)))
    for args in bad_inputs(support.run_id):
        done = oloproof("diagnose", *args, cwd=support.path)
        assert done.returncode == 2, (args, done.stdout, done.stderr)
        assert done.stderr.startswith("error: "), (args, done.stderr)
        assert done.stdout == "", args
    assert (len(runs(support)), len(diagnoses(support))) == before


@pytest.mark.parametrize("reference", ["../../rerank:shortest_first", ".rerank:f", "a/rerank:f"])
def test_a_reranker_given_as_a_path_is_asked_for_as_a_module(
    support: Project, reference: str
) -> None:
    done = oloproof(
        "diagnose",
        support.run_id,
        *RERANK.split()[:2],
        "--reranker",
        reference,
        "--criterion",
        "answer_correct",
        cwd=support.path,
    )
    assert (done.returncode, done.stdout) == (2, ""), done.stderr
    assert done.stderr == (
        "error: oloproof diagnose: --reranker: expected `module:name`, a module's dotted name "
        "as Python imports it from the project folder (`rerank` or `pkg.rerank`, not a path) "
        f"and a name in it, found {reference!r}\n"
    )


def test_a_child_run_is_not_diagnosed_again(support: Project) -> None:
    out = ok("diagnose", support.run_id, *GOLD, cwd=support.path)
    child = RUN_ID.findall(out.splitlines()[-2])[0]
    done = oloproof("diagnose", child, *GOLD, cwd=support.path)
    assert done.returncode == 2
    assert f"diagnose {support.run_id} instead" in done.stderr


def test_a_diagnosis_needs_the_ledger_not_the_files_the_parent_read(tmp_path: Path) -> None:
    """The child runs re-execute the parent's cases from the ledger, under the config and system
    the parent recorded: a cases file edited or removed since, or a policy file removed, changes
    nothing, and each child run names the cases file as the parent read it."""
    project = make_project(tmp_path, "support_rag")
    (project.path / "cases.jsonl").write_text('{"id": "only", "input": {"question": "?"}}\n')
    out = ok("diagnose", project.run_id, *GOLD, cwd=project.path)
    assert normalise(out) == GOLD_LINES
    (project.path / "cases.jsonl").unlink()
    (project.path / "policy.yaml").unlink()
    out = ok("diagnose", project.run_id, *GOLD, cwd=project.path)
    assert normalise(out) == GOLD_LINES
    ledger = open_project_ledger(project.path, create=False)
    try:
        parent = load_run(ledger, project.run_id).body
        children = [r for r in runs(project) if r["child_of"] == project.run_id]
        assert len(children) == 4
        for child in children:
            body = load_run(ledger, child["run_id"]).body
            assert body["dataset"] == parent["dataset"], child["run_id"]
            assert body["planned_cases"] == 4
    finally:
        ledger.close()
