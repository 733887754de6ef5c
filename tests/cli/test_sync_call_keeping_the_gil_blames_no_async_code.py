"""A plain function's call that keeps the GIL past its timeout is never blamed on another case
as "blocking code in an async system".

Real runs in a subprocess. The system is a plain function; on one case it blocks for 3 s in C
code that keeps the GIL (a `ctypes.PyDLL` call), with a `timeout_s` of 1 and seven other cases
in progress on threads. Nothing else in the process runs meanwhile, the event loop included,
and a case that starts a thread for its call then waits in `threading` for that thread.

Before: that waiting case was errored `TimeoutError: the case took longer than 1 s and held up
the event loop (blocking code in an async system)` (measured: c6, every time, three runs out
of three): the timer's handler ran in `threading`'s frames, which were taken for the case's own
code, and the error sent the reader looking for blocking code in an async system that does not
exist. Now code of the standard library counts as its caller's: Oloproof's own code waiting
there is left alone, and no case of a plain function is said to have held up the event loop.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.support import oloproof

APP = """
import ctypes
from oloproof import system

_libc = ctypes.PyDLL(None)  # its calls are made holding the GIL

@system(name="gil-sleep", version="1")
def run(case):
    text = case["text"]
    if text == "block":
        _libc.usleep(3_000_000)  # C code blocked for 3 s, keeping the GIL
    return {"answer": text}
"""

CONFIG = """\
system: {name: gil-sleep, version: "1", callable: app:run}
dataset: cases.jsonl
concurrency: 8
timeout_s: 1
evaluators:
  - {type: regex, criterion: shaped, pattern: "a"}
policy: policy.yaml
"""


def test_no_case_of_a_plain_function_is_said_to_hold_up_the_event_loop(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text(APP)
    (tmp_path / "oloproof.yaml").write_text(CONFIG)
    (tmp_path / "policy.yaml").write_text(
        "version: 1\nrules:\n  - {id: floor, metric: shaped, min: 0.1}\n"
    )
    texts = ["block" if i == 5 else "a" * (i + 1) for i in range(24)]
    lines = [json.dumps({"id": f"c{i}", "input": {"text": t}}) for i, t in enumerate(texts)]
    (tmp_path / "cases.jsonl").write_text("\n".join(lines) + "\n")
    result = oloproof("run", cwd=tmp_path, timeout=120)
    run_id = result.lines[0].split()[1]
    shown = oloproof("inspect", run_id, "--failures", "--json", cwd=tmp_path)
    assert shown.code == 0, shown.err
    errors = {case["case_id"]: case["error"] for case in json.loads(shown.out)["failed"]}
    assert errors["c5"] == {
        "type": "TimeoutError",
        "message": "the case took longer than 1 s",
        "traceback": "",
    }
    held_up = {
        case for case, error in errors.items() if "held up" in (error or {}).get("message", "")
    }
    assert held_up == set(), errors
