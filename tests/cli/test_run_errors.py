"""Run error paths: exit codes, one-sentence messages, and what the ledger keeps."""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path

import pytest
from tests.support import interrupt_run, metric_of, oloproof, run_in_progress, runs_fields

from ledger import open_ledger
from oloproof import events as ev
from oloproof.metrics import criteria_of, tally_run
from oloproof.store import open_project_ledger
from oloproof.stored_runs import load_run

APP = """
import os, sys, time
from oloproof import Retrieval, Passage, current_case, system

@system(name="toy", version="1", records=("retrieval/v1",))
def run(case):
    q = case["q"]
    if q == "boom":
        raise RuntimeError("the toy system exploded")
    if q == "no-message":
        raise NoMessage()
    if q == "bad-artifact":
        current_case().retrieval({"candidates": [{"score": 1.0}]})
    if q == "undeclared":
        current_case().context({"items": []})
    if q == "nan-score":
        current_case().retrieval({"candidates": [{"doc_id": "d1", "score": float("nan")}]})
    if q == "nan-output":
        return {"answer": float("inf")}
    if q.startswith("slow"):
        sys.stderr.write("sleeping\\n")
        sys.stderr.flush()
        time.sleep(float(os.environ.get("TOY_SLEEP", "0")))
    current_case().retrieval(Retrieval(candidates=(Passage(doc_id="d1"),)))
    return {"answer": q.upper()}


class NoMessage(Exception):
    def __str__(self):
        raise ValueError("no text")
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
  - {type: hit_rate, k: 1}
policy: policy.yaml
"""

POLICY = "version: 1\nrules:\n  - {id: floor, metric: shouts, min: 0.5}\n"


def project(tmp_path: Path, questions: list[str]) -> Path:
    (tmp_path / "app.py").write_text(APP)
    (tmp_path / "oloproof.yaml").write_text(CONFIG)
    (tmp_path / "policy.yaml").write_text(POLICY)
    lines = [
        json.dumps(
            {
                "id": f"c{i}",
                "input": {"q": q},
                "expected": {"answer": q.upper(), "relevant": [{"doc_id": "d1"}]},
            }
        )
        for i, q in enumerate(questions)
    ]
    (tmp_path / "cases.jsonl").write_text("\n".join(lines) + "\n")
    return tmp_path


def stored_types(root: Path) -> list[str]:
    if not (root / ".oloproof").exists():
        return []
    ledger = open_ledger(root / ".oloproof")
    try:
        return [event.type for _, event in ledger.events()]
    finally:
        ledger.close()


def test_an_exception_in_user_code_makes_the_case_errored(tmp_path: Path) -> None:
    root = project(tmp_path, ["hello", "boom", "world"])
    result = oloproof("run", cwd=root)
    assert result.code == 3, result.err  # 2 of 3 observed: the floor cannot be shown
    assert "[DECIDED/PARTIAL]" in result.lines[0]
    shouts = next(line for line in result.lines if line.startswith("│ shouts "))
    # The errored case counts against the interval: 2 of 3 for its lower bound, 3 of 3 for
    # its upper (scipy.stats.binomtest(2, 3).proportion_ci() gives 9.43%).
    assert "│ 100.0%   │ [9.4%, 100.0%] │ 2 / 2 observed · 1 missing · 0 excluded │" in shouts
    run_id = result.lines[0].split()[1]
    case = oloproof("inspect", run_id, "--case", "c1", cwd=root)
    assert "error: RuntimeError: the toy system exploded" in case.out
    assert "Traceback (most recent call last)" in case.out
    assert "shouts: missing (execution_errored)" in case.out
    failures = oloproof("inspect", run_id, "--failures", cwd=root)
    assert failures.lines[0] == "1 of 3 cases failed, errored or did not finish"


def test_an_exception_whose_message_fails_errors_its_case_alone(tmp_path: Path) -> None:
    # str() of it raised inside the run, which ended with a traceback and exit code 1.
    root = project(tmp_path, ["hello", "no-message", "world"])
    result = oloproof("run", cwd=root)
    assert (result.code, result.err) == (3, ""), result.out + result.err
    assert "[DECIDED/PARTIAL]" in result.lines[0]
    case = oloproof("inspect", result.lines[0].split()[1], "--case", "c1", cwd=root)
    assert "error: NoMessage: <exception str() failed>" in case.out, case.out


