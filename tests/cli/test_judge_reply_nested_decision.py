"""A judge's reply giving a second decision inside a member of its own is no verdict.

The probe, through ``oloproof run --json`` against a scripted server on 127.0.0.1: a reply
``{"verdict": "pass", "reason": "r", "claims": [{"claim": "x", "verdict": "fail"}]}`` (a model
grading each claim, failing one, and passing the answer) was read as a pass, 2 / 2 observed;
so was ``{"verdict": "pass", "review": {"final_verdict": "fail"}}``. Only the reply's top-level
members were looked at for a second decision. A score judge's ``{"score": 0.9, "final_score":
0.1}`` read as 0.9, and ``{"score": 0.9, "parts": [{"score": 0.1}]}`` or ``"subscores":
{"tone": 0.1}`` too: a second score was not a decision at all. The reply says two things and
which one the model meant cannot be known, so each is now missing (``unparseable_reply``,
counted against the system), wherever the second decision sits. A nested decision agreeing with the reply's own reads as before, and so
does a citation judge's fail naming an id spelled ``pass`` among those it found unsupported: an
id is no decision (judge code version 9).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.cli.test_citation_judge_contradicting_reply import _judged
from tests.cli.test_judge_failures import run, unfolded
from tests.cli.test_judge_reply_keys_in_two_cases import RUBRIC, _metric

SCORE = {**RUBRIC, "scale": "score"}


@pytest.mark.parametrize(
    ("reply", "judge", "metric", "said"),
    [
        (
            {"verdict": "pass", "reason": "r", "claims": [{"claim": "x", "verdict": "fail"}]},
            {},
            "groundedness",
            'the reply gives "fail" under "claims"[0]."verdict" beside its "verdict"',
        ),
        (
            {"verdict": "pass", "reason": "r", "review": {"final_verdict": "FAIL"}},
            {},
            "groundedness",
            'the reply gives "fail" under "review"."final_verdict" beside its "verdict"',
        ),
        (
            {"verdict": "fail", "reason": "r", "notes": ["pass"]},
            RUBRIC,
            "on_point",
            'the reply gives "pass" under "notes"[0] beside its "verdict"',
        ),
        (
            {"score": 0.9, "reason": "r", "final_score": 0.1},
            SCORE,
            "on_point",
            'the reply gives 0.1 under "final_score" beside its "score"',
        ),
        (
            {"score": 0.9, "reason": "r", "parts": [{"score": 0.1}]},
            SCORE,
            "on_point",
            'the reply gives 0.1 under "parts"[0]."score" beside its "score"',
        ),
        (
            {"score": 0.9, "reason": "r", "subscores": {"tone": 0.1}},
            SCORE,
            "on_point",
            'the reply gives 0.1 under "subscores"."tone" beside its "score"',
        ),
    ],
)
def test_a_nested_second_decision_is_unparseable(
    tmp_path: Path, reply: dict[str, Any], judge: dict[str, Any], metric: str, said: str
) -> None:
    found = _metric(tmp_path / "p", json.dumps(reply), metric, **judge)
    # Was: 3 observed, the top-level decision taken.
    assert (found["observed"], found["missing"]) == (0, 3), found
    assert found["missing_reasons"] == {"unparseable_reply": 3}, found
    shown = run(tmp_path / "p", "inspect", "latest", "--case", "c0")
    assert shown.code == 0, shown.err
    at = next(i for i, line in enumerate(shown.lines) if "missing (unparseable_reply)" in line)
    assert unfolded(shown.lines, at).startswith(f"parse error: {said} reply:"), shown.out


@pytest.mark.parametrize(
    ("reply", "judge", "metric"),
    [
        (
            {"verdict": "pass", "reason": "r", "claims": [{"claim": "x", "verdict": "PASS"}]},
            {},
            "groundedness",
        ),
        ({"score": 0.9, "reason": "r", "final_score": 0.9, "confidence": 0.2}, SCORE, "on_point"),
    ],
)
def test_a_nested_decision_agreeing_reads_as_before(
    tmp_path: Path, reply: dict[str, Any], judge: dict[str, Any], metric: str
) -> None:
    found = _metric(tmp_path / "p", json.dumps(reply), metric, **judge)
    assert (found["observed"], found["missing"]) == (3, 0), found


def test_an_unsupported_id_spelled_pass_is_no_decision(tmp_path: Path) -> None:
    metric, _ = _judged(tmp_path, {"verdict": "fail", "unsupported": ["pass"], "reason": "r"})
    assert (metric["observed"], metric["missing"], metric["successes"]) == (20, 0, 0), metric
