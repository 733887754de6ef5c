"""Under ``relevance_unit: chunk`` a diagnosis and the ``relevant_position`` slice read
relevance as the retrieval metrics do, through the real CLI.

A staged system whose relevant chunk (``kb-01`` ``c2``) is ranked third with a top_k of 2 in one
case and not retrieved at all in another; in both another chunk of the same document stands
first, and the model answers from the first passage. ``hit_rate_at_2`` (chunk) fails both. By
document, the relevant evidence would be at position 1, in the context: a slice of ``1`` and
UNRESOLVED ``recovers_only_with_gold_alone`` ("had already reached the model"), a fact the run
never observed. By chunk the slice says ``below_top_k`` and ``not_retrieved``, and the
diagnosis RANKED_OUT and RETRIEVAL_MISS, with the top-k cut implicated.

A diagnosis recorded before (schema 4, by document) still reads and verifies as it was made, and
a replay does not carry its labels; retrieval metrics that read relevance in different units
leave no one reading, so the slice and a diagnosis that would need one are refused.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.support import INPUT_RETRIEVE, normalise, oloproof, write_project

from ledger import Event
from oloproof import events as ev
from oloproof.bodies import diagnosis_body
from oloproof.diagnosis.derive import derive_diagnosis, diagnosis_refs, put_pages
from oloproof.store import open_project_ledger
from oloproof.stored_runs import load_run

APP = (
    """
import re

from oloproof import Passage, Retrieval, rag_system


@rag_system(name="scripted", version="1", depth=6, top_k=2, index_version="s")
class Scripted:"""
    + INPUT_RETRIEVE
    + """
    def generate(self, input, context):
        if not context.items:
            return {"answer": "none", "citations": []}
        best = context.items[0]
        first = re.split(r"(?<=[.!?])\\s+", best.text or "")[0]
        return {"answer": first, "citations": [best.doc_id]}
"""
)

CONFIG = """\
system:
  name: scripted
  version: "1"
  rag: {{object: app:Scripted, depth: 6, top_k: 2, index_version: s}}
