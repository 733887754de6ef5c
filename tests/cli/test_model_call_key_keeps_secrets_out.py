"""A model call's ``request_key`` is the key of the request with the secrets the run keeps out
replaced, so the ledger holds nothing a guess at one could be checked against. The model is a
scripted OpenAI-compatible server on 127.0.0.1; the real CLI runs in a subprocess.

(Before: a case whose question held the value of MY_SVC, declared under ``secrets:``, was
stored with ``[redacted]`` in its input, but its ``model_call/v1`` record stored the blake3 key
of the exact request, the value in its prompt: a guess at the value could be checked by
computing the key of the request with the guess in place of ``[redacted]``.)
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.support import oloproof

from oloproof import ModelClient
from oloproof.testing import ScriptedJudgeServer, answer

SECRET = "Zk8-secret-value-31415926"
APP = """
import os

from oloproof import ModelClient, system

LLM = ModelClient(provider="openai", model="tiny", base_url=os.environ["MODEL_URL"], api_key_env=None)


@system(name="asker", version="1")
def ask(case_input):
    return {"answer": LLM.complete(case_input["question"], system="Be brief.")}
"""
CONFIG = """\
system: {name: asker, version: "1", callable: app:ask}
dataset: cases.jsonl
secrets: [MY_SVC]
evaluators:
  - {type: contains, criterion: said, field: answer, expected_field: answer}
"""


def test_a_model_call_s_key_is_the_key_of_the_request_as_stored(tmp_path: Path) -> None:
    root = tmp_path / "p"
    root.mkdir()
    (root / "app.py").write_text(APP)
    (root / "oloproof.yaml").write_text(CONFIG)
    question = f"Is {SECRET} valid?"
    case = {"id": "c", "input": {"question": question}, "expected": {"answer": "Yes"}}
    (root / "cases.jsonl").write_text(json.dumps(case) + "\n")
    with ScriptedJudgeServer(default=answer("Yes.")) as model:
        url = model.openai_base_url
        env = {"MODEL_URL": url, "MY_SVC": SECRET}
        done = oloproof("run", cwd=root, env=env)
        shown = oloproof("inspect", "latest", "--case", "c", "--json", cwd=root, env=env)
    assert done.code == 0, done.out + done.err
    (call,) = json.loads(shown.out)["artifacts"]["model_call/v1"]
    client = ModelClient(provider="openai", model="tiny", base_url=url, api_key_env=None)
    assert call["request_key"] != client.request_key(question, system="Be brief.")
    stored = question.replace(SECRET, "[redacted]")
    assert call["request_key"] == client.request_key(stored, system="Be brief.")
