"""A judge's or a model system's ``base_url`` or ``model`` holding ``${NAME}`` or ``$NAME`` is
refused at its line, exit 2, nothing written: only an http system's header values read the
environment, and a URL or a model's name is sent (and recorded) as written. So is an http
system's ``url`` holding ``$NAME``, as one holding ``${NAME}`` already was. Real CLI, endpoints
on 127.0.0.1.

(Before: ``base_url: http://127.0.0.1:PORT/${VER}`` was accepted, with VER=v1 set; every
judgment was POSTed to ``/$%7BVER%7D/chat/completions``, answered 404, and the run, with no
policy, exited 0 with '1 missing: 1 judge_http_error' and no word of the setting. So with
``model: ${JUDGE_MODEL}``: the server was asked for the model '${JUDGE_MODEL}' and answered 404.)
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import ClassVar

import pytest
from tests.support import QuietHandler, http_server, oloproof, served_project, toy_project

JUDGE = """\
system: {{name: toy, version: "1", callable: app:run}}
evaluators:
  - type: answer_judge
    provider: openai
    model: {model}
    base_url: {url}
    api_key_env: null
"""
MODEL = """\
system:
  name: m
  version: "1"
  model:
    provider: openai
    model: {model}
    base_url: {url}
    api_key_env: null
    prompt: "{{{{ q }}}}"
evaluators:
  - {{type: contains, criterion: echo, field: answer, expected_field: answer}}
"""
HTTP = """\
system:
  name: echo
  version: "1"
  http:
    url: {url}/$ROUTE
    output_path: result
evaluators:
  - {{type: contains, criterion: ok, field: answer, expected_field: answer}}
"""
READS_NONE = "is sent as written: only an http system's header values read ${NAME} from the "
INSTEAD = (
    f"{READS_NONE}environment; give the URL itself, and the name of the key's variable in "
    "api_key_env"
)


class Found(QuietHandler):
    """Answers at the path the variable would have made, so only the setting can be at fault;
    notes the model each request asks for."""

    asked: ClassVar[list[str]] = []

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.asked.append(body.get("model"))
        found = self.path in ("/v1/chat/completions", "/answer/v1")
        self.reply(200 if found else 404, b'{"result": {"answer": "x"}}' if found else b"{}")


@pytest.mark.parametrize(
    ("config", "tail", "at", "named"),
    [
        (JUDGE, "/${VER}", "line 6: evaluators.0.base_url", "${VER}"),
        (JUDGE, "/$VER", "line 6: evaluators.0.base_url", "$VER"),
        (MODEL, "/${VER}", "line 7: system.model.base_url", "${VER}"),
    ],
)
def test_a_variable_in_a_base_url_is_refused(
    tmp_path: Path, config: str, tail: str, at: str, named: str
) -> None:
    with http_server(Found) as base:
        root = toy_project(tmp_path / "p", config=config.format(model="m", url=base + tail))
        done = oloproof("run", cwd=root, env={"VER": "v1"})
    assert (done.code, done.out) == (2, ""), done.out + done.err
    assert done.err == f"error: {root}/oloproof.yaml, {at}: {named} {INSTEAD}\n"
    assert not (root / ".oloproof").exists()


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
    with http_server(Found) as base:
        root = toy_project(tmp_path / "p", config=config.format(model=model, url=base + "/v1"))
        done = oloproof("run", cwd=root, env={"JUDGE_MODEL": "m"})
    assert (done.code, done.out) == (2, ""), done.out + done.err
    said = f"{READS_NONE}environment; give the model's name itself"
    assert done.err == f"error: {root}/oloproof.yaml, {at}: {named} {said}\n"
    assert Found.asked == []
    assert not (root / ".oloproof").exists()


def test_a_bare_variable_in_an_http_url_is_refused(tmp_path: Path) -> None:
    cases = [{"id": "c1", "input": {"q": "x"}, "expected": {"answer": "x"}}]
    with served_project(tmp_path / "p", Found, HTTP, cases) as root:
        done = oloproof("run", cwd=root, env={"ROUTE": "v1"})
    assert (done.code, done.out) == (2, ""), done.out + done.err
    assert done.err.startswith(
        f"error: {root}/oloproof.yaml, line 5: system.http.url: $ROUTE is sent as written: "
    ), done.err
    assert not (root / ".oloproof").exists()


def test_a_base_url_without_a_variable_is_taken(tmp_path: Path) -> None:
    root = toy_project(
        tmp_path / "p", config=JUDGE.format(model="m", url="http://127.0.0.1:8000/v1")
    )
    done = oloproof("run", "--dry-run", cwd=root)
    assert done.code == 0, done.out + done.err