dataset: cases.jsonl
evaluators:
  - {{type: contains, criterion: answer_correct, field: answer, expected_field: answer}}
  - {{type: hit_rate, k: 2, relevance_unit: chunk}}
{more}slices: [relevant_position]
min_slice_support: 1
"""

RIGHT = "Refunds are reviewed within two business days."
WRONG = "Refunds are paid to the card."
GOLD = [{"doc_id": "kb-01", "text": RIGHT}]
RELEVANT = [{"doc_id": "kb-01", "chunk_id": "c2"}]
NEIGHBOUR = {"doc_id": "kb-01", "chunk_id": "c1", "text": WRONG}
OTHER = {"doc_id": "kb-09", "chunk_id": "c1", "text": "Audit trail."}
THE_CHUNK = {"doc_id": "kb-01", "chunk_id": "c2", "text": RIGHT}


def case(case_id: str, candidates: list[dict[str, str]]) -> dict[str, Any]:
    expected = {"answer": "two business days", "relevant": RELEVANT, "gold_context": GOLD}
    return {
        "id": case_id,
        "input": {"question": case_id, "candidates": candidates},
        "expected": expected,
    }


CASES = [
    case("chunk_ranked_out", [NEIGHBOUR, OTHER, THE_CHUNK]),
    case("chunk_not_retrieved", [NEIGHBOUR, OTHER]),
    case("ok", [THE_CHUNK]),
]

GOLD_CONTEXT = ["--intervention", "gold-context", "--criterion", "answer_correct"]

DIAGNOSED = [
    "Selected: 2 failed cases with gold context (observed; no population claim)",
    "Control: 0 of 2 passed when re-executed without the intervention",
    "Recovered under gold context: 2 of 2",
    "RETRIEVAL_MISS: 1 of 2, recovered; no relevant evidence was retrieved",
    "RANKED_OUT: 1 of 2, recovered; relevant evidence was retrieved below the top-k cut",
    "Implicated: the top-k cut, in 1 of the 2 recovered failures.",
    "Candidate experiment: a larger top_k. This is a hypothesis to test, not an established cause.",
    "Candidate experiment: a reranker. This is a hypothesis to test, not an established cause.",
    "Diagnosis sha256:…",
    "Child runs: gold context run_…, control run_…",
    "Cases: oloproof inspect sha256:…",
]

CASE_LINES = [
    "chunk_not_retrieved: RETRIEVAL_MISS, relevant_not_retrieved, strength "
    "intervention_recovery, best relevant position none",
    "chunk_ranked_out: RANKED_OUT, relevant_ranked_out, strength intervention_recovery, "
    "best relevant position 3",
]


def project(root: Path, more: str = "") -> Path:
    return write_project(
        root,
        app=APP,
        config=CONFIG.format(more=more),
        policy="version: 1\nrules: []\n",
        cases=CASES,
    )


def as_json(root: Path, *args: str) -> Any:
    done = oloproof(*args, "--json", cwd=root)
    assert done.code == 0, done.err
    return json.loads(done.out)


def address_of_diagnosis(lines: list[str]) -> str:
    (line,) = [line for line in lines if line.startswith("Diagnosis sha256:")]
    return line.split()[1]


@pytest.fixture(scope="module")
def diagnosed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, str, list[str]]:
    """The project run, and its gold-context diagnosis: (root, run id, address, its lines)."""
    root = project(tmp_path_factory.mktemp("chunk") / "p")
    done = oloproof("run", cwd=root)
    assert done.code == 0, done.out + done.err
    run_id = done.lines[0].split()[1]
    diagnosis = oloproof("diagnose", run_id, *GOLD_CONTEXT, cwd=root)
    assert diagnosis.code == 0, diagnosis.out + diagnosis.err
    return root, run_id, address_of_diagnosis(diagnosis.lines), diagnosis.lines


def test_the_slice_reads_relevance_as_hit_rate_does(
    diagnosed: tuple[Path, str, str, list[str]],
) -> None:
    root, run_id, _, _ = diagnosed
    report = as_json(root, "inspect", run_id)
    (hit_rate,) = [m for m in report["metrics"] if m["criterion"] == "hit_rate_at_2"]
    assert (hit_rate["successes"], hit_rate["observed"]) == (1, 3)
    rows = {
        s["value"]: (s["metric"]["successes"], s["metric"]["observed"])
        for s in report["slices"]
        if s["metric"]["criterion"] == "hit_rate_at_2"
    }
    # The relevant chunk within the cut in the case that passes; below it, and not retrieved,
    # in the two that fail: by document all three read "1".
    assert rows == {"1": (1, 1), "below_top_k": (0, 1), "not_retrieved": (0, 1)}


def test_the_diagnosis_labels_what_the_metric_measured(
    diagnosed: tuple[Path, str, str, list[str]],
) -> None:
    root, _, address, lines = diagnosed
    assert [normalise(line) for line in lines] == DIAGNOSED
    shown = oloproof("inspect", address, cwd=root)
    assert shown.code == 0, shown.err
    assert shown.lines == CASE_LINES
    stored = as_json(root, "inspect", address)
    assert (stored["schema"], stored["body"]["relevance_unit"]) == (14, "chunk")
    verified = oloproof("diagnose", "--verify", address, cwd=root)
    assert verified.code == 0, verified.out
    everything = oloproof("verify", cwd=root)
    assert everything.code == 0, everything.out


def test_a_diagnosis_made_by_document_still_verifies_and_is_not_carried(
    diagnosed: tuple[Path, str, str, list[str]],
) -> None:
    """A diagnosis recorded at schema 4 read relevance by document: it reads and verifies as
    it was made, says so (``relevance_unit: document``), and a replay carries the labels of the
    diagnosis that read the run's unit, not of the older one recorded after it."""
    root, run_id, address, _ = diagnosed
    with open_project_ledger(root, create=False) as ledger:
        body = diagnosis_body(ledger.get(address))
        made = derive_diagnosis(
            ledger,
            load_run(ledger, body["run"]),
            criterion=body["criterion"],
            intervention=body["intervention"],
            child_runs=body["child_runs"],
            carried_from=None,
            schema=4,
            parent_results=body["parent_results"],
        )
        pages = put_pages(ledger, made.records)
        derived = ev.plain(made.body(pages, put_pages(ledger, made.selection.excluded_records())))
        del derived["relevance_unit"]  # schema 4 recorded none
        old = ledger.put(Event(ev.DIAGNOSIS, 4, derived, diagnosis_refs(derived)))
        claimed = {**derived, "relevance_unit": "document"}
        forged = ledger.put(Event(ev.DIAGNOSIS, 5, claimed, diagnosis_refs(claimed)))
    shown = oloproof("inspect", old, cwd=root)
    assert shown.code == 0, shown.err
    assert all(", recovers_only_with_gold_alone, " in line for line in shown.lines), shown.out
    assert as_json(root, "inspect", old)["body"]["relevance_unit"] == "document"
    assert oloproof("diagnose", "--verify", old, cwd=root).code == 0
    # Claiming the document reading at today's schema is a difference verify names.
    done = oloproof("diagnose", "--verify", forged, cwd=root)
    assert done.code == 1, done.out
    assert "  relevance_unit: stored 'document', re-derived 'chunk'" in done.lines
    assert (
        "  case chunk_ranked_out: label stored 'UNRESOLVED', re-derived 'RANKED_OUT'" in done.lines
    )
    everything = oloproof("verify", cwd=root)
    assert everything.code == 1, everything.out
    stale = [line for line in everything.lines if line.startswith("StaleSummary")]
    assert [line.split()[1] for line in stale] == [f"{forged}:"]

    replay = oloproof(
        "diagnose",
        run_id,
        "--intervention",
        "top-k",
        "--top-k",
        "3",
        "--criterion",
        "answer_correct",
        cwd=root,
    )
    assert replay.code == 0, replay.out + replay.err
    assert "Confirmed under top-k 3: 0 of 1 RANKED_OUT cases also recovered" in replay.lines
    assert f"Labels from gold context (diagnosis {address}): 2 of 2 recovered" in replay.lines


