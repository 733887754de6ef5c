"""A diagnosis names every parent case it cannot diagnose; none is dropped without a word.

A diagnosis re-executes the parent's failed cases. A case whose system raised has no verdict:
it may have failed, and the diagnosis cannot tell. A case that a stopped parent never reached
has no result at all. Both are excluded, counted and named, through the real CLI:

- the support example with its generator raising on one case that fails in the clean run
  (``refund_review``): the diagnosis selects the three others and excludes that one, with
  the reason its verdict is missing;
- the same example run one case at a time, whose generator returns malformed citations on the
  seventh case, so that the run stops there: the seven cases without a result are counted;
- a diagnosis written before these counts existed (schema 2) still reads and verifies, and
  claims nothing about them.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from typing import Any

import pytest
from tests.support import copy_example, oloproof
from tests.view.support import fetch, serving

from ledger import Event
from oloproof import events as ev
from oloproof.bodies import diagnosis_body
from oloproof.diagnosis.derive import diagnosis_cases, diagnosis_excluded
from oloproof.store import open_project_ledger

BRITTLE = """
import os
import signal
import time
from pathlib import Path

from app import SupportRag
from oloproof import rag_system

RAISE_ON = "{raise_on}"
MALFORMED_ON = "{malformed_on}"
INTERRUPT_ON = "{interrupt_on}"
ARMED = Path(__file__).with_name("armed")


@rag_system(
    name="support-rag",
    version="brittle",
    depth=6,
    top_k=2,
    token_budget=40,
    index_version="kb-2026-09-16",
)
class Brittle(SupportRag):
    def generate(self, input, context):
        if input["question"].startswith(RAISE_ON) and RAISE_ON:
            raise RuntimeError("the model server went away")
        if input["question"].startswith(MALFORMED_ON) and MALFORMED_ON:
            return {{"answer": "broken", "citations": 5}}
        # The first time it reaches this case, the run is interrupted as Ctrl-C would.
        if input["question"].startswith(INTERRUPT_ON) and INTERRUPT_ON and ARMED.exists():
            ARMED.unlink()
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(3600)  # the case never finishes: the interrupted run leaves it behind
        return SupportRag.generate(self, input, context)
