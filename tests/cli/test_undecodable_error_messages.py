"""User code whose exception holds a lone surrogate (as Python decodes a file name it cannot
read as UTF-8) errors its case, through the real CLI; the run carries on.

The probe: a system raising `RuntimeError("bad \\udc80")` stopped `oloproof run` with exit 2,
"the output cannot be recorded: ... surrogates not allowed", no case recorded. Now the error's
message and traceback are recorded with each such character written as its escape
(`\\udc80`, Python's backslashreplace), and the other cases run.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.support import TOY_CONFIG, oloproof, toy_project

from oloproof.execute import _evaluator_raised

APP = r"""
from oloproof import system


@system(name="toy", version="1")
def run(case):
    if case["q"] == "odd":
        # Code from a file whose name Python could not decode: the traceback names it so.
        exec(compile("raise RuntimeError('bad \\udc80 name')", "/nowhere/b\udcffd.py", "exec"))
    return {"answer": case["q"]}
"""


def test_an_error_holding_a_lone_surrogate_errors_only_its_case(tmp_path: Path) -> None:
    root = toy_project(tmp_path / "p", config=TOY_CONFIG.replace("policy: policy.yaml\n", ""))
    (root / "app.py").write_text(APP)
    cases = [
        {"id": i, "input": {"q": q}, "expected": {"answer": "x"}}
        for i, q in (("c1", "x"), ("c2", "odd"), ("c3", "x"))
    ]
    (root / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases))
    done = oloproof("run", cwd=root)
    assert done.code == 0, done.out + done.err  # was 2: "the output cannot be recorded"
    assert "2 / 2 observed · 1 missing" in done.out
    assert "errored: RuntimeError: bad \\udc80 name" in done.out
    shown = oloproof("inspect", "latest", "--failures", "--json", cwd=root)
    (case,) = json.loads(shown.out)["failed"]
    error = case["error"]
    assert (error["type"], error["message"]) == ("RuntimeError", "bad \\udc80 name")
    assert 'File "/nowhere/b\\udcffd.py", line 1, in <module>' in error["traceback"]
    assert error["traceback"].endswith("RuntimeError: bad \\udc80 name\n")


def test_an_evaluator_error_holding_a_lone_surrogate_is_recorded_escaped() -> None:
    verdict = _evaluator_raised(ValueError("no \ud800 here"))
    detail = verdict.detail
    assert (detail["type"], detail["message"]) == ("ValueError", "no \\ud800 here")
    assert detail["traceback"] == "ValueError: no \\ud800 here\n"
