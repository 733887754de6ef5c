"""A diagnosis whose child run stops or is interrupted is still recorded, as stopped.

The support example is run with a subclass whose stages can be broken from outside (a flag
file beside it): the parent run is clean, then a flag makes the control's retrieval malformed
(the gold-context run never retrieves, so it completes), or makes generation malformed (the
first child run stops), or makes retrieval hang until the diagnosis is cancelled. Every run is
real: planned from its own oloproof.yaml and executed into a real ledger.
"""

from __future__ import annotations

import asyncio
import html
import json
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.support import copy_example, oloproof
from tests.view.support import fetch, serving

from ledger import Ledger
from oloproof import events as ev
from oloproof.audit import application_checks
from oloproof.diagnosis import DiagnosisStoppedError, adiagnose, diagnose, verify_diagnosis
from oloproof.diagnosis.derive import diagnosis_cases, latest_gold_diagnosis
from oloproof.errors import ArtifactError
from oloproof.runner import execute_run, plan_run
from oloproof.store import open_project_ledger

BRITTLE = """
import asyncio
from pathlib import Path

from app import SupportRag
from oloproof import rag_system

FLAGS = Path(__file__).parent


@rag_system(
    name="support-rag",
    version="brittle",
    depth=6,
    top_k=2,
    token_budget=40,
    index_version="kb-2026-09-16",
)
class Brittle(SupportRag):
    async def retrieve(self, input, depth):
        if (FLAGS / "HANG_RETRIEVE").exists():
            await asyncio.sleep(3600)
        if (FLAGS / "BREAK_RETRIEVE").exists():
            return {"query": "broken", "candidates": ["kb-01"]}
        return SupportRag.retrieve(self, input, depth)

    def generate(self, input, context):
        if (FLAGS / "BREAK_GENERATE").exists():
            return {"answer": "broken", "citations": 5}
        return SupportRag.generate(self, input, context)
"""

GOLD = {"intervention": "gold-context", "criterion": "answer_correct"}
RUN_ID = re.compile(r"run_[0-9A-Z]{26}")


@pytest.fixture
def project(tmp_path: Path) -> Iterator[tuple[Path, Ledger, str]]:
    root = copy_example("support_rag", tmp_path)
    (root / "brittle.py").write_text(BRITTLE)
    config = root / "oloproof.yaml"
    config.write_text(config.read_text().replace("app:SupportRag", "brittle:Brittle"))
    ledger = open_project_ledger(root)
    try:
        outcome = asyncio.run(execute_run(ledger, plan_run(config)))
        yield root, ledger, outcome.run_id
    finally:
        ledger.close()


def child_runs_of(ledger: Ledger, run_id: str) -> dict[str, dict[str, Any]]:
    """Every child run of ``run_id`` in the ledger: address -> its ``parent`` record."""
    return {
        address: dict(event.body["parent"])
        for address, event in ledger.events(ev.RUN)
        if (event.body.get("parent") or {}).get("diagnosis_of") == run_id
    }


def linked_runs(ledger: Ledger) -> set[str]:
    """The run addresses some diagnosis links as a child run."""
    return {
        child["address"]
        for _, event in ledger.events(ev.DIAGNOSIS)
        for child in event.body["child_runs"]
    }


def run_end_state(ledger: Ledger, run_id: str) -> str:
    ends = [ledger.get(a) for a in ledger.lookup("run_meta", run_id)]
    return str([e for e in ends if e.type == ev.RUN_END][-1].body["state"])


def test_a_control_that_stops_leaves_a_stopped_diagnosis_linking_both_runs(
    project: tuple[Path, Ledger, str],
) -> None:
    root, ledger, run_id = project
    (root / "BREAK_RETRIEVE").touch()
    with pytest.raises(DiagnosisStoppedError) as caught:
        diagnose(ledger, run_id, **GOLD)
    error = caught.value
    assert isinstance(error.cause, ArtifactError)
    diagnosis = error.diagnosis
    assert str(error).endswith(f"; the diagnosis is recorded as stopped: {diagnosis.address}")

    body = diagnosis.body
    assert diagnosis.state == "stopped"
    gold, control = body["child_runs"]
    assert (gold["label"], control["label"]) == ("gold context", "control")
    assert run_end_state(ledger, gold["run_id"]) == "complete"
    assert run_end_state(ledger, control["run_id"]) == "stopped"
    assert body["reason"].startswith(f"the control run {control['run_id']} stopped: case ")
    assert "malformed retrieval/v1" in body["reason"]
    # No case was observed under the control, so none is labelled from it.
    assert {(c["label"], c["reason"]) for c in diagnosis_cases(ledger, body)} == {
        ("UNRESOLVED", "control_not_observed")
    }
    # Every child run written is linked by the diagnosis: none is left orphaned.
    assert set(child_runs_of(ledger, run_id)) == linked_runs(ledger)
    assert sorted(ledger.get(diagnosis.address).refs) == sorted(
        [body["run"], gold["address"], control["address"], *body["case_pages"]]
    )
    # It re-derives, state and reason included, and verify finds nothing stale.
    assert verify_diagnosis(ledger, diagnosis.address) == []
    assert list(application_checks(ledger)) == []
    # A replay never carries labels from a stopped gold-context diagnosis.
    unit, read = body["relevance_unit"], body["parent_results"]
    assert latest_gold_diagnosis(ledger, run_id, "answer_correct", unit, read) is None


