"""A judge's reply giving a second decision under a key of its own is no verdict.

The probe: ``{"verdict": "pass", "final_verdict": "fail", ...}`` (a model revising itself in a
second key, as reasoning models do) was read as a pass: only ``verdict`` was looked at. The
reply says both, and which one the model meant cannot be known, so the judgment is missing
(``unparseable_reply``, counted against the system); so is a score judge's reply with a
``"result": "pass"`` beside its score. A second key agreeing with the verdict reads as before
(judge code version 8).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.cli.test_judge_reply_keys_in_two_cases import RUBRIC, _metric

SCORE = {**RUBRIC, "scale": "score"}


@pytest.mark.parametrize(
    ("reply", "judge", "metric"),
    [
        ({"verdict": "pass", "final_verdict": "fail", "reason": "r"}, {}, "groundedness"),
        ({"verdict": "fail", "result": "Pass", "reason": "r"}, RUBRIC, "on_point"),
        ({"score": 0.9, "result": "fail", "reason": "r"}, SCORE, "on_point"),
    ],
)
def test_a_second_decision_is_unparseable(
    tmp_path: Path, reply: dict[str, Any], judge: dict[str, Any], metric: str
) -> None:
    found = _metric(tmp_path / "p", json.dumps(reply), metric, **judge)
    # Was: 3 observed, the verdict key's decision taken.
    assert (found["observed"], found["missing"]) == (0, 3), found
    assert found["missing_reasons"] == {"unparseable_reply": 3}, found


def test_a_second_key_agreeing_reads_as_before(tmp_path: Path) -> None:
    reply = {"verdict": "pass", "final_verdict": "PASS", "reason": "r"}
    found = _metric(tmp_path / "p", json.dumps(reply), "groundedness")
    assert (found["observed"], found["successes"]) == (3, 3), found
