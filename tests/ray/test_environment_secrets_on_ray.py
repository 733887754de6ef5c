"""Secrets the user's own code reads from the environment on a Ray worker are kept out as a
local run keeps them out: a variable named like a credential (``SERVICE_API_KEY``) and one the
project lists under ``secrets:``.

A local run registers both before the user's code runs, so what the code echoes (in its
output, in the error it raises) is stored as ``[redacted]``. The workers hold the values and
the driver does not (as the scaling guide says to set them); the replica must register them
itself, since only it can read them.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.ray.projects import write_callable_config
from tests.ray.support import RayCluster, content_events, report, run_id_of, run_records
from tests.support import oloproof

API_KEY = "sk-worker-only-9d2f61c0a4e87b35"
DECLARED = "plain-word-secret"
WORKERS = {"SERVICE_API_KEY": API_KEY, "PLAIN_WORD": DECLARED}

APP = """
import os


def answer(case_input):
    key = os.environ.get("SERVICE_API_KEY", "")
    word = os.environ.get("PLAIN_WORD", "")
    if case_input["n"] == 1:
        raise RuntimeError(f"the service refused {key} for {word}")
    return {"answer": f"{case_input['q']}: sent {key} and {word}"}
"""


@pytest.fixture(scope="module")
def cluster() -> Iterator[RayCluster]:
    running = RayCluster(num_cpus=2, worker_env=WORKERS).start()
    try:
        yield running
    finally:
        running.stop()


def _project(root: Path) -> Path:
    root.mkdir()
    (root / "app.py").write_text(APP, encoding="utf-8")
    cases = [
        {"id": f"c{n}", "input": {"n": n, "q": f"q{n}"}, "expected": {"answer": f"q{n}"}}
        for n in range(3)
    ]
    (root / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases))
    write_callable_config(root, "env-reader", None, secrets=["PLAIN_WORD"])
    return root


def test_secrets_the_code_reads_on_a_worker_are_kept_out_as_locally(
    tmp_path: Path, cluster: RayCluster
) -> None:
    here = _project(tmp_path / "local")
    remote = tmp_path / "on-ray"
    shutil.copytree(here, remote)
    local = oloproof("run", cwd=here, env=WORKERS)
    there = cluster.run("run", "--engine", cluster.address, cwd=remote)
    assert local.code == 0, local.err
    assert there.code == local.code, there.err
    assert "Redacted: 8 occurrences of configured secrets" in local.out
    assert report(there) == report(local)
    assert content_events(remote) == content_events(here)
    assert run_records(remote, run_id_of(there)) == run_records(here, run_id_of(local))
    data = (remote / ".oloproof" / "ledger" / "data.mdb").read_bytes()
    for secret in (API_KEY, DECLARED):
        assert secret.encode() not in data
        assert secret not in there.out + there.err


# Fails while it is imported, repeating the key, wherever the key is set.
FAILS_TO_BUILD = """
import os

if os.environ.get("SERVICE_API_KEY"):
    raise RuntimeError("cannot log in with " + os.environ["SERVICE_API_KEY"])


def answer(case_input):
    return {"answer": case_input["q"]}
"""


def test_a_build_error_repeating_a_secret_is_said_as_locally(
    tmp_path: Path, cluster: RayCluster
) -> None:
    here = _project(tmp_path / "local")
    (here / "app.py").write_text(FAILS_TO_BUILD, encoding="utf-8")
    remote = tmp_path / "on-ray"
    shutil.copytree(here, remote)
    local = oloproof("run", cwd=here, env=WORKERS)
    there = cluster.run("run", "--engine", cluster.address, cwd=remote)
    assert local.code == there.code == 2, there.err
    said = "system.callable: importing 'app' failed: RuntimeError: cannot log in with [redacted]"
    assert local.err.endswith(f"{said}\n"), local.err
    assert there.err.replace(str(remote), str(here)) == local.err


def test_a_secret_too_short_to_keep_out_on_the_workers_is_refused(tmp_path: Path) -> None:
    # Locally such a value stops the run before anything is stored; held by the workers alone,
    # it was not searched for there and was stored as it was.
    short = RayCluster(num_cpus=1, worker_env={"PLAIN_WORD": "4821"}).start()
    try:
        done = short.run("run", "--engine", short.address, cwd=_project(tmp_path / "on-ray"))
    finally:
        short.stop()
    assert done.code == 2, done.out + done.err
    assert (
        "secrets: on the Ray workers, the value of PLAIN_WORD is shorter than 6 characters"
        in done.err
    ), done.err
    assert "4821" not in done.out + done.err
