"""The head of ``inspect --failures`` names the verdicts missing that it lists.

The probe: a groundedness judge whose server answers every case with a body that is not JSON;
the three cases ran, and none of them has a verdict (``judge_malformed_response``). ``inspect
--failures`` headed its list ``3 of 3 cases failed, errored or did not finish``: none of the
three did any of those. The head now says ``failed, errored, are missing a verdict or did not
finish`` when it lists a case for a verdict missing (as the viewer's run page says), and reads
as before otherwise (the guide's ``4 of 15 cases failed, errored or did not finish``).
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.test_judge_failures import case, run, write_project
from tests.view.support import RUN_ID

from oloproof.testing import ScriptedJudgeServer, raw


def test_the_head_says_cases_are_missing_a_verdict(tmp_path: Path) -> None:
    garbled = raw("not json at all", content_type="application/json")
    with ScriptedJudgeServer(default=garbled) as server:
        cases = [case(f"c{i}", f"Notes sync every {i + 2} minutes.") for i in range(3)]
        root = write_project(tmp_path / "p", server.openai_base_url, cases, max_retries=0)
        done = run(root, "run")
    assert done.code == 0, done.out + done.err
    assert "│ groundedness │ —        │ —        │ 0 / 0 observed · 3 missing · 0 excluded │" in (
        done.lines
    ), done.out
    run_id = RUN_ID.findall(done.out)[0]
    shown = run(root, "inspect", run_id, "--failures")
    assert shown.code == 0, shown.err
    # Was: "3 of 3 cases failed, errored or did not finish".
    assert shown.lines[0] == "3 of 3 cases failed, errored, are missing a verdict or did not finish"
    assert shown.lines.count("  groundedness: missing (judge_malformed_response)") == 3
    listed = json.loads(run(root, "inspect", run_id, "--failures", "--json").out)
    assert len(listed["failed"]) == 3
