"""The engine setting through the real CLI: what is refused, in one sentence and before
anything is recorded, and a run on a Ray instance of its own (no address)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.ray.projects import callable_project
from tests.support import oloproof

CASES = [{"n": i, "q": f"q{i}"} for i in range(6)]


def _project(tmp_path: Path, engine: Any) -> Path:
    return callable_project(tmp_path / "p", CASES, engine=engine)


def _refused(root: Path, *args: str) -> str:
    done = oloproof("run", *args, cwd=root)
    assert done.code == 2, (done.out, done.err)
    assert done.out == "" and len(done.err.splitlines()) == 1, done.err
    assert "Traceback" not in done.err
    listed = oloproof("runs", cwd=root)
    assert "run_" not in listed.out  # nothing was recorded
    return done.err


def test_settings_that_cannot_be_meant_are_refused(tmp_path: Path) -> None:
    root = _project(tmp_path, {"kind": "local", "replicas": 2})
    assert "replicas is a setting of the ray engine (kind: ray)" in _refused(root)
    config = json.loads((root / "oloproof.yaml").read_text())
    for engine, said in [
        ({"kind": "ray", "address": "http://head"}, "'http://head' is not a Ray address"),
        ({"kind": "ray", "replicas": 0}, "replicas"),
        ({"kind": "ray", "num_gpus": -1}, "num_gpus"),
        ({"kind": "spark"}, "kind"),
    ]:
        config["engine"] = engine
        (root / "oloproof.yaml").write_text(json.dumps(config))
        err = _refused(root)
        assert said in err and "oloproof.yaml" in err, err
    config["engine"] = "local"
    (root / "oloproof.yaml").write_text(json.dumps(config))
    err = _refused(root, "--engine", "spark")
    assert "--engine: 'spark' is not an engine (use local, ray, auto," in err, err


def test_replicas_this_machine_cannot_hold_are_refused(tmp_path: Path) -> None:
    root = _project(tmp_path, {"kind": "ray", "replicas": 2, "num_gpus": 1})
    err = _refused(root)
    assert "2 replicas need 2 GPUs in all, and this machine offers Ray 0 GPUs" in err, err
    assert "lower engine.replicas or what each asks for" in err


def test_a_ray_instance_of_the_runs_own_gives_a_local_runs_results(tmp_path: Path) -> None:
    local = callable_project(tmp_path / "local", CASES)
    here = oloproof("run", "--json", cwd=local)
    root = _project(tmp_path, {"kind": "ray", "replicas": 1, "num_cpus": 0.5, "memory_mib": 64})
    there = oloproof("run", "--json", cwd=root, timeout=300)
    assert (here.code, there.code) == (0, 0), there.err
    mine, theirs = json.loads(there.out), json.loads(here.out)
    assert mine["metrics"] == theirs["metrics"]