def test_a_first_child_run_that_stops_is_linked_and_the_second_never_starts(
    project: tuple[Path, Ledger, str],
) -> None:
    root, ledger, run_id = project
    (root / "BREAK_GENERATE").touch()
    with pytest.raises(DiagnosisStoppedError) as caught:
        diagnose(ledger, run_id, **GOLD)
    body = caught.value.diagnosis.body
    assert [c["label"] for c in body["child_runs"]] == ["gold context"]
    assert body["state"] == "stopped"
    assert body["reason"].startswith(f"the gold context run {body['child_runs'][0]['run_id']}")
    assert "malformed citations/v1" in body["reason"]
    assert set(child_runs_of(ledger, run_id)) == linked_runs(ledger)
    assert verify_diagnosis(ledger, caught.value.diagnosis.address) == []


def test_an_interrupted_diagnosis_is_recorded_as_interrupted(
    project: tuple[Path, Ledger, str],
) -> None:
    root, ledger, run_id = project
    (root / "HANG_RETRIEVE").touch()

    async def cancel_once_the_control_runs() -> None:
        task = asyncio.create_task(adiagnose(ledger, run_id, **GOLD))
        deadline = time.monotonic() + 60
        while not any(p["label"] == "control" for p in child_runs_of(ledger, run_id).values()):
            assert time.monotonic() < deadline, "the control run never started"
            await asyncio.sleep(0.02)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(cancel_once_the_control_runs())
    (address, event), *others = list(ledger.events(ev.DIAGNOSIS))
    assert others == []
    assert event.body["state"] == "interrupted"
    assert event.body["reason"].startswith("the control run run_")
    assert [c["label"] for c in event.body["child_runs"]] == ["gold context", "control"]
    assert set(child_runs_of(ledger, run_id)) == linked_runs(ledger)
    assert verify_diagnosis(ledger, address) == []


def test_an_interrupted_diagnosis_links_its_own_child_not_a_newer_one_of_the_same_kind(
    project: tuple[Path, Ledger, str],
) -> None:
    # Two diagnoses of one run with the same intervention, each at its control (held); the
    # first is interrupted. Before: it linked the newest control run of the same kind, the
    # second diagnosis's, and left its own orphaned.
    root, ledger, run_id = project
    (root / "HANG_RETRIEVE").touch()

    def controls() -> list[str]:
        found = child_runs_of(ledger, run_id).items()
        return [address for address, parent in found if parent["label"] == "control"]

    async def until(count: int) -> None:
        deadline = time.monotonic() + 60
        while len(controls()) < count:
            assert time.monotonic() < deadline, "a control run never started"
            await asyncio.sleep(0.02)

    async def two_then_cancel_the_first() -> None:
        first = asyncio.create_task(adiagnose(ledger, run_id, **GOLD))
        await until(1)
        second = asyncio.create_task(adiagnose(ledger, run_id, **GOLD))
        await until(2)
        for task in (first, second):
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task

    asyncio.run(two_then_cancel_the_first())
    older, newer = controls()  # in the order they were written
    recorded = [event.body for _, event in ledger.events(ev.DIAGNOSIS)]
    assert [[c["address"] for c in body["child_runs"]][-1] for body in recorded] == [older, newer]
    assert set(child_runs_of(ledger, run_id)) == linked_runs(ledger)


def test_the_cli_exits_2_naming_the_stopped_diagnosis_and_inspect_says_so(
    project: tuple[Path, Ledger, str],
) -> None:
    root, ledger, run_id = project
    ledger.close()
    (root / "BREAK_RETRIEVE").touch()
    done = oloproof(
        "diagnose",
        run_id,
        "--intervention",
        "gold-context",
        "--criterion",
        "answer_correct",
        cwd=root,
    )
    assert done.code == 2, done.err
    assert done.out == ""
    (line,) = done.err.splitlines()
    assert RUN_ID.sub("run_…", line).startswith("error: the control run run_… stopped: case ")
    found = re.search(r"; the diagnosis is recorded as stopped: (sha256:[0-9a-f]{64})$", line)
    assert found is not None, line
    shown = oloproof("inspect", found[1], cwd=root)
    assert shown.code == 0, shown.err
    first, *cases = shown.lines
    assert RUN_ID.sub("run_…", first).startswith("Stopped: the control run run_… stopped: case ")
    assert len(cases) == 4
    assert all(": UNRESOLVED, control_not_observed, strength none, " in c for c in cases), cases
    # The viewer's page says so in the same line, among its counts.
    with serving(root) as url:
        status, page = fetch(f"{url}/diagnoses/{found[1]}")
    assert status == 200, page
    warned = re.findall(r'<ul class="counts">.*?<li class="warn">(.*?)</li>', page, re.S)
    assert [html.unescape(re.sub(r"<[^>]+>", "", item)) for item in warned] == [first]
    # The stopped control's unfinished cases are counted; their ids are the parent's, not the
    # cases file's, so the listing says so instead of naming any from the file.
    control = RUN_ID.findall(line)[0]
    (row,) = [r for r in json.loads(oloproof("runs", "--all", "--json", cwd=root).out)
              if r["run_id"] == control]  # fmt: skip
    assert row["state"] == "stopped" and row["cases"] < row["planned"] == 4
    listed = json.loads(oloproof("inspect", control, "--failures", "--json", cwd=root).out)
    assert listed["unfinished"] == []
    assert listed["unfinished_unnamed"] == row["planned"] - row["cases"]
    assert listed["why_unnamed"] == "a diagnosis's child run re-executes cases its parent ran"
    verified = oloproof("verify", cwd=root)
    assert verified.code == 0, verified.out
