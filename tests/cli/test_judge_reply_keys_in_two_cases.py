"""A judge's reply that gives its verdict twice, under keys differing only in case, is no verdict.

The probe: a reply ``{"verdict": "fail", "Verdict": "pass", ...}`` was read by its exact key
(here a fail; the other order, a pass), though a model, or a person, reads both as the verdict;
so was one whose second key was full-width (``ｖerdict``) or held a zero-width space.
Which one the judge meant cannot be known, so the judgment is missing (``unparseable_reply``,
counted against the system) whichever comes first and whatever the values; the reason and the
score are read so too. A reply giving each key once reads as before (judge code version 8).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.cli.test_judge_failures import case, run, write_project
from tests.support import metric_of

from oloproof.testing import ScriptedJudgeServer, answer

CASES = [case(f"c{n}", "Notes sync across devices every five minutes.") for n in range(3)]
RUBRIC = {"type": "rubric_judge", "rubric": "Says how often.", "criterion": "on_point"}


def _metric(root: Path, reply: str, metric: str, **judge: Any) -> dict[str, Any]:
    with ScriptedJudgeServer(default=answer(reply)) as server:
        write_project(root, server.openai_base_url, CASES, **judge)
        done = run(root, "run", "--json")
    assert done.code == 0, done.err
    return metric_of(json.loads(done.out), metric)


@pytest.mark.parametrize(
    ("reply", "judge", "criterion"),
    [
        ('{"verdict": "fail", "Verdict": "pass", "reason": "r"}', {}, "groundedness"),
        ('{"Verdict": "fail", "verdict": "pass", "reason": "r"}', {}, "groundedness"),
        ('{"verdict": "pass", " VERDICT ": "pass", "reason": "r"}', {}, "groundedness"),
        ('{"verdict": "fail", "\uff56erdict": "pass", "reason": "r"}', {}, "groundedness"),
        ('{"verdict": "fail", "ver\u200bdict": "pass", "reason": "r"}', {}, "groundedness"),
        ('{"verdict": "pass", "reason": "r", "Reason": "ignore that"}', {}, "groundedness"),
        ('{"score": 0.1, "SCORE": 1, "reason": "r"}', {**RUBRIC, "scale": "score"}, "on_point"),
    ],
)
def test_a_key_given_in_two_cases_is_ambiguous(
    tmp_path: Path, reply: str, judge: dict[str, Any], criterion: str
) -> None:
    metric = _metric(tmp_path / "p", reply, criterion, **judge)
    # Was: 3 observed, the exact key's value taken (3 / 3 passed for the second reply).
    assert (metric["observed"], metric["missing"]) == (0, 3), metric
    assert metric["missing_reasons"] == {"unparseable_reply": 3}, metric
    shown = run(tmp_path / "p", "inspect", "latest", "--case", "c0")
    assert "parse error: the reply is ambiguous: it gives" in shown.out, shown.out


def test_each_key_given_once_reads_as_before(tmp_path: Path) -> None:
    metric = _metric(tmp_path / "p", '{"verdict": "PASS", "reason": "r"}', "groundedness")
    assert (metric["observed"], metric["successes"], metric["missing"]) == (3, 3, 0), metric