def test_a_case_over_its_timeout_is_errored_and_the_run_goes_on(tmp_path: Path) -> None:
    root = project(tmp_path, ["hello", "slow one", "world"])
    config = root / "oloproof.yaml"
    config.write_text(config.read_text() + "timeout_s: 0.5\n")
    started = time.monotonic()
    result = oloproof("run", cwd=root, env={"TOY_SLEEP": "30"})
    # The call still sleeping on its thread must not hold the process: it exits with the run.
    assert time.monotonic() - started < 20
    assert result.code == 3, result.err
    assert "[DECIDED/PARTIAL]" in result.lines[0]
    assert "2 / 2 observed · 1 missing · 0 excluded" in result.out
    run_id = result.lines[0].split()[1]
    case = oloproof("inspect", run_id, "--case", "c1", cwd=root)
    assert "error: TimeoutError: the case took longer than 0.5 s" in case.out
    assert "shouts: missing (execution_errored)" in case.out


def test_a_malformed_artifact_stops_the_run_with_exit_2(tmp_path: Path) -> None:
    root = project(tmp_path, ["bad-artifact"])
    result = oloproof("run", cwd=root)
    assert result.code == 2
    assert result.err.startswith(
        "error: case 'c0': malformed retrieval/v1 artifact: candidates.0.doc_id"
    )
    assert "Traceback" not in result.err
    kinds = stored_types(root)
    assert ev.EXECUTION not in kinds and ev.CASE_RESULT not in kinds
    assert kinds.count(ev.RUN_END) == 1


def test_what_the_ledger_cannot_record_stops_the_run_naming_the_case(tmp_path: Path) -> None:
    # Two projects side by side: one inside the other would be found as the nearer (a note).
    (tmp_path / "score").mkdir()
    root = project(tmp_path / "score", ["hello", "nan-score"])
    result = oloproof("run", cwd=root)
    assert result.code == 2
    assert result.err == (
        "error: case 'c1': malformed retrieval/v1 artifact: candidates.0.score: "
        "Input should be a finite number\n"
    )
    (tmp_path / "output").mkdir()
    root = project(tmp_path / "output", ["nan-output"])
    result = oloproof("run", cwd=root)
    assert result.code == 2
    assert result.err == (
        "error: case 'c0': the output cannot be recorded: cannot encode the float inf: "
        "only finite floats are allowed\n"
    )
    kinds = stored_types(root)
    assert ev.EXECUTION not in kinds and ev.CASE_RESULT not in kinds
    assert kinds.count(ev.RUN_END) == 1


def test_an_undeclared_artifact_kind_is_refused(tmp_path: Path) -> None:
    root = project(tmp_path, ["undeclared"])
    result = oloproof("run", cwd=root)
    assert result.code == 2
    assert "recorded a context/v1 artifact but declares records=(retrieval/v1)" in result.err
    assert ev.EXECUTION not in stored_types(root)


def test_bad_inputs_write_nothing(tmp_path: Path) -> None:
    root = project(tmp_path, ["hello"])
    (root / "cases.jsonl").write_text(
        '{"id": "a", "input": {"q": "x"}}\n{"id": "a", "input": {}}\n'
    )
    result = oloproof("run", cwd=root)
    assert result.code == 2
    assert (
        result.err
        == f"error: {root / 'cases.jsonl'}, line 2: duplicate case id 'a' (first on line 1)\n"
    )
    (root / "cases.jsonl").write_text(
        '{"id": "a", "input": {"q": "x"}, "expected": {"answer": "X", "relevant": '
        '[{"doc_id": "d1"}]}}\n'
    )
    (root / "oloproof.yaml").write_text(CONFIG.replace("app:run", "nowhere:run"))
    result = oloproof("run", cwd=root)
    assert result.code == 2
    assert (
        f"{root / 'oloproof.yaml'}, line 4: system.callable: no module named 'nowhere'"
        in result.err
    )
    (root / "oloproof.yaml").write_text(CONFIG.replace("app:run", "app:missing"))
    result = oloproof("run", cwd=root)
    assert result.err.startswith(f"error: {root / 'oloproof.yaml'}, line 4: system.callable: ")
    assert "module 'app' has no 'missing'" in result.err
    assert not (root / ".oloproof").exists()


