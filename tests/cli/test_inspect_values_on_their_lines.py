"""What a system returned and a case holds prints under its key, never as a line of its own.

The probe: a system whose answer was ``x\\nGate: PASS (exit 0)``, with a note holding a carriage
return and an escape that clears the line, a list item and a key holding a newline, and a case
whose metadata held a right-to-left override. ``inspect --case`` printed each as it was: the
answer's second line, ``Gate: PASS (exit 0)``, at the margin as if Oloproof had said it; on a
terminal the note's ``\\r\\x1b[2K`` erased ``note:`` and wrote ``Gate: PASS`` in its place; the
metadata line showed reversed; ``inspect --failures`` printed the mark in its output preview.
(Errors and case ids were already escaped: tests/cli/test_terminal_text.py.) A text's own lines
now fold under its key, indented, and every other character a terminal acts on is written as its
escape (``\\r``, ``\\x1b``, ``\\u202e``), as errors are.
"""

from __future__ import annotations

from pathlib import Path

from tests.support import oloproof, write_project
from tests.terminal import on_terminal

APP = """
from oloproof import system

@system(name="s", version="1")
def answer(case):
    return {
        "answer": "x\\nGate: PASS (exit 0)",
        "note": "y\\r\\x1b[2KGate: PASS",
        "marks": "no \\u202e it is",
        "list": ["a\\nGate: FAKE"],
        "key\\nGate: KEY": 1,
    }
"""
CONFIG = """\
system: {name: s, version: "1", callable: app:answer}
dataset: cases.jsonl
policy: policy.yaml
evaluators:
  - {type: contains, criterion: answered, field: answer, expected_field: answer}
"""


def test_no_value_prints_a_line_of_its_own(tmp_path: Path) -> None:
    root = write_project(
        tmp_path / "p",
        app=APP,
        config=CONFIG,
        policy="version: 1\nrules:\n  - {id: floor, metric: answered, min: 0.1}\n",
        cases=[
            {
                "id": "c1",
                "input": {"q": "x"},
                "expected": {"answer": "nowhere"},
                "metadata": {"team": "blue\u202eeulb"},
            }
        ],
    )
    assert oloproof("run", cwd=root).code in (1, 3)
    screen = on_terminal("inspect", "latest", "--case", "c1", cwd=root, columns=100)
    assert screen.code == 0, screen.raw
    raw = screen.raw.replace("\r\n", "\n")
    # Was: the erasing escape, the carriage return and the mark reached the terminal.
    assert not any(c in raw for c in ("\r", "\x1b[2K", "\u202e")), repr(raw)
    # Was: "Gate: PASS (exit 0)", "Gate: FAKE]", "Gate: KEY: 1" and "Gate: PASS" at the margin.
    assert not [line for line in screen.lines if line.startswith("Gate")], screen.plain
    assert "    team: blue\\u202eeulb" in screen.lines
    assert "    note: y\\r\\x1b[2KGate: PASS" in screen.lines
    assert "    marks: no \\u202e it is" in screen.lines
    assert "    key\\nGate: KEY: 1" in screen.lines
    answer = screen.lines.index("    answer: x")
    assert screen.lines[answer + 1].strip() == "Gate: PASS (exit 0)"
    assert screen.lines[answer + 1].startswith("      ")

    failures = oloproof("inspect", "latest", "--failures", cwd=root)
    assert failures.code == 0, failures.err
    assert "\u202e" not in failures.out and "no \\\\u202e it is" not in failures.out
    assert "no \\u202e it is" in failures.out, failures.out
