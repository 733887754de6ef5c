"""A judgment that never ends: a regular expression (or a schema's ``pattern``) backtracking
over an output built to defeat it. The judgment times out as a case would, and the run goes on;
a signal still stops the run while the judgment holds it.

Real runs in a subprocess. The system's output for case ``evil`` is 40 letters ``a`` and a
``!``: against ``^(a+)+$`` Python's ``re`` tries every split of the letters, some 2**40 ways.
"""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path
from typing import Any

import pytest
from tests.support import interrupt_run, interrupted_fields, oloproof, write_project

APP = """
import sys
from oloproof import system

@system(name="echo", version="1")
def run(case):
    q = case["q"]
    if q == "evil":
        sys.stderr.write("evil\\n")
        sys.stderr.flush()
        return {"answer": "a" * 40 + "!"}
    return {"answer": "a" * len(q)}
"""

REGEX = "  - {type: regex, criterion: only_as, field: answer, pattern: '^(a+)+$'}\n"
SCHEMA = (
    "  - {type: json_schema, criterion: only_as, field: answer,\n"
    "     schema: {type: string, pattern: '^(a+)+$'}}\n"
)


def project(root: Path, evaluator: str, timeout: float) -> Path:
    return write_project(
        root,
        app=APP,
        config=(
            'system: {name: echo, version: "1", callable: app:run}\n'
            f"dataset: cases.jsonl\nconcurrency: 1\ntimeout_s: {timeout}\n"
            f"policy: policy.yaml\nevaluators:\n{evaluator}"
        ),
        policy="version: 1\nrules:\n  - {id: floor, metric: only_as, min: 0.1}\n",
        cases=[{"id": f"c{i}", "input": {"q": q}} for i, q in enumerate(["hi", "evil", "yo"])],
    )


def judged(root: Path, out: str, case_id: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The criterion's tally in the run's JSON report, and the body of the case's judgment."""
    report = json.loads(out)
    (tally,) = (m for m in report["metrics"] if m["criterion"] == "only_as")
    case = oloproof("inspect", report["run_id"], "--case", case_id, "--json", cwd=root)
    assert case.code == 0, case.err
    event = oloproof("inspect", json.loads(case.out)["judgments"]["only_as"], "--json", cwd=root)
    assert event.code == 0, event.err
    return tally, json.loads(event.out)["body"]


@pytest.mark.parametrize("evaluator", [REGEX, SCHEMA], ids=["regex", "json_schema"])
def test_a_judgment_that_backtracks_for_ever_times_out_and_the_run_goes_on(
    tmp_path: Path, evaluator: str
) -> None:
    root = project(tmp_path / "p", evaluator, timeout=1)
    started = time.monotonic()
    result = oloproof("run", "--json", cwd=root, timeout=60)
    assert time.monotonic() - started < 30
    assert result.code == 3, result.err  # a missing verdict counts against the release
    tally, judgment = judged(root, result.out, "c1")
    assert (tally["successes"], tally["observed"], tally["missing"]) == (2, 2, 1), tally
    assert tally["missing_reasons"] == {"evaluator_timed_out": 1}
    assert (judgment["status"], judgment["reason"]) == ("missing", "evaluator_timed_out")
    assert judgment["detail"]["type"] == "TimeoutError"
    assert judgment["detail"]["message"] == "the judgment took longer than 1 s"


def test_a_timed_out_judgment_is_made_again_by_the_next_run(tmp_path: Path) -> None:
    # Nothing was decided, so nothing is reused: the next run (here with a longer timeout, the
    # executions reused) judges that case again, and times out again.
    root = project(tmp_path / "p", REGEX, timeout=0.5)
    first = oloproof("run", "--json", cwd=root, timeout=60)
    assert first.code == 3, first.err
    assert judged(root, first.out, "c1")[1]["detail"]["message"].endswith(" 0.5 s")
    config = root / "oloproof.yaml"
    config.write_text(config.read_text().replace("timeout_s: 0.5", "timeout_s: 1"))
    second = oloproof("run", "--json", cwd=root, timeout=60)
    assert second.code == 3, second.err
    tally, judgment = judged(root, second.out, "c1")
    assert tally["missing"] == 1
    assert judgment["detail"]["message"] == "the judgment took longer than 1 s"


@pytest.mark.parametrize(("stop", "status"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_stops_a_run_held_by_a_judgment(
    tmp_path: Path, stop: signal.Signals, status: int
) -> None:
    root = project(tmp_path / "p", REGEX, timeout=3600)  # only the signal can end this run
    # Sent a second after the marker: the judgment holds the loop by then.
    code, out, err = interrupt_run(root, "evil\n", stop, timeout=30, settle=1)
    assert code == status, out + err
    fields = interrupted_fields(root, err)
    assert fields[5].startswith("1 of 3 answered"), fields  # "hi", judged before, is kept
