"""``oloproof verify`` runs the application's checks: the real CLI over copies of the examples.

A clean ledger made by the examples' own commands verifies with exit 0; an event forged through
the library (a verdict copy that disagrees with its judgment, a decision with the wrong gate)
makes ``verify`` exit 1 and name that event's address.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.support import Result, copy_example, oloproof, serving_judge_gate

from ledger import Event
from oloproof import events as ev
from oloproof.store import open_project_ledger

RUN_ID = re.compile(r"run_[0-9A-Z]{26}")
SUMMARIES = re.compile(
    r"^re-derived (\d+) decision\(s\), (\d+) diagnosis\(es\) and (\d+) comparison\(s\); "
    r"checked the verdict copies of (\d+) case result\(s\)$"
)
GOLD = ("--intervention", "gold-context", "--criterion", "answer_correct")


def ok(*args: str, cwd: Path, codes: tuple[int, ...] = (0,)) -> Result:
    done = oloproof(*args, cwd=cwd)
    assert done.code in codes, (args, done.out, done.err)
    return done


def run_id_of(done: Result) -> str:
    found = RUN_ID.search(done.lines[0])
    assert found is not None, done.out
    return found.group(0)


def summaries(done: Result) -> tuple[int, ...]:
    found = SUMMARIES.match(done.lines[-2])
    assert found is not None, done.out
    return tuple(int(n) for n in found.groups())


def forge(root: Path, kind: str, edit: Any, which: Any = lambda body: True) -> str:
    """Store an edited copy of the first event of ``kind`` whose body is ``which``, as a second
    writer could."""
    with open_project_ledger(root, create=False) as ledger:
        event = next(e for _, e in ledger.events(kind) if which(e.body))
        body = json.loads(json.dumps(event.body))
        edit(body)
        return ledger.put(Event(event.type, event.schema, body, event.refs))


@pytest.fixture(scope="module")
def support(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """support_rag with two runs, a comparison under its policy and two diagnoses."""
    root = copy_example("support_rag", tmp_path_factory.mktemp("support"))
    baseline = run_id_of(ok("run", cwd=root, codes=(0, 1, 3)))
    candidate = run_id_of(ok("run", cwd=root, codes=(0, 1, 3)))
    ok("compare", candidate, baseline, "--policy", "compare.yaml", cwd=root, codes=(0, 1, 3))
    ok("diagnose", baseline, *GOLD, cwd=root)
    ok(
        "diagnose",
        baseline,
        "--intervention",
        "top-k",
        "--top-k",
        "4",
        "--criterion",
        "answer_correct",
        cwd=root,
    )
    return root


def test_the_support_example_verifies_clean(support: Path) -> None:
    done = ok("verify", cwd=support)
    assert done.lines[-1].endswith(": ok")
    assert summaries(done) == (2, 2, 1, 2 * 13 + 4 * 4)
    report = json.loads(ok("verify", "--json", cwd=support).out)
    assert report["ok"] is True and report["problems"] == []
    assert report["summaries"] == {
        "case_results": 42,
        "decisions": 2,
        "diagnoses": 2,
        "comparisons": 1,
    }


def test_the_blackbox_example_verifies_clean(blackbox: Path) -> None:
    run_id = run_id_of(ok("run", cwd=blackbox, codes=(0, 1, 3)))
    ok("diagnose", run_id, *GOLD, cwd=blackbox)
    done = ok("verify", cwd=blackbox)
    assert done.lines[-1].endswith(": ok")
    _, diagnoses, comparisons, cases = summaries(done)
    assert (diagnoses, comparisons) == (1, 0) and cases > 0


def test_a_forged_verdict_copy_exits_1_naming_it(support: Path, tmp_path: Path) -> None:
    root = tmp_path / "copy"
    copy_ledger(support, root)

    def flip(body: dict[str, Any]) -> None:
        copy = body["verdicts"]["answer_correct"]
        body["verdicts"]["answer_correct"] = {"s": "fail" if copy["s"] == "pass" else "pass"}

    forged = forge(root, ev.CASE_RESULT, flip)
    done = oloproof("verify", cwd=root)
    assert done.code == 1, done.out + done.err
    problems = [line for line in done.lines if line.startswith("StaleSummary ")]
    assert problems[0].startswith(
        f"StaleSummary {forged}: case_result: verdict answer_correct: stored "
    )
    assert done.lines[-1].endswith(f": {len(problems)} problem(s)")
    report = json.loads(oloproof("verify", "--json", cwd=root).out)
    assert ("StaleSummary", forged) in {(p["kind"], p["address"]) for p in report["problems"]}


def test_a_second_result_for_one_case_of_a_run_exits_1_naming_it(
    support: Path, tmp_path: Path
) -> None:
    """A run executes each case once; a second result for a case, whose verdict copies agree
    with its judgments, is still another writer's and is named (reports count the first)."""
    root = tmp_path / "copy"
    copy_ledger(support, root)
    before = summaries(oloproof("verify", cwd=root))

    def recache(body: dict[str, Any]) -> None:
        body["cache"] = {"execution": "hit" if body["cache"]["execution"] == "miss" else "miss"}

    forged = forge(root, ev.CASE_RESULT, recache)
    done = oloproof("verify", cwd=root)
    assert done.code == 1, done.out + done.err
    with open_project_ledger(root, create=False) as ledger:
        body = ledger.get(forged).body
    assert done.lines[0] == (
        f"StaleSummary {forged}: case_result: {body['run_id']} already holds a result for case "
        f"{body['case_id']!r}; its reports count the first"
    )
    assert done.lines[-1].endswith(": 1 problem(s)")
    # Its verdict copies were still checked; the run's decision still re-derives from the first.
    assert summaries(done)[:3] == before[:3] and summaries(done)[3] == before[3] + 1