def test_unknown_ids_exit_2(tmp_path: Path) -> None:
    root = project(tmp_path, ["hello"])
    assert oloproof("run", cwd=root).code != 2
    for args in (["inspect", "run_NOPE"], ["inspect", "deadbeefdeadbeef"], ["export", "nope"]):
        result = oloproof(*args, cwd=root)
        assert result.code == 2, args
        assert result.err.startswith("error: ") and "Traceback" not in result.err


def test_no_cache_executes_again_and_metrics_replay_from_the_ledger(tmp_path: Path) -> None:
    root = project(tmp_path, ["hello", "world", "boom"])
    first = oloproof("run", cwd=root)
    assert "Cache: execution 0 hit/3 miss; judgment 0 hit/4 miss" in first.lines
    cached = oloproof("run", cwd=root)
    # The errored case is executed again: errors are never reused from the cache.
    assert "Cache: execution 2 hit/1 miss; judgment 4 hit/0 miss" in cached.lines
    fresh = oloproof("run", "--no-cache", cwd=root)
    assert "Cache: execution 0 hit/3 miss; judgment 4 hit/0 miss" in fresh.lines
    run_id = fresh.lines[0].split()[1]
    json_report = json.loads(oloproof("inspect", run_id, "--json", cwd=root).out)
    ledger = open_project_ledger(root, create=False)
    try:
        run = load_run(ledger, run_id)
        tally = tally_run(ledger, run_id, criteria_of(run.body), [])
    finally:
        ledger.close()
    shouts = tally.metrics["shouts"]
    assert (shouts.passed, shouts.failed, shouts.n_missing) == (2, 0, 1)
    row = metric_of(json_report, "shouts")
    assert (row["successes"], row["observed"], row["missing"]) == (2, 2, 1)


