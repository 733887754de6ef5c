"""A version holding ``${NAME}`` or ``$NAME`` (the system's ``version``, an http system's
``reuse.version``, a staged system's ``index_version``) is refused at its line, exit 2, nothing
written: only header values read the environment, so every run would carry the same version,
and reuse what a run of another made. Real CLI, endpoint on 127.0.0.1.

(Before: ``reuse: {version: "${DEPLOY}"}`` was kept as written; a run with DEPLOY=v1 then one
with DEPLOY=v2, the endpoint redeployed between them, printed 'Cache: execution 1 hit/0 miss':
the second deploy was never called, and its report was the first one's answers.)
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.support import QuietHandler, oloproof, served_project

# VERSION and REUSE are replaced, then {url} by served_project.
HTTP = """\
system:
  name: echo
  version: VERSION
  http:
    url: {url}
    output_path: result
    reuse: {{version: REUSE}}
evaluators:
  - {{type: contains, criterion: ok, field: answer, expected_field: answer}}
"""
CASES = [{"id": "c1", "input": {"q": "x"}, "expected": {"answer": "x"}}]
SAID = (
    "is kept as written: only header values read ${NAME} from the environment, so every run "
    "would have this same version whatever the variable holds, and reuse what a run of another "
    "made; write the version itself"
)


class Answers(QuietHandler):
    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["Content-Length"]))
        self.reply(200, b'{"result": {"answer": "x"}}')


@pytest.mark.parametrize(
    ("version", "reuse", "at", "named"),
    [
        ('"1"', '"${DEPLOY}"', "line 7: system.http.reuse.version", "${DEPLOY}"),
        ('"1"', "build-$DEPLOY", "line 7: system.http.reuse.version", "$DEPLOY"),
        ('"${DEPLOY}"', '"1"', "line 3: system.version", "${DEPLOY}"),
    ],
)
def test_a_variable_in_a_version_is_refused(
    tmp_path: Path, version: str, reuse: str, at: str, named: str
) -> None:
    kept = {ord("{"): "{{", ord("}"): "}}"}  # through served_project's str.format
    config = HTTP.replace("VERSION", version.translate(kept)).replace(
        "REUSE", reuse.translate(kept)
    )
    with served_project(tmp_path / "p", Answers, config, CASES) as root:
        done = oloproof("run", cwd=root, env={"DEPLOY": "v1"})
    assert (done.code, done.out) == (2, ""), done.out + done.err
    assert done.err == f"error: {root}/oloproof.yaml, {at}: {named} {SAID}\n"
    assert not (root / ".oloproof").exists()


def test_an_index_version_reading_a_variable_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "p"
    root.mkdir()
    (root / "oloproof.yaml").write_text(
        'system:\n  name: r\n  version: "1"\n  rag:\n    object: app:Rag\n'
        '    index_version: "${INDEX}"\n'
    )
    (root / "cases.jsonl").write_text("")
    done = oloproof("run", cwd=root, env={"INDEX": "7"})
    assert (done.code, done.out) == (2, ""), done.out + done.err
    assert done.err == (
        f"error: {root}/oloproof.yaml, line 6: system.rag.index_version: ${{INDEX}} {SAID}\n"
    )
    assert not (root / ".oloproof").exists()


def test_a_version_with_a_dollar_before_no_name_is_taken(tmp_path: Path) -> None:
    config = HTTP.replace("VERSION", '"v$1"').replace("REUSE", '"2024$"')
    with served_project(tmp_path / "p", Answers, config, CASES) as root:
        done = oloproof("run", "--dry-run", cwd=root)
    assert done.code == 0, done.out + done.err
