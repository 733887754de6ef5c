"""An http system's ``url`` holding ``${NAME}`` is refused at its line, exit 2: only header
values read the environment, and a URL is sent (and recorded) as written. Real CLI, endpoint
on 127.0.0.1.

(Before: ``url: http://127.0.0.1:PORT/answer/${ROUTE}`` was accepted, with ROUTE=v1 set, and
every case was POSTed to the literal path: the endpoint answered 404, each case errored
("POST http://127.0.0.1:PORT/answer/${ROUTE} was refused: HTTP 404"), and the run, with no
policy, exited 0.)
"""

from __future__ import annotations

from pathlib import Path

from tests.support import QuietHandler, oloproof, served_project

CONFIG = """\
system:
  name: echo
  version: "1"
  http:
    url: {url}/${{ROUTE}}
    output_path: result
evaluators:
  - {{type: contains, criterion: ok, field: answer, expected_field: answer}}
"""


class Answers(QuietHandler):
    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["Content-Length"]))
        found = self.path == "/answer/v1"
        self.reply(200 if found else 404, b'{"result": {"answer": "x"}}' if found else b"{}")


def test_a_variable_in_the_url_is_refused(tmp_path: Path) -> None:
    cases = [{"id": "c1", "input": {"q": "x"}, "expected": {"answer": "x"}}]
    with served_project(tmp_path / "p", Answers, CONFIG, cases) as root:
        done = oloproof("run", cwd=root, env={"ROUTE": "v1"})
    assert (done.code, done.out) == (2, ""), done.out + done.err
    assert done.err == (
        f"error: {root}/oloproof.yaml, line 5: system.http.url: ${{ROUTE}} is sent as written: "
        "only header values read ${NAME} from the environment; give the URL itself, and a key "
        "in a header (headers: {Authorization: Bearer ${API_TOKEN}})\n"
    )
    assert not (root / ".oloproof").exists()
