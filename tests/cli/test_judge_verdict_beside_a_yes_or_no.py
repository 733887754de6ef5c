"""A judge's verdict object that gives a second decision as a yes or no, or in another word,
through the real CLI.

The judge's model is a real HTTP server on 127.0.0.1 answering as an OpenAI-compatible server
does, with the object the judged answer's ``MODE:<kind>`` picks. A second decision beside the
verdict written ``"pass"`` or ``"fail"`` (``{"verdict": "pass", "final_verdict": "fail"}``) was
already unparseable. Written any other way it was not read at all, and the verdict stood:
``"grounded": false``, ``"supported": "no"``, ``"result": "failed"``, ``"final_verdict":
"FAIL."`` beside ``"verdict": "pass"`` were 5 / 5 passed, as was a score judge's pass beside
``"overall_score": 0.1``. Now each is unparseable, saying what the reply gives where, and a
reply whose words only agree (``"result": "passed"``) or carry no decision stays a verdict.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from tests.cli.test_judge_failures import case, judgment_of, run, write_project

from oloproof.testing import RecordedRequest, Reply, ScriptedJudgeServer, answer

PASS = {"verdict": "pass", "reason": "stated in kb-01"}
REPLIES: dict[str, dict[str, Any]] = {
    "boolean": {**PASS, "grounded": False},
    "boolean_true": {**PASS, "hallucinated": True},
    "yes_no": {**PASS, "supported": "no"},
    "failed": {**PASS, "result": "failed"},
    "punctuated": {**PASS, "final_verdict": "FAIL."},
    "nested_boolean": {**PASS, "claims": [{"claim": "sync", "supported": False}]},
    "score_beside": {**PASS, "overall_score": 0.1},
    "agrees": {**PASS, "result": "Passed"},
    "no_decision": {**PASS, "confidence": "high", "claims": ["sync every five minutes"]},
}


def scripted(request: RecordedRequest) -> Reply:
    found = re.search(r"MODE:(\w+)", request.user_message)
    assert found is not None
    return answer(json.dumps(REPLIES[found[1]]), input_tokens=2000)


def test_a_second_decision_in_another_word_gives_no_verdict(tmp_path: Path) -> None:
    with ScriptedJudgeServer(default=scripted) as server:
        cases = [case(kind, f"Notes sync every five minutes. MODE:{kind}") for kind in REPLIES]
        root = write_project(tmp_path / "p", server.openai_base_url, cases, max_retries=0)
        done = run(root, "run", "--json")
        assert done.code == 0, done.out + done.err
        said: dict[str, str] = {}
        for kind in REPLIES:
            body = judgment_of(root, kind)
            said[kind] = body["detail"].get("parse_error") or body["status"]
    # Before: every one a pass.
    assert said == {
        "boolean": 'the reply gives false under "grounded" beside its "verdict", and a yes or '
        "no says nothing of which way it leans",
        "boolean_true": 'the reply gives true under "hallucinated" beside its "verdict", and a '
        "yes or no says nothing of which way it leans",
        "yes_no": 'the reply gives "no" under "supported" beside its "verdict", and a yes or '
        "no says nothing of which way it leans",
        "failed": 'the reply gives "failed" under "result" beside its "verdict"',
        "punctuated": 'the reply gives "fail" under "final_verdict" beside its "verdict"',
        "nested_boolean": 'the reply gives false under "claims"[0]."supported" beside its '
        '"verdict", and a yes or no says nothing of which way it leans',
        "score_beside": 'the reply gives 0.1 under "overall_score" beside its "verdict", and '
        "nothing says where a score becomes a pass",
        "agrees": "pass",
        "no_decision": "pass",
    }
