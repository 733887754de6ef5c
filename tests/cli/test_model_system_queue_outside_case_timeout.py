"""A model system whose own ``concurrency`` (its calls in flight) is below the project's has its
cases started no faster than the model takes them, so no case waits in the model's queue on its
own ``timeout_s``. Real CLI, model on 127.0.0.1.

(Before: 10 cases at concurrency 8 against a model with concurrency 1 (a llama.cpp server's
default) that answered each in 0.5 s, under timeout_s: 3, recorded 'TimeoutError: the case
took longer than 3 s' for the cases queued behind the first few: counted missing against the
release, the model never asked.)
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.support import oloproof

from oloproof.testing import ScriptedJudgeServer, answer

CONFIG = """\
system:
  name: m
  version: "1"
  model:
    provider: openai
    model: m
    base_url: {url}
    api_key_env: null
    prompt: "{{{{ q }}}}"
    concurrency: 1
concurrency: 8
timeout_s: 3
evaluators:
  - {{type: contains, criterion: echo, field: answer, expected_field: answer}}
"""


def test_cases_queued_for_the_model_are_not_timed_out(tmp_path: Path) -> None:
    root = tmp_path / "p"
    root.mkdir()
    cases = (
        {"id": f"c{i}", "input": {"q": f"q{i}"}, "expected": {"answer": "x"}} for i in range(10)
    )
    (root / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases))
    with ScriptedJudgeServer(default=answer("x", delay_s=0.5)) as server:
        (root / "oloproof.yaml").write_text(CONFIG.format(url=server.openai_base_url))
        done = oloproof("run", "--json", cwd=root)
        asked = len(server.requests)
    assert done.code == 0, done.out + done.err
    (metric,) = json.loads(done.out)["metrics"]
    assert (metric["observed"], metric["missing"], asked) == (10, 0, 10), metric
