"""A call's timeout given longer than a case may take never applies: the case is stopped
first. An http or model system's ``timeout_s`` given longer than the case's is refused before
anything is written, naming both and where each was set. A default longer than the case's (an
http system's 30 s, a server profile's 600 s) is left as it is: an LLM judge's call is not held
to the case's timeout, and a slow local judge needs the whole of its profile's. Real CLI,
servers on 127.0.0.1.

(Before: ``system.http.timeout_s: 5`` under ``timeout_s: 2``, against an endpoint answering
in 3 s, was accepted and the case recorded only 'the case took longer than 2 s', the http
timeout never reached, and ``system.model.timeout_s: 300`` under the default 120 was
accepted too.)
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from tests.support import QuietHandler, oloproof, served_project, stored_event

from oloproof.testing import ScriptedJudgeServer, answer, verdict

HTTP_CONFIG = """\
system:
  name: echo
  version: "1"
  http:
    url: {{url}}
    output_path: result
    timeout_s: {http}
{case}evaluators:
  - {{{{type: contains, criterion: ok, field: answer, expected_field: answer}}}}
"""
CASES = [{"id": "c1", "input": {"q": "x"}, "expected": {"answer": "x"}}]


class SlowAnswer(QuietHandler):
    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["Content-Length"]))
        time.sleep(3)
        self.reply(200, json.dumps({"result": {"answer": "x"}}).encode())


@pytest.mark.parametrize(
    ("http", "case", "said"),
    [
        (5, "timeout_s: 2\n", "timeout_s: 2 s (line 8)"),
        (300, "", "timeout_s: 120 s (its default)"),
    ],
)
def test_an_http_timeout_past_the_case_is_refused(
    tmp_path: Path, http: int, case: str, said: str
) -> None:
    config = HTTP_CONFIG.format(http=http, case=case)
    with served_project(tmp_path / "p", SlowAnswer, config, CASES) as root:
        done = oloproof("run", cwd=root)
    assert (done.code, done.out) == (2, ""), done.out + done.err
    case_s = said.split()[1]
    assert done.err == (
        f"error: {root}/oloproof.yaml, line 7: system.http.timeout_s: {http} s is longer than "
        f"a case may take, {said}, which stops the case first: this timeout, and every retry "
        f"after a call that reached it, would never apply; give at most {case_s} s, or a "
        "longer timeout_s for the case\n"
    )
    assert not (root / ".oloproof").exists()


def test_an_http_default_past_the_case_is_left_as_it_is(tmp_path: Path) -> None:
    config = HTTP_CONFIG.replace("    timeout_s: {http}\n", "").format(case="timeout_s: 10\n")
    with served_project(tmp_path / "p", SlowAnswer, config, CASES) as root:
        done = oloproof("run", cwd=root)
    assert done.code == 0, done.out + done.err
    _, run = stored_event(root, "oloproof.run")
    assert run["config"]["system"]["http"]["timeout_s"] == 30


MODEL_CONFIG = """\
system:
  name: m
  version: "1"
  model:
    provider: openai
    server: llama.cpp
    model: m
    base_url: {model}
    prompt: "{{{{ q }}}}"
evaluators:
  - type: answer_judge
    provider: openai
    server: ollama
    model: j
    base_url: {judge}
"""


def test_a_server_profile_default_past_the_case_is_left_as_it_is(tmp_path: Path) -> None:
    root = tmp_path / "p"
    root.mkdir()
    (root / "cases.jsonl").write_text(json.dumps(CASES[0]) + "\n")
    with (
        ScriptedJudgeServer(default=answer("x")) as model,
        ScriptedJudgeServer(default=verdict(True)) as judge,
    ):
        (root / "oloproof.yaml").write_text(
            MODEL_CONFIG.format(model=model.openai_base_url, judge=judge.openai_base_url)
        )
        done = oloproof("run", cwd=root)
    assert done.code == 0, done.out + done.err
    _, run = stored_event(root, "oloproof.run")
    config = run["config"]
    # Neither is shortened to the case's 120 s: each keeps its profile's (600 s), the judge's
    # above all, whose call no case timeout stops.
    assert (config["system"]["model"]["timeout_s"], config["evaluators"][0]["timeout_s"]) == (
        600,
        600,
    )


def test_a_model_timeout_past_the_case_is_refused(tmp_path: Path) -> None:
    config = MODEL_CONFIG.format(model="http://127.0.0.1:9/v1", judge="http://127.0.0.1:9/v1")
    config = config.replace("    prompt:", "    timeout_s: 300\n    prompt:", 1)
    root = tmp_path / "p"
    root.mkdir()
    (root / "cases.jsonl").write_text(json.dumps(CASES[0]) + "\n")
    (root / "oloproof.yaml").write_text(config)
    done = oloproof("run", cwd=root)
    assert (done.code, done.out) == (2, ""), done.out + done.err
    assert done.err == (
        f"error: {root}/oloproof.yaml, line 9: system.model.timeout_s: 300 s is longer than a "
        "case may take, timeout_s: 120 s (its default), which stops the case first: this "
        "timeout, and every retry after a call that reached it, would never apply; give at "
        "most 120 s, or a longer timeout_s for the case\n"
    )
    assert not (root / ".oloproof").exists()
