"""Code that holds the event loop past a deadline is charged with its own timeout, and the cases
waiting on the loop meanwhile are not.

Real runs in a subprocess. One case's code holds the loop, computing, past the run's `timeout_s`
of 1 s: a `regex` (or a JSON Schema `pattern`) backtracking over its output, or an async system
spinning. Seven other cases, trivial, are in flight at the same time (concurrency 8); they
cannot be answered while the loop is held.

Before: the holder was stopped and charged as it should be, but every case in flight whose
deadline fell inside the hold errored too, `TimeoutError: the case took longer than 1 s`
(measured: concurrency 4, 2 innocent cases errored; concurrency 8, 6 of them), counting missing
against the release with evidence that blamed the wrong cases. Now the time the loop was held
by one case is not counted against the others' deadlines: only the holder is charged.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.support import oloproof

SYNC_APP = """
from oloproof import system

@system(name="trivial", version="1")
def run(case):
    return {"answer": case["text"]}
"""

SPINNING_APP = """
import asyncio, time
from oloproof import system

@system(name="spinning", version="1")
async def run(case):
    text = case["text"]
    if text.endswith("!"):
        end = time.monotonic() + 30
        while time.monotonic() < end:  # Python code holding the loop; the timer stops it
            pass
    await asyncio.sleep(0.01)
    return {"answer": text}
"""

REGEX = '{type: regex, criterion: shaped, field: answer, pattern: "^(a+)+$"}'
SCHEMA = '{type: json_schema, criterion: shaped, field: answer, schema: {pattern: "^(a+)+$"}}'

CONFIG = """\
system: {{name: probe, version: "1", callable: app:run}}
dataset: cases.jsonl
concurrency: 8
timeout_s: 1
evaluators:
  - {evaluator}
policy: policy.yaml
"""


def project(root: Path, app: str, evaluator: str) -> Path:
    (root / "app.py").write_text(app)
    (root / "oloproof.yaml").write_text(CONFIG.format(evaluator=evaluator))
    (root / "policy.yaml").write_text(
        "version: 1\nrules:\n  - {id: floor, metric: shaped, min: 0.1}\n"
    )
    # Case c5 answers 40 letters and a `!`: some 2**40 ways for ^(a+)+$ to fail on it.
    texts = ["a" * 40 + "!" if i == 5 else "a" * (i + 1) for i in range(24)]
    lines = [json.dumps({"id": f"c{i}", "input": {"text": t}}) for i, t in enumerate(texts)]
    (root / "cases.jsonl").write_text("\n".join(lines) + "\n")
    return root


def failures(root: Path, run_id: str) -> dict[str, object]:
    shown = oloproof("inspect", run_id, "--failures", "--json", cwd=root)
    assert shown.code == 0, shown.err
    return {
        case["case_id"]: case["error"] or case["verdicts"]
        for case in json.loads(shown.out)["failed"]
    }


@pytest.mark.parametrize("evaluator", [REGEX, SCHEMA], ids=["regex", "json_schema"])
def test_a_judgment_backtracking_past_its_timeout_is_the_only_one_charged(
    tmp_path: Path, evaluator: str
) -> None:
    root = project(tmp_path, SYNC_APP, evaluator)
    result = oloproof("run", cwd=root, timeout=120)
    assert result.code == 0, result.out + result.err
    assert "23 / 23 observed · 1 missing · 0 excluded" in result.out, result.out
    assert "shaped: 1 missing: 1 evaluator_timed_out" in result.out
    assert "errored" not in result.out
    run_id = result.lines[0].split()[1]
    assert failures(root, run_id) == {
        "c5": {"shaped": {"s": "missing", "r": "evaluator_timed_out"}}
    }


def test_an_async_system_computing_past_its_timeout_is_the_only_one_charged(
    tmp_path: Path,
) -> None:
    root = project(tmp_path, SPINNING_APP, '{type: regex, criterion: shaped, pattern: "a"}')
    result = oloproof("run", cwd=root, timeout=120)
    assert "23 / 23 observed · 1 missing · 0 excluded" in result.out, result.out + result.err
    run_id = result.lines[0].split()[1]
    held = (
        "the case took longer than 1 s and held up the event loop (blocking code in an async "
        "system)"
    )
    assert failures(root, run_id) == {
        "c5": {"type": "TimeoutError", "message": held, "traceback": ""}
    }


GIL_SLEEP_APP = """
import ctypes
from oloproof import system

_libc = ctypes.PyDLL(None)  # its calls are made holding the GIL

@system(name="gil-sleep", version="1")
def run(case):
    text = case["text"]
    if text.endswith("!"):
        _libc.usleep(3_000_000)  # C code blocked for 3 s, keeping the GIL: nothing else runs
    return {"answer": text}
"""


def test_a_plain_function_keeping_the_gil_past_its_timeout_is_still_charged(
    tmp_path: Path,
) -> None:
    # The loop's thread waits for the GIL meanwhile, computing nothing: its hold is not
    # credited to the cases in progress, since the case whose call kept the GIL cannot be told
    # from them; it is charged, however many others are too.
    root = project(tmp_path, GIL_SLEEP_APP, '{type: regex, criterion: shaped, pattern: "a"}')
    result = oloproof("run", cwd=root, timeout=120)
    run_id = result.lines[0].split()[1]
    assert failures(root, run_id).get("c5") == {
        "type": "TimeoutError",
        "message": "the case took longer than 1 s",
        "traceback": "",
    }, result.out
