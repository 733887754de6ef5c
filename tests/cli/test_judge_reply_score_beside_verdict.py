"""A judge's reply giving both a score and a verdict is no verdict.

The probe: a score rubric judge's reply ``{"score": 0.9, "verdict": "fail", ...}`` was read as
0.9, and a pass/fail judge's ``{"verdict": "pass", "score": 0.05, ...}`` as a pass: the key
asked for was taken and the other answer, which may say the opposite, ignored. Neither judge
says where a score becomes a pass (the rubric's score is "in proportion", and a pass/fail judge
has no score at all), so whether the two agree cannot be known, and the reply's schema allows
only one of them: the judgment is missing (``unparseable_reply``, counted against the system),
in agreement or not (judge code version 8).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.cli.test_judge_reply_keys_in_two_cases import RUBRIC, _metric

SCORE = {**RUBRIC, "scale": "score"}


@pytest.mark.parametrize(
    ("reply", "judge", "criterion"),
    [
        ({"score": 0.9, "verdict": "fail", "reason": "r"}, SCORE, "on_point"),
        ({"score": 0.1, "Verdict": "pass", "reason": "r"}, SCORE, "on_point"),
        ({"score": 1, "verdict": "pass", "reason": "r"}, SCORE, "on_point"),
        ({"verdict": "pass", "score": 0.05, "reason": "r"}, {}, "groundedness"),
        ({"verdict": "fail", "Score": 1.0, "reason": "r"}, RUBRIC, "on_point"),
    ],
)
def test_a_score_beside_a_verdict_is_unparseable(
    tmp_path: Path, reply: dict[str, Any], judge: dict[str, Any], criterion: str
) -> None:
    metric = _metric(tmp_path / "p", json.dumps(reply), criterion, **judge)
    # Was: 3 observed, the asked key's answer taken (0.9, a pass).
    assert (metric["observed"], metric["missing"]) == (0, 3), metric
    assert metric["missing_reasons"] == {"unparseable_reply": 3}, metric


def test_a_score_alone_reads_as_before(tmp_path: Path) -> None:
    metric = _metric(tmp_path / "p", '{"score": 0.75, "reason": "r"}', "on_point", **SCORE)
    assert (metric["observed"], metric["missing"], metric["estimate"]) == (3, 0, 0.75), metric
