"""An output holding objects is recorded and judged as its text on a Ray replica as locally.

A replica used to send a system's output back to the driver as it was, and one that could not
be pickled (an object holding a lock) errored its case as ``UnsendableOutput`` there, while a
local run recorded it as its text and judged that: the same case, another verdict by engine.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.ray.projects import write_callable_config
from tests.ray.support import RayCluster, content_events, run_id_of, run_records
from tests.support import oloproof

APP = """
import threading

from oloproof import system


class Held:
    # A lock cannot be pickled, so neither can the object: only its text can cross.
    def __init__(self):
        self.lock = threading.Lock()

    def __repr__(self):
        return "Held(Paris)"


@system(name="odd", version="1")
def answer(case):
    kind = case["kind"]
    if kind == "held":
        return {"answer": Held()}
    if kind == "set":
        return {"answer": {"Paris"}}
    return {"answer": "Paris"}
"""

KINDS = ["held", "set", "text"]


def _project(root: Path, engine: dict[str, Any] | None = None) -> Path:
    root.mkdir(parents=True)
    (root / "app.py").write_text(APP, encoding="utf-8")
    (root / "cases.jsonl").write_text(
        "".join(
            json.dumps({"id": k, "input": {"kind": k}, "expected": {"answer": "Paris"}}) + "\n"
            for k in KINDS
        ),
        encoding="utf-8",
    )
    write_callable_config(root, "odd", engine)
    return root


def test_an_output_holding_objects_is_recorded_as_locally(
    tmp_path: Path, cluster: RayCluster
) -> None:
    local = _project(tmp_path / "local")
    remote = _project(tmp_path / "ray", {"kind": "ray", "address": cluster.address})
    here = oloproof("run", cwd=local)
    there = cluster.run("run", cwd=remote)
    assert here.code == there.code == 0, there.out + there.err
    assert "errored" not in there.out
    assert run_records(remote, run_id_of(there)) == run_records(local, run_id_of(here))
    assert content_events(remote) == content_events(local)
    shown = json.loads(oloproof("inspect", "latest", "--case", "held", "--json", cwd=remote).out)
    assert shown["output"] == {"answer": "Held(Paris)"}
    assert shown["verdicts"]["answered"] == {"s": "pass"}
