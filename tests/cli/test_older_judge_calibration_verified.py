"""A run gated on a judge calibrated only by an older version of the judges' code verifies.

The probe: the judge_gate example calibrated by the previous release (dceda63, judges' code
version 3), then run by this one. The run is rightly MANUAL_REVIEW and names the calibration
that no longer counts (``detail.judge.older_code``), but its decision linked only the
calibrations it relied on, so ``verify``, which re-derives a decision from the calibrations it
links, found none by the older code and reported the new run's own decision (exit 1):

    StaleSummary sha256:…: decision: rules[0].detail.judge.older_code: stored {'version': 3,
    'calibration': 'sha256:…'}, re-derived (absent)

The same came of the run exported into another project. Now the decision links that
calibration too, so it is re-derived as made, here and wherever it is imported.
"""

from __future__ import annotations

from pathlib import Path

from tests.support import oloproof, serving_judge_gate

from oloproof import events as ev
from oloproof.store import open_project_ledger

ENV = {"JUDGE_GATE_KEY": "test-key"}

# The previous release: today's code with the judges' code at version 3 (dceda63 calibrated the
# example's judge under the same identity save ``version``; its reading of these replies, plain
# verdict objects, is the same as today's).
VERSION_3 = """
from oloproof.evaluators import judges

judges.LLMJudge.VERSION = 3
from oloproof.cli.main import main

main()
"""


def test_a_run_naming_an_older_code_calibration_verifies(tmp_path: Path) -> None:
    with serving_judge_gate(tmp_path) as (root, _server):
        calibrated = oloproof(
            "calibrate",
            "--evaluator",
            "groundedness",
            "--labels",
            "labels.jsonl",
            cwd=root,
            env=ENV,
            command=("-c", VERSION_3),
        )
        assert calibrated.code == 0, calibrated.err
        with open_project_ledger(root, create=False) as ledger:
            ((older, _),) = ledger.events(ev.CALIBRATION)
        done = oloproof("run", "--json", cwd=root, env=ENV)
    assert done.code == 3, done.out + done.err
    run_id = done.out.split('"run_id": "')[1].split('"')[0]
    with open_project_ledger(root, create=False) as ledger:
        ((_, decision),) = ledger.events(ev.DECISION)
        (rule,) = decision.body["rules"]
        assert (rule["outcome"], rule["reason"]) == ("MANUAL_REVIEW", "judge_not_calibrated")
        assert rule["detail"]["judge"]["older_code"] == {"version": 3, "calibration": older}
        assert older in decision.refs

    verified = oloproof("verify", cwd=root)
    assert verified.code == 0, verified.out  # was 1: StaleSummary of the decision

    archive = tmp_path / "run.oloarchive"
    exported = oloproof("ledger", "export", run_id, "--to", str(archive), cwd=root)
    assert exported.code == 0, exported.err
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    imported = oloproof("ledger", "import", str(archive), cwd=elsewhere)
    assert imported.code == 0, imported.err
    verified = oloproof("verify", cwd=elsewhere)
    assert verified.code == 0, verified.out
