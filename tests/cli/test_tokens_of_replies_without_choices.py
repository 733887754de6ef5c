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
from tests.cli.test_judge_failures import openai_body
from tests.cli.test_tokens_of_replies_without_an_answer import call, judges_row, spent
from tests.support import QuietHandler, http_server, oloproof

NO_CHOICES = openai_body(choices=[])


def test_a_judge_reply_without_choices_adds_its_tokens_to_the_judges_totals(
    tmp_path: Path,
) -> None:
    # Before: 0 + 2 failed, 0 input and 0 output tokens, cost 0.
    assert judges_row(tmp_path, [NO_CHOICES] * 2) == ["0 + 2 failed", "0", "600", "40", "0.68"]


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
