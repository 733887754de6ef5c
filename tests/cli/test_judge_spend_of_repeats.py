"""A judge's calls under ``--repeats`` are each counted in the run's totals, through the real CLI.

A system whose answer differs on every execution is run with ``--repeats 3`` over two cases,
judged by a groundedness judge on a server on 127.0.0.1 that reports 2,000 input and 10 output
tokens a call. The judge was called 6 times (``judgment 0 hit/6 miss``, 6 requests served),
but the run's Judges table said 2 calls, 4,000 and 20 tokens, cost 4.04: the usage meter kept
one verdict a case and criterion, each repeat's overwriting the one before, so a third of the
spend was reported.

Now every repeat's judgment is counted: 6 calls, 12,000 and 60 tokens, cost 12.12.
"""

from __future__ import annotations

from pathlib import Path

from tests.cli.test_judge_failures import case, run, write_project

from oloproof.testing import ScriptedJudgeServer, verdict

APP = """
import itertools

from oloproof import Context, ContextItem, current_case, system

EXECUTIONS = itertools.count()
PASSAGE = ContextItem(doc_id="kb-01", text="Notes sync across devices every five minutes.")


@system(name="injector", version="1", records=["context/v1"])
def answer(case_input):
    current_case().context(Context(items=(PASSAGE,)))
    return {"answer": f"{case_input['answer']} (take {next(EXECUTIONS)})"}
"""


def test_each_repeats_judge_call_is_counted(tmp_path: Path) -> None:
    reply = verdict(True, input_tokens=2000, output_tokens=10)
    with ScriptedJudgeServer(default=reply) as server:
        cases = [case(f"c{i}", f"Notes sync every {i + 2} minutes.") for i in range(2)]
        prices = {"price_per_input_token": 0.001, "price_per_output_token": 0.002}
        root = write_project(tmp_path / "p", server.openai_base_url, cases, **prices)
        (root / "app.py").write_text(APP, encoding="utf-8")
        result = run(root, "run", "--repeats", "3")
        asked = len(server.requests)
    assert result.code == 0, result.err
    assert asked == 6
    assert "Cache: execution 0 hit/6 miss; judgment 0 hit/6 miss" in result.lines, result.out
    row = next(line for line in result.lines if line.startswith("│ groundedness │ openai"))
    # Before: 2 calls, 4,000 and 20 tokens, cost 4.04.
    assert [cell.strip() for cell in row.split("│")[3:8]] == ["6", "0", "12,000", "60", "12.12"]
