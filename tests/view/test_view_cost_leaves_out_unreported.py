"""The run page says a judge's tokens and cost leave out replies with no token counts, as run.

A priced groundedness judge on a server on 127.0.0.1 whose first reply reports 300 input and 20
output tokens and whose other two report none. ``run`` prints the cost 0.34 and under it
``groundedness: 2 replies reported no token counts, so the tokens and cost above leave them
out``. The viewer's run page printed the cost 0.34 with nothing beside it (the tokens cell
alone said ``(2 call(s) reported no usage)``): the cost of one call of three, read as the run's
spend. The page now prints run's line under the table, from one function; a single such reply
reads ``1 reply``, in both.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from tests.cli.test_judge_cost_without_token_counts import PRICES
from tests.cli.test_judge_failures import case, openai_body, run, write_project
from tests.support import oloproof
from tests.view.support import RUN_ID

from oloproof.testing import ScriptedJudgeServer, raw


@pytest.mark.parametrize("unreported", [2, 1])
def test_the_page_says_what_the_cost_leaves_out(tmp_path: Path, unreported: int) -> None:
    counted = json.loads(openai_body())
    uncounted = {key: value for key, value in counted.items() if key != "usage"}
    bodies = (counted, *[uncounted] * unreported)
    replies = [raw(json.dumps(body), content_type="application/json") for body in bodies]
    with ScriptedJudgeServer(*replies) as server:
        cases = [case(f"c{i}", f"Notes sync every {i + 2} minutes.") for i in range(len(bodies))]
        root = write_project(tmp_path / "p", server.openai_base_url, cases, concurrency=1, **PRICES)
        result = run(root, "run")
    assert result.code == 0, result.err
    replies_said = "1 reply" if unreported == 1 else f"{unreported} replies"
    said = (
        f"groundedness: {replies_said} reported no token counts, so the tokens and cost above "
        "leave them out"
    )
    assert said in result.lines, result.out
    run_id = RUN_ID.findall(result.out)[0]
    site = tmp_path / "site"
    exported = oloproof("view", "--export", str(site), run_id, cwd=root)
    assert exported.code == 0, exported.out + exported.err
    page = (site / "runs" / run_id / "index.html").read_text()
    # Was: only "(2 call(s) reported no usage)" in the tokens cell.
    assert re.findall(r'<p class="small warn">([^<]*)</p>', page) == [said], page
