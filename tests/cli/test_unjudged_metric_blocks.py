"""A rule whose judge never answered stands on nothing, whatever the judge's calibration says.

The probe: the judge_gate example with its judge unreachable and `block_on: [FAIL]`. The metric
showed `0 / 0 observed · 12 missing`, the rule `MANUAL_REVIEW judge_not_calibrated` (asked of
the judge before the metric), and the gate `PASS (exit 0)`: a release passed on no verdict at
all. A comparison of two such runs passed the same way. A rule that observed nothing blocks
whatever `block_on` says, so it is now decided so before its judge is asked, in the release gate
(decision schema 7) and the comparison gate (schema 8); what an earlier release decided
re-derives as it was made.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.support import (
    copy_example,
    earlier_release,
    free_port,
    oloproof,
    stored_event,
    verified_as_made,
)

from oloproof import events as ev

ENV = {"JUDGE_GATE_KEY": "test-key"}
LET_THROUGH = (
    "version: 1\nconfidence_level: 0.95\nblock_on: [FAIL]\nrules:\n"
    "  - id: grounded\n    metric: groundedness\n    min: 0.60\n"
    "    judge: {min_sensitivity: 0.70, min_specificity: 0.80}\n"
)
COMPARE = (
    "version: 1\nblock_on: [FAIL]\nrules:\n"
    "  - {id: grounded-not-worse, metric: groundedness, non_inferiority: {margin: 5}}\n"
)
# An earlier release (decision schema 6, comparison schema 7): today's check switched off, each
# stored at its schema without the flag.
EARLIER_RELEASE = earlier_release({ev.DECISION: 6, ev.COMPARISON: 7})


@pytest.fixture
def unanswered(tmp_path: Path) -> Path:
    """The judge_gate example, its judge pointed at a port nothing listens on, its policy
    letting MANUAL_REVIEW and INSUFFICIENT_EVIDENCE through."""
    root = copy_example("judge_gate", tmp_path)
    config = root / "oloproof.yaml"
    config.write_text(config.read_text().replace("127.0.0.1:8767", f"127.0.0.1:{free_port()}", 1))
    (root / "policy.yaml").write_text(LET_THROUGH)
    (root / "compare.yaml").write_text(COMPARE)
    return root


def test_a_rule_its_judge_never_answered_blocks_the_gate(unanswered: Path) -> None:
    done = oloproof("run", cwd=unanswered, env=ENV)
    assert done.code == 3, done.out + done.err  # was 0: PASS on MANUAL_REVIEW
    assert done.lines[1:3] == [
        "Gate: BLOCK (exit 3)",
        "Rule grounded observed no case, so nothing decided it; that alone blocks the gate, "
        "whatever block_on lists",
    ]
    assert "│ grounded │ groundedness │ INSUFFICIENT_EVIDENCE │ no_observed_cases │" in done.out
    assert "0 / 0 observed · 12 missing" in done.out
    # What the judge's calibration says is still told.
    assert "Judge of grounded: no calibration of this exact judge" in done.out
    assert oloproof("verify", cwd=unanswered).code == 0


def test_a_comparison_rule_its_judge_never_answered_blocks(unanswered: Path) -> None:
    ids = [json.loads(oloproof("run", "--json", cwd=unanswered, env=ENV).out)["run_id"]]
    ids.insert(0, json.loads(oloproof("run", "--json", cwd=unanswered, env=ENV).out)["run_id"])
    done = oloproof("compare", *ids, "--policy", "compare.yaml", cwd=unanswered, env=ENV)
    assert done.code == 3, done.out + done.err  # was 0
    assert (
        "  grounded-not-worse  groundedness  non-inferiority, margin 5.0 points  "
        "INSUFFICIENT_EVIDENCE  no_paired_cases"
    ) in done.lines
    assert "Gate: BLOCK (exit 3)" in done.lines
    assert oloproof("verify", cwd=unanswered).code == 0


def test_what_an_earlier_release_decided_verifies_as_it_was_made(unanswered: Path) -> None:
    first = oloproof("run", "--json", cwd=unanswered, env=ENV, command=EARLIER_RELEASE)
    assert first.code == 0, first.out + first.err  # what it decided then
    verified_as_made(
        unanswered,
        stored_event(unanswered, ev.DECISION),
        "unobserved_before_judge",
        6,
        "re-derived 1 decision(s)",
    )
    second = oloproof("run", "--json", cwd=unanswered, env=ENV, command=EARLIER_RELEASE)
    ids = json.loads(second.out)["run_id"], json.loads(first.out)["run_id"]
    compared = oloproof(
        "compare",
        *ids,
        "--policy",
        "compare.yaml",
        cwd=unanswered,
        env=ENV,
        command=EARLIER_RELEASE,
    )
    assert compared.code == 0, compared.out + compared.err
    schema, body = stored_event(unanswered, ev.COMPARISON)
    assert (schema, body["unobserved_before_judge"], body["output_exclusions_missing"]) == (
        7,
        False,
        False,
    )
    verified = oloproof("verify", cwd=unanswered)
    assert verified.code == 0 and "and 1 comparison(s);" in verified.out, verified.out
