"""A chat-completions reply cut where the model's context ends (``finish_reason: model_length``)
is not taken as the model's whole answer, through the real CLI.

Mistral's chat-completions API ends a reply that ran into the model's context length with
``finish_reason: model_length`` (beside ``length``, the token limit). Oloproof took any finish
reason it did not list as a finished reply: a model system's "The capital of France is Paris,
which" cut there was recorded as the case's output and passed its ``contains`` check: 20 such
cases were 20 / 20 observed and the gate passed (exit 0); a judge's verdict object so cut was a
verdict (2 / 2 observed). Anthropic's counterpart, ``stop_reason: model_context_window_exceeded``, was
already refused. Now the case is errored, and the judgment missing (``judge_reply_incomplete``),
with a sentence saying the reply was cut where the model's context ends; an execution that a
release reading such a reply whole cached is made again, not served (``REPLIES`` 4).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.cli.test_judge_failures import case, run, write_project
from tests.cli.test_model_replies_not_whole import CUT, BadDay, chat, errors, project
from tests.support import http_server, metric_of, oloproof

from oloproof.testing import ScriptedJudgeServer, raw

# A release that read finish_reason model_length as a finished reply.
EARLIER_RELEASE = """
from oloproof import models
from oloproof.providers import openai_chat

models.REPLIES = 3
del openai_chat._INCOMPLETE["model_length"]
from oloproof.cli.main import main

main()
"""


class ModelLength(BadDay):
    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["Content-Length"]))
        self.reply(200, json.dumps(chat(CUT, "model_length")).encode())


@pytest.fixture
def base() -> Iterator[str]:
    with http_server(ModelLength) as url:
        yield url


def test_a_model_reply_cut_at_the_model_length_errors_its_case(tmp_path: Path, base: str) -> None:
    kinds = [f"cut{n}" for n in range(20)]
    root = project(tmp_path / "p", base, "openai", kinds)
    done = oloproof("run", cwd=root)
    # Was: exit 0, "20 / 20 observed": the cut texts recorded as answers and judged whole.
    assert done.code == 3, done.out + done.err
    assert "0 / 0 observed · 20 missing" in done.out, done.out
    said = (
        f"openai model m at {base}/v1/chat/completions: the reply was cut where the model's "
        "context ends (finish_reason model_length), so it is not taken as the model's answer"
    )
    assert errors(root) == dict.fromkeys(kinds, said)


def test_a_judge_reply_cut_at_the_model_length_gives_no_verdict(tmp_path: Path) -> None:
    reply = chat(json.dumps({"verdict": "pass", "reason": "r"}), "model_length")
    reply["usage"]["prompt_tokens"] = 5000  # the whole prompt read
    cases = [case(f"c{n}", "Notes sync across devices every five minutes.") for n in range(2)]
    with ScriptedJudgeServer(default=raw(json.dumps(reply), content_type="application/json")) as s:
        root = write_project(tmp_path / "p", s.openai_base_url, cases)
        done = run(root, "run", "--json")
    assert done.code == 0, done.err
    found = metric_of(json.loads(done.out), "groundedness")
    # Was: 2 / 2 observed, both passed.
    assert (found["observed"], found["missing"]) == (0, 2), found
    assert found["missing_reasons"] == {"judge_reply_incomplete": 2}, found


def test_an_execution_an_earlier_reading_cached_is_made_again(tmp_path: Path, base: str) -> None:
    kinds = [f"cut{n}" for n in range(20)]
    root = project(tmp_path / "p", base, "openai", kinds)
    earlier = oloproof("run", cwd=root, command=("-c", EARLIER_RELEASE))
    assert earlier.code == 0, earlier.out + earlier.err
    assert "20 / 20 observed · 0 missing" in earlier.out, earlier.out
    done = oloproof("run", cwd=root)
    # Not "Cache: execution 20 hit/0 miss", the cut answers served and passed again.
    assert done.code == 3, done.out + done.err
    assert "0 / 0 observed · 20 missing" in done.out, done.out
