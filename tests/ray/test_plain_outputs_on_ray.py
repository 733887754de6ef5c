"""An output holding objects is recorded and judged as its text on a Ray replica as locally.

A replica used to send a system's output back to the driver as it was, and one that could not
be pickled (an object holding a lock) errored its case as ``UnsendableOutput`` there, while a
local run recorded it as its text and judged that: the same case, another verdict by engine.
An output with no text of its own (a generator), which a local run refuses, still errored its
case there, as an object that cannot be pickled; it now stops the run in the same sentence.
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


NO_TEXT = """
from oloproof import system


@system(name="odd", version="1")
def answer(case):
    if case["kind"] == "generator":  # cannot be pickled: it was an errored case on Ray alone
        return {"answer": (word for word in ["Paris"])}
    return {"answer": "Paris"}
"""

# Text of a class of the project's own that cannot be pickled: plain data once it is its base
# type, as the ledger stores it.
STICKY = """
from oloproof import system


class Sticky(str):
    def __reduce__(self):
        raise TypeError("not to be pickled")


@system(name="odd", version="1")
def answer(case):
    return {"answer": Sticky("Paris")}
"""


def test_text_of_a_class_that_cannot_be_pickled_is_recorded_as_locally(
    tmp_path: Path, cluster: RayCluster
) -> None:
    local = _project(tmp_path / "local")
    remote = _project(tmp_path / "ray", {"kind": "ray", "address": cluster.address})
    for root in (local, remote):
        (root / "app.py").write_text(STICKY, encoding="utf-8")
    here = oloproof("run", cwd=local)
    there = cluster.run("run", cwd=remote)
    assert here.code == there.code == 0, there.out + there.err
    assert "errored" not in there.out, there.out
    assert run_records(remote, run_id_of(there)) == run_records(local, run_id_of(here))


def test_an_output_with_no_text_of_its_own_stops_the_run_as_locally(
    tmp_path: Path, cluster: RayCluster
) -> None:
    runs = {}
    for where, engine in (("local", None), ("ray", {"kind": "ray", "address": cluster.address})):
        root = _project(tmp_path / where, engine)
        (root / "app.py").write_text(NO_TEXT, encoding="utf-8")
        (root / "cases.jsonl").write_text(
            json.dumps({"id": "g", "input": {"kind": "generator"}, "expected": {"answer": "P"}})
            + "\n",
            encoding="utf-8",
        )
        runs[where] = (oloproof if engine is None else cluster.run)("run", cwd=root)
    here, there = runs["local"], runs["ray"]
    assert here.code == 2, here.out + here.err
    assert here.err.startswith(
        "error: case 'g': the output cannot be recorded: output.answer is a value of type "
        "generator, whose text shows where it sits in memory"
    ), here.err
    assert (there.code, there.err) == (here.code, here.err), there.out + there.err
