"""Status that tells the truth: which run is ``latest``, what ``runs`` says, what a stopped run
shows, through the real CLI (and ``read_run_report`` from Python)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests.support import copy_example, oloproof

import oloproof as olo
from ledger import open_ledger
from oloproof import events as ev
from oloproof.store import open_project_ledger

APP = """
from oloproof import current_case, system

@system(name="toy", version="1", records=("retrieval/v1",))
def run(case):
    q = case["q"]
    if q == "bad-artifact":
        current_case().retrieval({"candidates": [{"score": 1.0}]})
    if q.startswith("boom"):
        raise RuntimeError("the toy system exploded")
    return {"answer": q.upper()}
"""

CONFIG = """\
system:
  name: toy
  version: "1"
  callable: app:run
dataset: cases.jsonl
concurrency: 1
evaluators:
  - {type: contains, criterion: shouts, field: answer, expected_field: answer}
policy: policy.yaml
"""


def project(root: Path, questions: list[str]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "app.py").write_text(APP)
    (root / "oloproof.yaml").write_text(CONFIG)
    (root / "policy.yaml").write_text(
        "version: 1\nrules:\n  - {id: floor, metric: shouts, min: 0.05}\n"
    )
    cases(root, questions)
    return root


def cases(root: Path, questions: list[str]) -> None:
    lines = [
        json.dumps({"id": f"c{i}", "input": {"q": q}, "expected": {"answer": q.upper()}})
        for i, q in enumerate(questions)
    ]
    (root / "cases.jsonl").write_text("\n".join(lines) + "\n")


def run_id_of(lines: list[str]) -> str:
    return lines[0].split()[1]


def decisions_of(root: Path, run_id: str) -> list[str]:
    ledger = open_ledger(root / ".oloproof")
    try:
        return [e.type for _, e in ledger.lookup_events("run_meta", run_id)]
    finally:
        ledger.close()


def stopped_run(root: Path) -> str:
    """Run the project on a case whose artifact is malformed; the run id of the stopped run."""
    cases(root, ["hello", "bad-artifact"])
    result = oloproof("run", cwd=root)
    assert result.code == 2, result.out + result.err
    runs = json.loads(oloproof("runs", "--json", cwd=root).out)
    assert runs[0]["state"] == "stopped"
    return str(runs[0]["run_id"])


def test_a_stopped_run_is_never_latest_and_shows_no_gate(tmp_path: Path) -> None:
    root = project(tmp_path, ["hello", "world"])
    good = oloproof("run", cwd=root)
    assert good.code == 0, good.out + good.err
    good_id = run_id_of(good.lines)
    stopped = stopped_run(root)
    reason = "case 'c1': malformed retrieval/v1 artifact: candidates.0.doc_id: Field required"
    note = (
        f"note: the newest run, {stopped}, stopped: {reason}; `latest` is {good_id}, the newest "
        "run that finished\n"
    )

    latest = oloproof("inspect", "latest", cwd=root)
    assert latest.code == 0
    assert latest.lines[0] == f"Run {good_id} [DECIDED/COMPLETE]"
    assert latest.err == note

    shown = oloproof("inspect", stopped, cwd=root)
    assert shown.lines[:3] == [
        f"Run {stopped} [UNDECIDED/STOPPED]",
        f"Stopped: {reason}",
        "No gate: a stopped run is not decided; fix what stopped it and run again",
    ]
    assert not any(line.startswith("Gate:") for line in shown.lines)
    assert ev.DECISION not in decisions_of(root, stopped)  # and none was recorded
    report = json.loads(oloproof("inspect", stopped, "--json", cwd=root).out)
    assert (report["decision_state"], report["gate_label"], report["exit_code"]) == (
        "UNDECIDED",
        None,
        2,
    )

    # Named by latest, the finished run is the one given as the baseline: a run against itself.
    compared = oloproof("compare", "latest", good_id, cwd=root)
    assert compared.code == 2, compared.err
    assert compared.err == note + (
        f"error: 'latest' and {good_id!r} are the same run ({good_id}); compare a candidate "
        "run with a different baseline run\n"
    )

    diagnosed = oloproof(
        "diagnose",
        "latest",
        "--intervention",
        "gold-context",
        "--criterion",
        "shouts",
        "--json",
        cwd=root,
    )
    assert diagnosed.code == 0, diagnosed.err
    assert json.loads(diagnosed.out)["diagnosis"]["run_id"] == good_id
    assert diagnosed.err == note


def test_with_no_finished_run_latest_names_nothing(tmp_path: Path) -> None:
    root = project(tmp_path, ["hello"])
    stopped = stopped_run(root)
    for args in (
        ("inspect", "latest"),
        ("diagnose", "latest", "--intervention", "gold-context", "--criterion", "shouts"),
        ("compare", "latest", stopped),
    ):
        result = oloproof(*args, cwd=root)
        assert result.code == 2, args
        assert result.err == (
            f"error: no run has finished yet, so `latest` names no run; the newest run, "
            f"{stopped}, stopped: case 'c1': malformed retrieval/v1 artifact: "
            "candidates.0.doc_id: Field required\n"
        ), args
    ledger = open_ledger(root / ".oloproof")
    try:
        assert list(ledger.events(ev.DIAGNOSIS)) == [] and list(ledger.events(ev.COMPARISON)) == []
    finally:
        ledger.close()


def test_runs_shows_state_gate_evidence_and_code(tmp_path: Path) -> None:
    root = project(tmp_path, ["boom1", "boom2", "boom3"])
    errored = oloproof("run", cwd=root)
    assert errored.code == 3
    assert errored.lines[1] == (
        f"3 of 3 cases errored: RuntimeError: the toy system exploded (first: c0) · "
        f"oloproof inspect {run_id_of(errored.lines)} --failures"
    )
    cases(root, ["hello", "boom", "world"])
    partial = oloproof("run", cwd=root)
    (root / "policy.yaml").unlink()
    (root / "oloproof.yaml").write_text(CONFIG.replace("policy: policy.yaml\n", ""))
    cases(root, ["hello"])
    plain = oloproof("run", cwd=root)
    listed = oloproof("runs", cwd=root)
    ledger = open_project_ledger(root, create=False)
    try:
        code = olo.read_run_report(ledger, run_id_of(plain.lines)).system["code"][:8]
    finally:
        ledger.close()
    fields = [line.split("  ") for line in listed.lines]
    assert [f[0] for f in fields] == [run_id_of(r.lines) for r in (plain, partial, errored)]
    assert [f[2:] for f in fields] == [
        ["toy 1", "COMPLETE", "no policy", "1 of 1 answered · 0 missing", f"code {code}"],
        [
            "toy 1",
            "PARTIAL",
            "PASS (exit 0)",
            "2 of 3 answered · 1 missing (1 errored)",
            f"code {code}",
        ],
        [
            "toy 1",
            "PARTIAL",
            "BLOCK (exit 3)",
            "0 of 3 answered · 3 missing (3 errored)",
            f"code {code}",
        ],
    ]
    rows = json.loads(oloproof("runs", "--json", cwd=root).out)
    assert [(r["observed"], r["missing"], r["errored"], r["gate"]) for r in rows] == [
        (1, 0, 0, None),
        (2, 1, 1, "PASS"),
        (0, 3, 3, "BLOCK"),
    ]


def test_runs_lists_child_runs_only_with_all_under_their_diagnosis(tmp_path: Path) -> None:
    root = copy_example("support_rag", tmp_path)
    run = oloproof("run", cwd=root)
    run_id = run_id_of(run.lines)
    diagnosed = oloproof(
        "diagnose",
        run_id,
        "--intervention",
        "gold-context",
        "--criterion",
        "answer_correct",
        cwd=root,
    )
    assert diagnosed.code == 0, diagnosed.err
    address = next(w for w in diagnosed.lines[-1].split() if w.startswith("sha256:"))
    gold, control = (w.rstrip(",") for w in diagnosed.lines[-2].split() if w.startswith("run_"))
    top = oloproof("runs", cwd=root)
    assert len(top.lines) == 1 and top.lines[0].startswith(run_id)
    everything = oloproof("runs", "--all", cwd=root).lines
    assert everything[0] == top.lines[0]
    assert everything[1] == f"  diagnosis {address[:19]}  gold context on answer_correct"
    assert everything[2].startswith(f"    gold context: {gold}  ")
    assert everything[3].startswith(f"    control: {control}  ")
    assert "  no policy  4 of 4 answered · 0 missing  " in everything[2]
    assert len(everything) == 4
    assert len(json.loads(oloproof("runs", "--json", cwd=root).out)) == 1
    assert len(json.loads(oloproof("runs", "--all", "--json", cwd=root).out)) == 3


def test_read_run_report_resolves_latest_once_for_every_lookup(tmp_path: Path) -> None:
    root = project(tmp_path, ["hello", "boom", "world"])
    result = oloproof("run", cwd=root)
    ledger = open_project_ledger(root, create=False)
    try:
        report = olo.read_run_report(ledger, "latest")
    finally:
        ledger.close()
    assert report.run_id == run_id_of(result.lines)
    assert (report.decision_state, report.execution_state) == ("DECIDED", "PARTIAL")
    assert report.cases == 3 and report.errored == 1
    (metric,) = report.metrics
    assert (metric.successes, metric.observed, metric.missing) == (2, 2, 1)
    assert [(g.type, g.count, g.first) for g in report.errors] == [("RuntimeError", 1, "c1")]


def test_failures_count_only_the_cases_the_run_planned(tmp_path: Path) -> None:
    """A subset run lists none of the cases it did not choose; a stopped run names the cases it
    never finished from the file it read, and counts them without names once that file has
    changed (never listing the new file's cases, never leaving them out of the count)."""
    root = project(tmp_path, ["hello", "world", "boom one"])
    subset = oloproof("run", "--limit", "2", cwd=root)
    assert subset.code == 0, subset.out + subset.err
    shown = oloproof("inspect", run_id_of(subset.lines), "--failures", cwd=root)
    assert shown.lines == ["0 of 2 cases failed, errored or did not finish"]

    cases(root, ["hello", "bad-artifact", "again", "more"])
    result = oloproof("run", cwd=root)
    assert result.code == 2, result.out + result.err
    stopped = json.loads(oloproof("runs", "--json", cwd=root).out)[0]["run_id"]
    shown = oloproof("inspect", stopped, "--failures", cwd=root)
    assert shown.lines[0] == "3 of 4 cases failed, errored or did not finish"
    assert [line for line in shown.lines if line.startswith("c")] == ["c1", "c2", "c3"]
    assert shown.lines.count("  did not finish") == 3

    cases(root, ["hello", "other"])
    shown = oloproof("inspect", stopped, "--failures", cwd=root)
    assert shown.lines == [
        "3 of 4 cases failed, errored or did not finish",
        "",
        f"3 cases did not finish; ids unknown: {root / 'cases.jsonl'} has changed since the "
        "run read it",
    ]
    listed = json.loads(oloproof("inspect", stopped, "--failures", "--json", cwd=root).out)
    assert (listed["unfinished"], listed["unfinished_unnamed"]) == ([], 3)


INTERRUPTING_APP = """
import os
import signal
import time
from pathlib import Path

from oloproof import system

ARMED = Path("armed")  # in the project folder, where oloproof runs; not a place in the code


@system(name="toy", version="1")
def run(case):
    if case["q"] == "q3" and ARMED.exists():
        ARMED.unlink()
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(3600)  # never finishes: the interrupted run leaves it behind
    return {"answer": case["q"].upper()}
"""


def test_an_older_run_resumed_to_its_end_does_not_take_latest_from_a_newer_one(
    tmp_path: Path,
) -> None:
    root = project(tmp_path / "p", [f"q{i}" for i in range(6)])
    (root / "app.py").write_text(INTERRUPTING_APP)
    (root / "armed").touch()
    older = oloproof("run", cwd=root)
    assert older.code == 130, older.out + older.err
    older_id = older.err.split("--resume ")[1].split()[0]
    newer = oloproof("run", cwd=root)
    assert newer.code == 0, newer.err
    newer_id = run_id_of(newer.lines)

    resumed = oloproof("run", "--resume", older_id, cwd=root)
    assert resumed.code == 0, resumed.err
    assert run_id_of(resumed.lines) == older_id
    # `runs` lists the newer run first; `latest` must name the same run, not the one that
    # happened to finish last (a `compare latest BASELINE` in CI would judge older code).
    listed = json.loads(oloproof("runs", "--json", cwd=root).out)
    assert [r["run_id"] for r in listed] == [newer_id, older_id]
    shown = json.loads(oloproof("inspect", "latest", "--json", cwd=root).out)
    assert shown["run_id"] == newer_id


def test_a_copied_project_resumes_with_its_own_code_and_is_held_to_the_run(
    tmp_path: Path,
) -> None:
    first = project(tmp_path / "first", [f"q{i}" for i in range(6)])
    (first / "app.py").write_text(INTERRUPTING_APP)
    (first / "armed").touch()
    stopped = oloproof("run", cwd=first)
    assert stopped.code == 130, stopped.out + stopped.err
    run_id = stopped.err.split("--resume ")[1].split()[0]

    # A copy whose code now fails every case: resuming there must not run the first folder's
    # code (which the run recorded, and which would pass) in its place.
    copy = tmp_path / "copy"
    shutil.copytree(first, copy)
    app = copy / "app.py"
    app.write_text(app.read_text().replace('case["q"].upper()', '"wrong"'))
    refused = oloproof("run", "--resume", run_id, cwd=copy)
    assert refused.code == 2, refused.out + refused.err
    assert refused.err == (
        f"error: the system changed since {run_id} started (what differs: code); start a new "
        "run instead\n"
    )

    # Moved as it is, the project resumes where it now is.
    moved = tmp_path / "moved"
    first.rename(moved)
    resumed = oloproof("run", "--resume", run_id, cwd=moved)
    assert resumed.code == 0, resumed.out + resumed.err
    assert resumed.lines[0].startswith(f"Run {run_id} [DECIDED/COMPLETE]"), resumed.out