"""

GOLD = ("--intervention", "gold-context", "--criterion", "answer_correct")
SELECTED_3 = "Selected: 3 failed cases with gold context (observed; no population claim)"


def brittle(
    tmp_path: Path, *, raise_on: str = "", malformed_on: str = "", interrupt_on: str = ""
) -> Path:
    root = copy_example("support_rag", tmp_path)
    app = BRITTLE.format(raise_on=raise_on, malformed_on=malformed_on, interrupt_on=interrupt_on)
    (root / "brittle.py").write_text(app)
    config = root / "oloproof.yaml"
    config.write_text(config.read_text().replace("app:SupportRag", "brittle:Brittle"))
    return root


def run_id_of(out: str) -> str:
    first = out.splitlines()[0]
    assert first.startswith("Run run_"), out
    return first.split()[1]


def diagnosis_of(out: str) -> str:
    (line,) = [line for line in out.splitlines() if line.startswith("Diagnosis sha256:")]
    return line.split()[1]


def as_json(root: Path, *args: str) -> Any:
    done = oloproof(*args, "--json", cwd=root)
    assert done.code in (0, 1, 3), (args, done.err)
    return json.loads(done.out)


@pytest.fixture(scope="module")
def errored(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, str, list[str]]:
    """A run whose generator raised on refund_review, and its gold-context diagnosis."""
    root = brittle(tmp_path_factory.mktemp("errored"), raise_on="How soon is a refund")
    done = oloproof("run", cwd=root)
    assert done.code == 3, done.err
    run_id = run_id_of(done.out)
    diagnosed = oloproof("diagnose", run_id, *GOLD, cwd=root)
    assert diagnosed.code == 0, diagnosed.err
    return root, run_id, diagnosis_of(diagnosed.out), diagnosed.lines


def test_an_errored_case_is_excluded_and_named_not_dropped(
    errored: tuple[Path, str, str, list[str]],
) -> None:
    root, run_id, address, lines = errored
    assert lines[:2] == [
        SELECTED_3,
        "Excluded: 1 case with no verdict on answer_correct in the parent run (1 "
        "execution_errored), so whether it failed is unknown - oloproof inspect "
        f"{run_id} --failures shows why",
    ]
    stored = as_json(root, "inspect", address)
    assert stored["schema"] == 14
    summary = stored["body"]["summary"]
    assert (summary["selected"], summary["excluded"]) == (3, 0)
    assert (summary["no_verdict"], summary["unfinished"]) == ({"execution_errored": 1}, 0)
    with open_project_ledger(root, create=False) as ledger:
        body = diagnosis_body(ledger.get(address))
        assert list(diagnosis_excluded(ledger, body)) == [
            {"case_id": "refund_review", "reason": "no_verdict", "why": "execution_errored"}
        ]
        assert "refund_review" not in [c["case_id"] for c in diagnosis_cases(ledger, body)]
    # The stored diagnosis, inspected, says so after its case lines, and names the case.
    shown = oloproof("inspect", address, cwd=root)
    assert shown.code == 0, shown.err
    assert shown.lines[-2:] == [lines[1], "  refund_review (execution_errored)"]
    verified = oloproof("diagnose", "--verify", address, cwd=root)
    assert verified.code == 0, verified.out
    assert oloproof("verify", cwd=root).code == 0
    # The viewer's page of the diagnosis has the same line and names the case under it, linked
    # to its case in the parent.
    with serving(root) as url:
        status, page = fetch(f"{url}/diagnoses/{address}")
    assert status == 200, page
    text = re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", page)))
    assert f"{lines[1]} refund_review (execution_errored)" in text
    assert f'href="/runs/{run_id}/cases/refund_review"' in page


def test_the_cases_a_stopped_parent_never_reached_are_counted(tmp_path: Path) -> None:
    root = brittle(tmp_path, malformed_on="How often are failed webhook")  # the 7th line
    done = oloproof("run", "--concurrency", "1", cwd=root)
    assert done.code == 2, (done.out, done.err)
    (run_id,) = [row["run_id"] for row in as_json(root, "runs") if row["state"] == "stopped"]
    listing = as_json(root, "inspect", run_id, "--failures")
    never = len(listing["unfinished"]) + listing["unfinished_unnamed"]
    assert never == 7  # webhook_retries and the six lines after it

    diagnosed = oloproof("diagnose", run_id, *GOLD, cwd=root)
    assert diagnosed.code == 0, diagnosed.err
    assert (
        "Excluded: 7 planned cases never finished in the parent run, so whether they failed "
        "is unknown" in diagnosed.lines
    )
    address = diagnosis_of(diagnosed.out)
    summary = as_json(root, "inspect", address)["body"]["summary"]
    assert summary["unfinished"] == 7
    assert summary["no_verdict"] == {}
    assert oloproof("diagnose", "--verify", address, cwd=root).code == 0


def test_a_diagnosis_from_before_the_counts_reads_and_claims_nothing_of_them(
    errored: tuple[Path, str, str, list[str]],
) -> None:
    root, _, address, _ = errored
    with open_project_ledger(root, create=False) as ledger:
        event = ledger.get(address)
        body = ev.plain(event.body)
        summary = body["summary"]
        del summary["no_verdict"], summary["unfinished"]
        # Schema 2 listed only the failed cases without gold context (none here).
        old_refs = [ref for ref in event.refs if ref not in body["excluded_pages"]]
        old = ledger.put(Event(ev.DIAGNOSIS, 2, {**body, "excluded_pages": []}, old_refs))
    shown = oloproof("inspect", old, cwd=root)
    assert shown.code == 0, shown.err
    assert shown.lines == oloproof("inspect", address, cwd=root).lines[:-2]
    assert not any(line.startswith("Excluded:") for line in shown.lines)
    summary = as_json(root, "inspect", old)["body"]["summary"]
    assert (summary["no_verdict"], summary["unfinished"]) == (None, None)
    verified = oloproof("diagnose", "--verify", old, cwd=root)
    assert verified.code == 0, verified.out
    assert verified.out.startswith(f"Diagnosis {old}: every")
    # Claiming no unjudged case at schema 3 is a difference verify names.
    with open_project_ledger(root, create=False) as ledger:
        forged = ledger.put(Event(ev.DIAGNOSIS, 3, {**body, "excluded_pages": []}, old_refs))
    done = oloproof("diagnose", "--verify", forged, cwd=root)
    assert done.code == 1, done.out
    assert "no_verdict" in done.out


def test_a_diagnosis_of_an_interrupted_run_still_verifies_once_the_run_is_resumed(
    tmp_path: Path,
) -> None:
    """A diagnosis reads the parent's results as they were: resuming the parent later adds
    results, and must not make ``verify`` call the diagnosis stale."""
    root = brittle(tmp_path, interrupt_on="How often are failed webhook")  # the 7th line
    (root / "armed").touch()
    stopped = oloproof("run", "--concurrency", "1", cwd=root)
    assert stopped.code == 130, stopped.out + stopped.err
    run_id = stopped.err.split("--resume ")[1].split()[0]
    early = oloproof("diagnose", run_id, *GOLD, cwd=root)
    assert early.code == 0, early.err
    assert early.lines[:2] == [
        SELECTED_3,
        "Excluded: 7 planned cases never finished in the parent run, so whether they failed "
        "is unknown",
    ]
    address = diagnosis_of(early.out)
    assert as_json(root, "inspect", address)["body"]["parent_results"] == 6

    resumed = oloproof("run", "--resume", run_id, cwd=root)
    assert resumed.code == 3, resumed.err  # complete now: the gate blocks, as on the example
    verified = oloproof("diagnose", "--verify", address, cwd=root)
    assert verified.code == 0, verified.out
    everything = oloproof("verify", cwd=root)
    assert everything.code == 0, everything.out
    # A diagnosis made now reads all 13 results: the fourth failure, and nothing unfinished.
    late = oloproof("diagnose", run_id, *GOLD, cwd=root)
    assert late.code == 0, late.err
    assert (
        late.lines[0]
        == "Selected: 4 failed cases with gold context (observed; no population claim)"
    )
    assert not any(line.startswith("Excluded:") for line in late.lines)
    assert as_json(root, "inspect", diagnosis_of(late.out))["body"]["parent_results"] == 13
