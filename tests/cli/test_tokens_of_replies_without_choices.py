"""The tokens a chat completion with ``choices: []`` reports are counted, through the real CLI.

A server that withholds every choice (a prompt its filter blocked, a proxy whose upstream gave
nothing) can still answer 200 with ``"choices": []`` and the ``usage`` it billed. Such a reply
was read as a body not in the protocol's shape, so its tokens were counted nowhere: a judge's
row said ``0 + 2 failed``, 0 input and 0 output tokens, cost 0, for two calls billed 600 + 40
tokens, and a model system's errored case kept no ``model_call/v1`` record. Now they count as a
reply without text does (the judgments still missing, the case still errored).
"""

from __future__ import annotations

from pathlib import Path

from tests.cli.test_errored_model_calls_kept import capitals, model_system
from tests.cli.test_judge_failures import case, openai_body, run, write_project
from tests.cli.test_tokens_of_replies_without_an_answer import call, spent
from tests.support import QuietHandler, http_server, oloproof

from oloproof.testing import ScriptedJudgeServer, raw

NO_CHOICES = openai_body(choices=[])


def test_a_judge_reply_without_choices_adds_its_tokens_to_the_judges_totals(
    tmp_path: Path,
) -> None:
    replies = [raw(NO_CHOICES, content_type="application/json")] * 2
    with ScriptedJudgeServer(*replies) as server:
        cases = [case(f"c{i}", f"Notes sync every {i + 2} minutes.") for i in range(2)]
        prices = {"price_per_input_token": 0.001, "price_per_output_token": 0.002}
        root = write_project(tmp_path / "p", server.openai_base_url, cases, **prices)
        result = run(root, "run")
    assert result.code == 0, result.err
    assert "groundedness: 2 missing: 2 judge_malformed_response" in result.lines, result.out
    row = next(line for line in result.lines if line.startswith("│ groundedness │ openai"))
    # Before: 0 + 2 failed, 0 input and 0 output tokens, cost 0.
    assert [cell.strip() for cell in row.split("│")[3:8]] == [
        "0 + 2 failed",
        "0",
        "600",
        "40",
        "0.68",
    ]


class NoChoices(QuietHandler):
    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["Content-Length"]))
        self.reply(200, NO_CHOICES.encode())


def test_a_model_system_case_without_choices_keeps_the_tokens_its_reply_reported(
    tmp_path: Path,
) -> None:
    with http_server(NoChoices) as base:
        root = capitals(tmp_path / "p", "", model_system(base), ["none"])
        done = oloproof("run", cwd=root)
    assert done.code == 0, done.out + done.err
    # Before: the errored case kept no model_call/v1 record.
    assert spent(root, "none") == ("errored", [call(300, 20, None)])
