"""A `schema_path` file nested too deeply for Python's JSON parser is refused with one line
naming the file (exit 2), as a file that is not JSON is. Real CLI run in a subprocess.

(Before: `json.loads` raised RecursionError out of the run: a traceback and exit 1.)
"""

from __future__ import annotations

from pathlib import Path

from tests.support import oloproof, write_project

APP = """
from oloproof import system

@system(name="s", version="1")
def run(case):
    return {"answer": "x"}
"""


def test_a_schema_file_too_deep_to_parse_is_refused(tmp_path: Path) -> None:
    root = write_project(
        tmp_path / "p",
        app=APP,
        config=(
            'system: {name: s, version: "1", callable: app:run}\ndataset: cases.jsonl\n'
            "evaluators:\n  - {type: json_schema, criterion: ok, schema_path: deep.json}\n"
        ),
        policy="version: 1\nrules: []\n",
        cases=[{"id": "q0", "input": {}}],
    )
    (root / "deep.json").write_text('{"allOf": [' * 5000 + "{}" + "]}" * 5000)
    result = oloproof("run", cwd=root)
    assert (result.code, result.out) == (2, ""), result.err
    assert result.err == (
        f"error: {root / 'deep.json'}: the JSON Schema file is nested too deeply to read\n"
    )
    assert not (root / ".oloproof").exists()
