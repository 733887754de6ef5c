"""A judge's or a model system's ``model`` holding ``${NAME}`` or ``$NAME`` is refused at its
line, exit 2, nothing written: only an http system's header values read the environment, and a
model's name is sent as written. Real CLI, judge on 127.0.0.1.

(Before: ``model: ${JUDGE_MODEL}``, with JUDGE_MODEL set, was sent as the model's name: the
server was asked for the model '${JUDGE_MODEL}', answered 404, and the run, with no policy,
exited 0 with '1 missing: 1 judge_http_error' and no word of the setting.)
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import ClassVar

import pytest
from tests.support import QuietHandler, http_server, oloproof, toy_project

JUDGE = """\
system: {{name: toy, version: "1", callable: app:run}}
evaluators:
  - type: answer_judge
    provider: openai
    model: {model}
    base_url: {url}/v1
    api_key_env: null
"""
MODEL = """\
system:
  name: m
  version: "1"
  model:
    provider: openai
    model: {model}
    base_url: {url}/v1
    api_key_env: null
    prompt: "{{{{ q }}}}"
evaluators:
  - {{type: contains, criterion: echo, field: answer, expected_field: answer}}
"""
SAID = (
    "is sent as written: only an http system's header values read ${NAME} from the "
    "environment; give the model's name itself"
)


class NoSuchModel(QuietHandler):
    """Knows no model: notes the name each request asks for."""

    asked: ClassVar[list[str]] = []

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.asked.append(body["model"])
        self.reply(404, b'{"error": {"message": "model not found"}}')


@pytest.mark.parametrize(
    ("config", "model", "at", "named"),
    [
        (JUDGE, '"${JUDGE_MODEL}"', "line 5: evaluators.0.model", "${JUDGE_MODEL}"),
        (JUDGE, "$JUDGE_MODEL", "line 5: evaluators.0.model", "$JUDGE_MODEL"),
        (MODEL, '"${JUDGE_MODEL}"', "line 6: system.model.model", "${JUDGE_MODEL}"),
    ],
)
def test_a_variable_in_a_model_name_is_refused(
    tmp_path: Path, config: str, model: str, at: str, named: str
) -> None:
    with http_server(NoSuchModel) as base:
        root = toy_project(tmp_path / "p", config=config.format(model=model, url=base))
        done = oloproof("run", cwd=root, env={"JUDGE_MODEL": "m"})
    assert (done.code, done.out) == (2, ""), done.out + done.err
    assert done.err == f"error: {root}/oloproof.yaml, {at}: {named} {SAID}\n"
    assert NoSuchModel.asked == []
    assert not (root / ".oloproof").exists()
