"""An error's traceback is kept at a bounded size, its start and its end, and `inspect --case`
says what an evaluator raised, through the real CLI.

The probe: a JSON Schema that recursed through `$dynamicRef` stored a traceback of about 110,000
characters with every judgment it failed (Python folds a frame repeated in a row, not two frames
that alternate), and a system that recursed so stored as much with every case: a hundred such
cases, 11 MB of the ledger. Now a record keeps the first 4,000 characters and the last 12,000
(the frames nearest the error, and the error), with a line saying how much was left out.
`inspect --case` printed `missing (evaluator_raised)` with no word of the error.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.support import TOY_CONFIG, oloproof, toy_project

# Two functions that call each other without end: the frames alternate, so Python folds none.
APP = """
from oloproof import system


def ping(n):
    return pong(n + 1)


def pong(n):
    return ping(n + 1)


@system(name="toy", version="1")
def run(case):
    return {"answer": ping(0)}
"""


def test_a_deep_recursion_keeps_the_start_and_the_end_of_its_traceback(tmp_path: Path) -> None:
    root = toy_project(tmp_path / "p", config=TOY_CONFIG.replace("policy: policy.yaml\n", ""))
    (root / "app.py").write_text(APP)
    done = oloproof("run", cwd=root)
    assert done.code == 0, done.out + done.err  # no policy: the errored case is reported
    shown = oloproof("inspect", "latest", "--failures", "--json", cwd=root)
    (case,) = json.loads(shown.out)["failed"]
    trace = case["error"]["traceback"]
    assert case["error"]["type"] == "RecursionError"
    assert len(trace) <= 16_000 + 100, len(trace)  # was about 110,000
    assert trace.startswith("Traceback (most recent call last):\n")
    assert 'in run\n    return {"answer": ping(0)}' in trace[:4_000]
    assert "characters of the traceback not kept ...]\n" in trace
    assert trace.rstrip().endswith("RecursionError: maximum recursion depth exceeded")


# A schema that is itself without end, through $dynamicRef: every judgment raises.
LOOPING = (
    "  - {type: json_schema, criterion: shaped, field: answer,\n"
    '     schema: {"$dynamicAnchor": "s", "$dynamicRef": "#s"}}\n'
)


def test_an_evaluator_that_recursed_says_why_and_keeps_its_traceback_short(
    tmp_path: Path,
) -> None:
    config = TOY_CONFIG.replace("policy: policy.yaml\n", "").replace(
        "expected_field: answer}\n", "expected_field: answer}\n" + LOOPING
    )
    root = toy_project(tmp_path / "p", config=config)
    assert oloproof("run", cwd=root).code == 0
    shown = oloproof("inspect", "latest", "--case", "c1", cwd=root)
    at = next(
        i for i, line in enumerate(shown.lines) if "shaped: missing (evaluator_raised)" in line
    )
    # It showed no error at all: the judgment's detail holds a type and a message, not `error`.
    assert shown.lines[at + 1] == (
        "      error: RecursionError: maximum recursion depth exceeded while calling a Python "
        "object"
    )
    address = shown.lines[at].split()[-1]
    judgment = json.loads(oloproof("inspect", address, "--json", cwd=root).out)
    trace = judgment["body"]["detail"]["traceback"]
    assert len(trace) <= 16_100 and "characters of the traceback not kept" in trace, len(trace)
