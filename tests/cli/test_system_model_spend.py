"""What a system's own model calls cost a run, beside what its judges cost: the calls the run
made, their tokens and cost, and the calls of executions it reused (paid for by the run that made
them), through the real CLI and the viewer, against a scripted model server on 127.0.0.1.

The probe: a model system of four cases, each call billed 100 input and 10 output tokens at
$1 and $2 a million, printed nothing of its spend: `run` and `inspect` said `Cache: execution
0 hit/4 miss`, and the only way to learn the $0.00048 spent was to add up `inspect --case` of
every case.
"""

from __future__ import annotations

import html
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.support import oloproof, write_project
from tests.view.support import fetch, serving

from oloproof.testing import ScriptedJudgeServer, answer

CONFIG = """\
system:
  name: asked
  version: "1"
  model:
    provider: openai
    model: m
    base_url: {url}
    api_key_env: MODEL_KEY
    prompt: "{{{{ q }}}}"
    {prices}
dataset: cases.jsonl
evaluators:
  - {{type: contains, criterion: echo, field: answer, expected_field: answer}}
"""
PRICES = "price_per_input_token: 0.000001\n    price_per_output_token: 0.000002"
ENV = {"MODEL_KEY": "sk-model-key-5521"}
CASES = [{"id": f"c{i}", "input": {"q": f"q{i}"}, "expected": {"answer": "x"}} for i in range(4)]
SPENT = (
    "Model calls of the system: 4 by this run (400 input tokens, 40 output tokens, cost "
    "0.00048); 0 reused from the cache"
)
REUSED = (
    "Model calls of the system: 0 by this run (0 input tokens, 0 output tokens, cost 0); 4 "
    "reused from the cache (paid for by the runs that made them)"
)


@pytest.fixture
def server() -> Iterator[ScriptedJudgeServer]:
    with ScriptedJudgeServer(default=answer("x", input_tokens=100, output_tokens=10)) as model:
        yield model


def project(root: Path, url: str, prices: str = PRICES) -> Path:
    config = CONFIG.format(url=f"{url}/v1", prices=prices)
    return write_project(root, app="", config=config, policy="", cases=CASES)


def test_a_run_says_what_its_system_spent_and_a_reusing_run_what_it_reused(
    tmp_path: Path, server: ScriptedJudgeServer
) -> None:
    root = project(tmp_path / "p", server.url)
    first = oloproof("run", cwd=root, env=ENV)
    assert first.code == 0, first.out + first.err
    assert SPENT in first.out.splitlines()
    assert len(server.requests) == 4
    again = oloproof("run", cwd=root, env=ENV)
    assert again.code == 0, again.out + again.err
    assert REUSED in again.out.splitlines()
    assert len(server.requests) == 4  # nothing asked again
    run_id = json.loads(oloproof("runs", "--json", cwd=root).out)[0]["run_id"]
    shown = oloproof("inspect", run_id, cwd=root)
    assert shown.code == 0, shown.err
    assert REUSED in shown.out.splitlines()
    with serving(root) as url:
        status, page = fetch(f"{url}/runs/{run_id}")
    assert status == 200
    assert f"<p>{html.escape(REUSED)}</p>" in page
    report = json.loads(oloproof("inspect", run_id, "--json", cwd=root).out)
    assert report["model_calls"] == {
        "calls": 0,
        "without_usage": 0,
        "input_tokens": 0,
        "output_tokens": 0,
        "cost": None,  # no priced call made (none made): the line prints cost 0
        "unpriced": 0,
        "reused": 4,
    }


def test_calls_without_prices_show_no_cost_and_a_system_without_calls_no_line(
    tmp_path: Path, server: ScriptedJudgeServer
) -> None:
    root = project(tmp_path / "p", server.url, prices="temperature: 0")
    done = oloproof("run", cwd=root, env=ENV)
    assert done.code == 0, done.out + done.err
    assert (
        "Model calls of the system: 4 by this run (400 input tokens, 40 output tokens, no "
        "prices configured); 0 reused from the cache"
    ) in done.out.splitlines()
    plain = write_project(
        tmp_path / "q",
        app='from oloproof import system\n\n\n@system(name="t", version="1")\ndef run(case):\n'
        '    return {"answer": "x"}\n',
        config="system: {name: t, version: '1', callable: app:run}\ndataset: cases.jsonl\n"
        "evaluators:\n  - {type: contains, criterion: echo, field: answer, expected_field: answer}\n",
        policy="",
        cases=CASES,
    )
    done = oloproof("run", cwd=plain)
    assert done.code == 0, done.out + done.err
    assert "Model calls" not in done.out


STAGED = """
import os

from oloproof import Passage, Retrieval, rag_system
from oloproof.models import ModelClient


@rag_system(name="r", version="1", depth=2, top_k=1)
class Staged:
    llm = ModelClient(
        provider="openai",
        model="m",
        base_url=os.environ["MODEL_URL"],
        api_key_env="MODEL_KEY",
        price_per_input_token=0.000001,
        price_per_output_token=0.000002,
    )

    def retrieve(self, input, depth):
        return Retrieval(query=input["q"], depth=depth, candidates=(Passage(doc_id="d1", text="t"),))

    def generate(self, input, context):
        return {"answer": self.llm.complete("q " + input["q"])}
"""


def test_a_generation_taken_from_the_stage_cache_counts_its_calls_as_reused(
    tmp_path: Path, server: ScriptedJudgeServer
) -> None:
    root = write_project(
        tmp_path / "p",
        app=STAGED,
        config="system: {name: r, version: '1', rag: {object: 'app:Staged'}}\n"
        "dataset: cases.jsonl\n"
        "evaluators:\n  - {type: contains, criterion: echo, field: answer, expected_field: answer}\n",
        policy="",
        cases=CASES,
    )
    env = {**ENV, "MODEL_URL": f"{server.url}/v1"}
    first = oloproof("run", cwd=root, env=env)
    assert first.code == 0, first.out + first.err
    assert SPENT in first.out.splitlines()
    # Retrieval's code changes, its passages do not: every execution is made again, and each
    # generation, given the same context, is taken from the stage cache without a call.
    app = root / "app.py"
    app.write_text(
        app.read_text().replace(
            "return Retrieval(", "depth = int(depth)\n        return Retrieval("
        )
    )
    again = oloproof("run", cwd=root, env=env)
    assert again.code == 0, again.out + again.err
    assert "Cache: execution 0 hit/4 miss; judgment 0 hit/4 miss" in again.out.splitlines()
    assert "Stages: retrieve 0 hit/4 miss; generate 4 hit/0 miss" in again.out.splitlines()
    assert REUSED in again.out.splitlines()
    assert len(server.requests) == 4
