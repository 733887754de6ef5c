"""A judge's cost, when some replies reported no tokens, says it leaves them out (real CLI).

A groundedness judge, priced, on a server on 127.0.0.1 whose first reply reports 300 input and
20 output tokens and whose other two report none. The run's Judges table said 3 calls, 300 and
20 tokens, cost 0.34, and under it only "groundedness: 2 replies reported no token counts":
nothing said that 0.34 is the cost of one call of the three, and it read as the run's spend.

Now the line says the tokens and cost above leave those replies out (and, unpriced, the
tokens alone).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.cli.test_judge_failures import case, openai_body, run, write_project

from oloproof.testing import ScriptedJudgeServer, raw

PRICES = {"price_per_input_token": 0.001, "price_per_output_token": 0.002}


@pytest.mark.parametrize(
    ("prices", "cost", "said"), [(PRICES, "0.34", "tokens and cost"), ({}, "—", "tokens")]
)
def test_the_totals_say_they_leave_out_replies_without_token_counts(
    tmp_path: Path, prices: dict[str, Any], cost: str, said: str
) -> None:
    counted = json.loads(openai_body())
    uncounted = {key: value for key, value in counted.items() if key != "usage"}
    bodies = (counted, uncounted, uncounted)
    replies = [raw(json.dumps(body), content_type="application/json") for body in bodies]
    with ScriptedJudgeServer(*replies) as server:
        cases = [case(f"c{i}", f"Notes sync every {i + 2} minutes.") for i in range(3)]
        root = write_project(tmp_path / "p", server.openai_base_url, cases, concurrency=1, **prices)
        result = run(root, "run")
    assert result.code == 0, result.err
    row = next(line for line in result.lines if line.startswith("│ groundedness │ openai"))
    assert [cell.strip() for cell in row.split("│")[3:8]] == ["3", "0", "300", "20", cost]
    # Before: "groundedness: 2 replies reported no token counts", and no more.
    assert (
        f"groundedness: 2 replies reported no token counts, so the {said} above leave them out"
        in result.lines
    ), result.out
