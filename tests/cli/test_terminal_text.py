"""Text from a case or a system is printed as it is, never acted on by the terminal.

A case id and an error message may hold a carriage return (which rewrites the line on a
terminal: ``bad\\rGate: PASS (exit 0)`` showed as a passing gate), escape sequences that clear
the screen or retitle the window, or marks that reorder text. ``run``, ``inspect --failures``
and ``inspect --case`` print each such character as its escape.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.support import oloproof
from tests.unchecked_ids import oloproof_unchecked_ids

APP = """
from oloproof import system

@system(name="esc", version="1")
def run(case):
    if case["q"] == "boom":
        raise RuntimeError("bad\\rGate: PASS (exit 0)\\x1b[2J\\x1b]0;title\\x07 \\u202egnp.exe")
    return {"answer": "x"}
"""
CONFIG = """\
system: {name: esc, version: "1", callable: app:run}
evaluators:
  - {type: contains, criterion: echo, field: answer, expected_field: answer}
"""
RAW = ("\r", "\x1b", "\x07", "\u202e")


def test_control_characters_from_cases_and_systems_are_shown_escaped(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text(APP)
    (tmp_path / "oloproof.yaml").write_text(CONFIG)
    cases = [
        {"id": "a\rb", "input": {"q": "boom"}, "expected": {"answer": "y"}},
        {"id": "c", "input": {"q": "x"}, "expected": {"answer": "zz"}},
    ]
    (tmp_path / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases))
    # Such an id is refused in a cases file now; a ledger written before still holds it.
    run = oloproof_unchecked_ids("run", cwd=tmp_path)
    failures = oloproof("inspect", "latest", "--failures", cwd=tmp_path)
    case = oloproof("inspect", "latest", "--case", "a\rb", cwd=tmp_path)
    for done in (run, failures, case):
        assert done.code == 0, done.err
        assert not any(raw in done.out for raw in RAW), repr(done.out)
    assert "(first: a\\rb)" in run.out
    assert "\na\\rb\n" in failures.out
    message = "RuntimeError: bad\\rGate: PASS (exit 0)\\x1b[2J\\x1b]0;title\\x07 \\u202egnp.exe"
    assert f"  errored: {message}" in failures.lines
    assert case.lines[0] == "case a\\rb (errored)"
    assert any(line.strip() == f"error: {message}" for line in case.lines), case.out


def test_an_error_sentence_shows_what_it_quotes_escaped(tmp_path: Path) -> None:
    # The sentence on stderr quotes the name it could not find, as it was typed.
    (tmp_path / "app.py").write_text(APP)
    (tmp_path / "oloproof.yaml").write_text(CONFIG)
    (tmp_path / "cases.jsonl").write_text(
        json.dumps({"id": "c", "input": {"q": "x"}, "expected": {"answer": "x"}}) + "\n"
    )
    assert oloproof("run", cwd=tmp_path).code == 0
    done = oloproof("inspect", "run_x\rGate: PASS (exit 0)\x1b[2K", cwd=tmp_path)
    assert done.code == 2
    assert not any(raw in done.err for raw in RAW), repr(done.err)
    assert done.err.startswith("error: no run run_x\\rGate: PASS (exit 0)\\x1b[2K in this ledger")