@pytest.mark.parametrize(("stop", "status"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_ctrl_c_or_sigterm_keeps_finished_cases_and_resume_completes_the_run(
    tmp_path: Path, stop: signal.Signals, status: int
) -> None:
    root = project(tmp_path, ["fast", *[f"slow{i}" for i in range(30)]])
    # The first slow case has started: the run is executing, and the fast case is finished.
    code, out, err = interrupt_run(root, "sleeping\n", stop, {"TOY_SLEEP": "0.2"})
    assert code == status, out + err
    assert "oloproof run --resume run_" in err
    run_id = err.split("--resume ")[1].split()[0]
    fields = runs_fields(root, run_id)
    assert fields[3] == "INTERRUPTED"
    kept = int(fields[5].split(" of 31 answered")[0])
    assert 0 < kept < 31  # the cases finished before the signal were written, not lost
    assert fields[5].endswith(f"({31 - kept} not run)")
    resumed = oloproof("run", "--resume", run_id, cwd=root)
    assert resumed.code == 0, resumed.err
    assert resumed.lines[0] == f"Run {run_id} [DECIDED/COMPLETE]"
    assert "31 / 31 observed · 0 missing · 0 excluded" in resumed.out
    again = oloproof("run", "--resume", run_id, cwd=root)
    assert again.code == 2 and "is complete" in again.err


@pytest.mark.parametrize("change", ["evaluator", "policy file", "--policy"])
def test_a_resume_refuses_what_would_judge_or_decide_its_run_otherwise(
    tmp_path: Path, change: str
) -> None:
    # Its finished cases were judged by the evaluators it recorded, and its gate is decided by
    # its policy: finishing it under others would mix two measurements in one run.
    root = project(tmp_path, ["fast", *[f"slow{i}" for i in range(30)]])
    code, out, err = interrupt_run(root, "sleeping\n", signal.SIGINT, {"TOY_SLEEP": "0.2"})
    assert code == 130, out + err
    run_id = err.split("--resume ")[1].split()[0]
    args = ["run", "--resume", run_id]
    if change == "evaluator":
        config = root / "oloproof.yaml"
        config.write_text(config.read_text().replace("type: contains", "type: equals"))
        expected = f"error: the evaluators changed since {run_id} started"
    elif change == "policy file":
        (root / "policy.yaml").write_text(POLICY.replace("0.5", "0.99"))
        expected = f"error: {root / 'policy.yaml'} changed since {run_id} started"
    else:
        (root / "strict.yaml").write_text(POLICY.replace("0.5", "0.99"))
        args += ["--policy", "strict.yaml"]
        expected = "error: --resume finishes a run under the policy it started with"
    refused = oloproof(*args, cwd=root)
    assert (refused.code, refused.out) == (2, ""), refused.err
    assert refused.err.startswith(expected), refused.err
    assert runs_fields(root, run_id)[3] == "INTERRUPTED"  # nothing of the resume was written


def cache_line(lines: list[str]) -> tuple[int, int, int, int]:
    """The execution and judgment hits and misses of a report's Cache line."""
    line = next(line for line in lines if line.startswith("Cache: "))
    execution, judgment = line.removeprefix("Cache: execution ").split("; judgment ")
    (eh, em), (jh, jm) = (
        (int(part.split(" hit/")[0]), int(part.split(" hit/")[1].split(" miss")[0]))
        for part in (execution, judgment)
    )
    return eh, em, jh, jm


def test_an_interrupted_run_counts_the_cache_of_the_cases_it_wrote(tmp_path: Path) -> None:
    # Its Cache line read 0 hit/0 miss, and after a resume it counted the resumed cases alone.
    root = project(tmp_path, ["fast", *[f"slow{i}" for i in range(30)]])
    code, out, err = interrupt_run(root, "sleeping\n", signal.SIGINT, {"TOY_SLEEP": "0.2"})
    assert code == 130, out + err
    run_id = err.split("--resume ")[1].split()[0]
    kept = int(runs_fields(root, run_id)[5].split(" of 31 answered")[0])
    assert 0 < kept < 31
    # A brand-new ledger: every case written was executed and judged (two evaluators) here.
    shown = oloproof("inspect", run_id, cwd=root)
    assert cache_line(shown.lines) == (0, kept, 0, 2 * kept), shown.out
    resumed = oloproof("run", "--resume", run_id, cwd=root)
    assert resumed.code == 0, resumed.err
    # A case cut off between its execution's and its result's writing finds its execution
    # stored: a hit. Every case is counted once, either way.
    eh, em, jh, jm = cache_line(resumed.lines)
    assert (eh + em, jh + jm) == (31, 62), resumed.out
    assert eh <= 1 and jh <= 2, resumed.out  # at most the one case cut off
    assert cache_line(oloproof("inspect", run_id, cwd=root).lines) == (eh, em, jh, jm)


def test_a_run_being_written_shows_as_running_not_interrupted(tmp_path: Path) -> None:
    root = project(tmp_path, ["fast", *[f"slow{i}" for i in range(30)]])
    # The first slow case sleeps for as long as the checks below may take on a loaded machine.
    with run_in_progress(root, "sleeping\n", {"TOY_SLEEP": "120"}):
        listed = oloproof("runs", cwd=root)
        assert len(listed.lines) == 1, listed.out
        run_id = listed.lines[0].split()[0]
        assert runs_fields(root, run_id)[3] == "RUNNING"
        shown = oloproof("inspect", run_id, cwd=root)
        assert shown.lines[0] == f"Run {run_id} [UNDECIDED/RUNNING]"
        assert "another process is writing the run now" in shown.lines[1]
        assert shown.lines[2] == "No gate yet: the run is decided when it ends"
        assert "--resume" not in shown.out  # the lock would refuse it
    assert runs_fields(root, run_id)[3] == "INTERRUPTED"


def test_a_resume_being_written_shows_as_running_not_interrupted(tmp_path: Path) -> None:
    # An earlier go of the run ended (interrupted); the resume writing it now holds its lock.
    # `runs` and `inspect` said INTERRUPTED, and offered the --resume the lock would refuse.
    root = project(tmp_path, ["fast", *[f"slow{i}" for i in range(30)]])
    code, out, err = interrupt_run(root, "sleeping\n", signal.SIGINT, {"TOY_SLEEP": "0.2"})
    assert code == 130, out + err
    run_id = err.split("--resume ")[1].split()[0]
    assert runs_fields(root, run_id)[3] == "INTERRUPTED"
    with run_in_progress(root, "sleeping\n", {"TOY_SLEEP": "120"}, args=("--resume", run_id)):
        assert runs_fields(root, run_id)[3] == "RUNNING"
        listed = json.loads(oloproof("runs", "--json", cwd=root).out)
        assert [(r["state"], r["execution_state"]) for r in listed] == [("running", "RUNNING")]
        # The earlier go's decision (BLOCK) decided 1 case of the 31 being written: no gate yet.
        shown = oloproof("inspect", run_id, cwd=root)
        assert shown.lines[0] == f"Run {run_id} [UNDECIDED/RUNNING]", shown.out
        assert "another process is writing the run now" in shown.lines[1]
        assert shown.lines[2] == "No gate yet: the run is decided when it ends"
        assert "Gate:" not in shown.out and "--resume" not in shown.out
        assert runs_fields(root, run_id)[4] == "no gate (not decided)"
    assert runs_fields(root, run_id)[3] == "INTERRUPTED"


def test_an_export_of_an_interrupted_run_says_what_it_cannot_hold(tmp_path: Path) -> None:
    root = project(tmp_path, ["fast", *[f"slow{i}" for i in range(30)]])
    code, out, err = interrupt_run(root, "sleeping\n", signal.SIGINT, {"TOY_SLEEP": "0.2"})
    assert code == 130, out + err
    run_id = err.split("--resume ")[1].split()[0]
    kept = int(runs_fields(root, run_id)[5].split(" of 31 answered")[0])
    warning = (
        f"warning: {run_id} is INTERRUPTED: {31 - kept} of its 31 planned cases did not run, "
        "so nothing of them is exported\n"
    )
    bundle = oloproof("export", run_id, cwd=root)
    assert (bundle.code, bundle.err) == (0, warning)
    manifest = json.loads((root / ".oloproof" / "bundles" / run_id / "manifest.json").read_text())
    assert (manifest["cases"], manifest["planned_cases"], manifest["not_run"]) == (
        kept,
        31,
        31 - kept,
    )
    assert manifest["execution_state"] == "INTERRUPTED"
    table = oloproof("export", run_id, "--format", "jsonl", "--output", "t", cwd=root)
    listed = warning.replace(
        ", so nothing of them is exported", "; the tables list them with status not_run"
    )
    assert (table.code, table.err) == (0, listed)
    resumed = oloproof("run", "--resume", run_id, cwd=root)
    assert resumed.code == 0, resumed.err
    whole = oloproof("export", run_id, cwd=root)
    assert (whole.code, whole.err) == (0, "")
    manifest = json.loads((root / ".oloproof" / "bundles" / run_id / "manifest.json").read_text())
    assert (manifest["execution_state"], manifest["not_run"]) == ("COMPLETE", 0)


QUICK_APP = """
import sys
from oloproof import system

started = []

@system(name="quick", version="1")
async def run(case):
    # Never waits: every case finishes without handing the event loop a turn.
    if not started:
        started.append(1)
        sys.stderr.write("started\\n")
        sys.stderr.flush()
    return {"answer": case["q"].upper()}
"""


def test_ctrl_c_stops_a_run_whose_cases_never_wait(tmp_path: Path) -> None:
    # The signal is handled by the event loop, so a run that never gave the loop a turn (an
    # async system that awaits nothing, or cases all served from the cache) ran to its end.
    total = 50_000
    (tmp_path / "app.py").write_text(QUICK_APP)
    (tmp_path / "oloproof.yaml").write_text(
        CONFIG.replace("toy", "quick").replace("  - {type: hit_rate, k: 1}\n", "")
    )
    (tmp_path / "policy.yaml").write_text(POLICY)
    cases = (
        json.dumps({"id": f"c{i}", "input": {"q": f"q{i}"}, "expected": {"answer": f"Q{i}"}})
        for i in range(total)
    )
    (tmp_path / "cases.jsonl").write_text("\n".join(cases) + "\n")
    code, out, err = interrupt_run(tmp_path, "started\n", signal.SIGINT, timeout=120)
    assert code == 130, out + err
    run_id = err.split("--resume ")[1].split()[0]
    fields = runs_fields(tmp_path, run_id)
    assert fields[3] == "INTERRUPTED"
    kept = int(fields[5].split(f" of {total} answered")[0])
    assert 0 < kept < total, fields