def test_every_command_counts_the_first_result_of_a_case(support: Path, tmp_path: Path) -> None:
    """A second writer's result for a passing case says it failed: the report, the failures,
    the case view, the export and a diagnosis all keep to the first, so none of them can say
    what the gate did not decide on."""
    root = tmp_path / "copy"
    copy_ledger(support, root)
    with open_project_ledger(root, create=False) as ledger:
        passing = next(
            body
            for _, event in ledger.events(ev.CASE_RESULT)
            if (body := event.body)["verdicts"]["answer_correct"]["s"] == "pass"
        )
    run_id, case_id = passing["run_id"], passing["case_id"]
    before = oloproof("inspect", run_id, "--failures", cwd=root).out

    def fail(body: dict[str, Any]) -> None:
        body["verdicts"]["answer_correct"] = {"s": "fail"}

    forge(root, ev.CASE_RESULT, fail, lambda b: (b["run_id"], b["case_id"]) == (run_id, case_id))

    assert oloproof("inspect", run_id, "--failures", cwd=root).out == before
    assert case_id not in before.split()
    shown = json.loads(ok("inspect", run_id, "--case", case_id, "--json", cwd=root).out)
    assert shown["verdicts"]["answer_correct"] == {"s": "pass"}, shown["verdicts"]
    ok("export", run_id, "--format", "jsonl", "--output", str(tmp_path / "out"), cwd=root)
    rows = [
        json.loads(line) for line in (tmp_path / "out" / "verdicts.jsonl").read_text().splitlines()
    ]
    mine = [r for r in rows if r["case_id"] == case_id and r["criterion"] == "answer_correct"]
    assert [r["status"] for r in mine] == ["pass"]
    diagnosed = json.loads(ok("diagnose", run_id, *GOLD, "--json", cwd=root).out)["diagnosis"]
    assert diagnosed["cases"] and case_id not in {c["case_id"] for c in diagnosed["cases"]}
    assert oloproof("verify", cwd=root).code == 1


def test_a_decision_with_a_wrong_gate_exits_1_naming_it(support: Path, tmp_path: Path) -> None:
    root = tmp_path / "copy"
    copy_ledger(support, root)

    def flip(body: dict[str, Any]) -> None:
        blocked = not body["gate"]["blocked"]
        body["gate"] = {"blocked": blocked, "exit_code": 1 if blocked else 0}

    forged = forge(root, ev.DECISION, flip)
    done = oloproof("verify", cwd=root)
    assert done.code == 1, done.out + done.err
    assert done.lines[0].startswith(f"StaleSummary {forged}: decision: gate.blocked: stored ")
    assert done.lines[-1].endswith(": 1 problem(s)")


def copy_ledger(source: Path, dest: Path) -> None:
    """A copy of a project's ledger (no process has it open: the LMDB files copy as they are)."""
    shutil.copytree(source / ".oloproof", dest / ".oloproof")


@pytest.fixture
def judge_gate(tmp_path: Path) -> Iterator[Path]:
    with serving_judge_gate(tmp_path) as (root, _):
        yield root


def test_decisions_re_derive_with_the_calibrations_they_relied_on(judge_gate: Path) -> None:
    # A decision made before any calibration, and one made on the first calibration, must both
    # re-derive after a later calibration was recorded: each relied on what existed then.
    env = {"JUDGE_GATE_KEY": "any-value"}
    calibrate = ("calibrate", "--evaluator", "groundedness", "--labels", "labels.jsonl")
    assert oloproof("run", cwd=judge_gate, env=env).code == 3
    assert oloproof(*calibrate, cwd=judge_gate, env=env).code == 0
    assert oloproof("run", cwd=judge_gate, env=env).code == 0
    labels = judge_gate / "labels.jsonl"
    labels.write_text("".join(labels.read_text().splitlines(keepends=True)[:-1]))
    assert oloproof(*calibrate, cwd=judge_gate, env=env).code == 0
    done = oloproof("verify", cwd=judge_gate)
    assert done.code == 0, done.out
    assert summaries(done)[0] == 2