def test_retrieval_metrics_in_two_units_leave_no_one_reading(tmp_path: Path) -> None:
    mixed = "  - {type: recall, k: 2, relevance_unit: document}\n"
    root = project(tmp_path / "mixed", more=mixed)
    refused = oloproof("run", cwd=root)
    assert refused.code == 2, refused.out + refused.err
    assert refused.err == (
        f"error: {root / 'oloproof.yaml'}, line 10: slices: relevant_position reads relevance "
        "as the retrieval metrics do, and they read it in different units (hit_rate_at_2: "
        "chunk, recall_at_2: document); give them one relevance_unit\n"
    )
    assert refused.out == ""
    assert not (root / ".oloproof").exists()

    config = root / "oloproof.yaml"
    config.write_text(config.read_text().replace("slices: [relevant_position]\n", ""))
    done = oloproof("run", cwd=root)
    assert done.code == 0, done.out + done.err
    run_id = done.lines[0].split()[1]
    before = as_json(root, "runs", "--all")
    refused = oloproof("diagnose", run_id, *GOLD_CONTEXT, cwd=root)
    assert refused.code == 2, refused.out + refused.err
    assert refused.err == (
        f"error: the retrieval metrics of run {run_id} read relevance in different units "
        "(hit_rate_at_2: chunk, recall_at_2: document), so whether a relevant passage reached "
        "the model on answer_correct has no one answer; give them one relevance_unit and run "
        "it again\n"
    )
    assert as_json(root, "runs", "--all") == before
    with open_project_ledger(root, create=False) as ledger:
        assert list(ledger.events(ev.DIAGNOSIS)) == []


# A release before the slice was refused for metrics in two units: it recorded such a run.
EARLIER = """
from pathlib import Path

import oloproof
from oloproof import runner

runner._check_relevance_unit = lambda *args: None
print(oloproof.evaluate(Path("oloproof.yaml")).run_id)
"""


def test_a_run_recorded_with_the_slice_in_two_units_can_still_be_diagnosed(
    tmp_path: Path,
) -> None:
    # A replay runs the config the run recorded: refusing it would name an oloproof.yaml whose
    # editing changes nothing, and a diagnosis on a retrieval metric needs no one reading.
    root = project(tmp_path / "mixed", more="  - {type: recall, k: 2, relevance_unit: document}\n")
    (root / "rr.py").write_text("def reverse(input, candidates):\n    return candidates[::-1]\n")
    earlier = subprocess.run(
        [sys.executable, "-c", EARLIER], cwd=root, capture_output=True, text=True, check=False
    )
    assert earlier.returncode == 0, earlier.stdout + earlier.stderr
    run_id = earlier.stdout.split()[-1]
    diagnosed = oloproof(
        "diagnose", run_id, "--intervention", "reranker", "--reranker", "rr:reverse",
        "--criterion", "hit_rate_at_2", cwd=root,
    )  # fmt: skip
    assert diagnosed.code == 0, diagnosed.out + diagnosed.err
    assert "Recovered under reranker rr:reverse: 1 of 2" in diagnosed.lines, diagnosed.out
    assert oloproof("verify", cwd=root).code == 0
