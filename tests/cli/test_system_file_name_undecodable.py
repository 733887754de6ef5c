"""A system whose source file's name Python cannot decode (bytes that are not UTF-8, such as
`sys\\xff.py` on Linux) runs, its file named with the escape, through the real CLI.

The probe: `app.py` loading its system from the file `b"sys\\xff.py"` stopped `oloproof run`
with exit 2, "error: cannot encode value: 'utf-8' codec can't encode character '\\udcff' in
position 3: surrogates not allowed", naming no file: the code fingerprint named the file by
its decoded name, which holds a lone surrogate, and the run's event could not be stored. Now
the fingerprint names it `sys\\udcff.py` (Python's backslashreplace) and the run is decided;
an error the file's code raises with its own path is recorded against its case, so escaped.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from tests.support import oloproof, stored_event, toy_project

LOADER = """
import importlib.util
import os

spec = importlib.util.spec_from_file_location("odd", os.fsdecode(b"sys\\xff.py"))
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
run = module.run
"""

SYSTEM = """
from oloproof import system

HERE = __file__


@system(name="toy", version="1")
def run(case):
    if case["q"] == "boom":
        raise ValueError(HERE)
    return {"answer": case["q"]}
"""


def test_a_system_in_a_file_of_undecodable_name_runs(tmp_path: Path) -> None:
    root = toy_project(tmp_path / "p", cases=2)
    (root / "app.py").write_text(LOADER)
    (root / os.fsdecode(b"sys\xff.py")).write_text(SYSTEM)
    boom = {"id": "c3", "input": {"q": "boom"}, "expected": {"answer": "x"}}
    with (root / "cases.jsonl").open("a") as cases:
        cases.write(json.dumps(boom) + "\n")
    done = oloproof("run", cwd=root)
    assert "cannot encode" not in done.err  # was exit 2: "cannot encode value: ..."
    assert done.code == 3, done.out + done.err
    assert "2 / 2 observed · 1 missing" in done.out
    failed = oloproof("inspect", "latest", "--failures", "--json", cwd=root)
    (case,) = json.loads(failed.out)["failed"]
    assert (case["error"]["type"], case["error"]["message"]) == (
        "ValueError",
        f"{root}/sys\\udcff.py",
    )
    _, run = stored_event(root, "oloproof.run")
    assert run["fingerprints"]["callable"]["code"]["odd:run"][1] == "sys\\udcff.py"
    assert oloproof("verify", cwd=root).code == 0
