"""A citation judge's reply that passes the answer and names citations it found unsupported is
no verdict.

The judge is asked for a verdict and the cited ids it found unsupported. A reply of
``{"verdict": "pass", "unsupported": ["kb-1"]}`` contradicts itself: the model says the
citations hold and names one that does not. It was read as a pass (the ids kept beside it in
the judgment's detail), so a gate on ``citations_supported`` passed on citations the judge
itself had flagged. Which half the model meant cannot be known, so the judgment is now missing
(``unparseable_reply``) and counts against the system, as any reply without one clear verdict
does. A pass naming no unsupported id, and a fail naming some, read as before.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.cli.test_citation_judge_without_context_counts_against import CONFIG, ENV, _project
from tests.support import metric_of, oloproof

from oloproof.testing import ScriptedJudgeServer, answer

CASES = [{"id": f"c{n}", "input": {"n": n, "fallback": 0}} for n in range(1, 21)]


def _judged(tmp_path: Path, reply: dict[str, object]) -> tuple[dict[str, object], int]:
    with ScriptedJudgeServer(default=answer(json.dumps(reply))) as server:
        root = _project(tmp_path / "p", server.openai_base_url, CONFIG, CASES)
        done = oloproof("run", "--json", cwd=root, env=ENV)
    return metric_of(json.loads(done.out), "citations_supported"), done.code


def test_a_pass_naming_unsupported_citations_is_missing(tmp_path: Path) -> None:
    metric, code = _judged(
        tmp_path, {"verdict": "pass", "unsupported": ["kb-1"], "reason": "all supported"}
    )
    # Was: 20 / 20 observed, 100% [83.2%, 100%]: the flagged citations passed.
    assert (metric["observed"], metric["missing"], metric["excluded"]) == (0, 20, 0), metric
    assert metric["missing_reasons"] == {"unparseable_reply": 20}, metric
    assert code == 3  # the policy's floor cannot be shown to hold


@pytest.mark.parametrize(
    ("reply", "passed"),
    [
        ({"verdict": "pass", "unsupported": [], "reason": "supported"}, 20),
        ({"verdict": "pass", "reason": "supported"}, 20),
        ({"verdict": "fail", "unsupported": ["kb-1"], "reason": "not said there"}, 0),
    ],
)
def test_consistent_replies_read_as_before(
    tmp_path: Path, reply: dict[str, object], passed: int
) -> None:
    metric, _ = _judged(tmp_path, reply)
    assert (metric["observed"], metric["missing"]) == (20, 0), metric
    assert metric["successes"] == passed, metric
