"""A real Ray cluster for the Ray engine's tests, and the comparisons of their ledgers.

``RayCluster`` starts ``cluster.py`` in a process of its own and waits for the address it
prints; closing its standard input stops Ray. The token and the loopback-only setting go to
the cluster and to every ``oloproof`` it runs alike.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.support import Result, normalise, oloproof

from ledger import open_ledger

HERE = Path(__file__).resolve().parent
# Content-addressed: the same case gives the same event, so these compare as address sets.
CONTENT = ("oloproof.execution", "oloproof.stage", "oloproof.judgment")


@dataclass
class RayCluster:
    num_cpus: int
    # Given to the cluster (and so to its workers) only, never to the runs it serves.
    worker_env: dict[str, str] = field(default_factory=dict)
    env: dict[str, str] = field(default_factory=dict)
    address: str = ""
    _proc: subprocess.Popen[str] | None = None
    _dir: str = ""

    def start(self) -> RayCluster:
        # Short: Ray puts its sockets in the folder, and a socket path has ~100 characters.
        self._dir = tempfile.mkdtemp(prefix="olo-ray-", dir="/tmp")
        self.env = {
            "RAY_AUTH_MODE": "token",
            "RAY_AUTH_TOKEN": secrets.token_hex(32),
            "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0",
            "RAY_USAGE_STATS_ENABLED": "0",
        }
        self._proc = subprocess.Popen(
            [sys.executable, str(HERE / "cluster.py"), self._dir, str(self.num_cpus)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            env={**os.environ, **self.env, **self.worker_env},
        )
        assert self._proc.stdout is not None
        line = self._proc.stdout.readline().strip()  # blocks until Ray is up (or the start fails)
        assert line, f"the test cluster did not start (exit {self._proc.poll()})"
        self.address = line
        return self

    def stop(self) -> None:
        if self._proc is not None:
            assert self._proc.stdin is not None and self._proc.stdout is not None
            self._proc.stdin.close()
            self._proc.wait(timeout=120)
            self._proc.stdout.close()
        shutil.rmtree(self._dir, ignore_errors=True)

    def run(
        self, *args: str, cwd: Path, timeout: float = 600, env: Mapping[str, str] | None = None
    ) -> Result:
        """``oloproof ARGS`` with this cluster's token (and ``env``) in the environment."""
        return oloproof(*args, cwd=cwd, env={**self.env, **(env or {})}, timeout=timeout)


def content_events(root: Path) -> dict[str, set[str]]:
    """The addresses of the content-addressed events in a project's ledger, by type."""
    found: dict[str, set[str]] = {kind: set() for kind in CONTENT}
    with open_ledger(root / ".oloproof") as ledger:
        for kind in CONTENT:
            found[kind] = {address for address, _ in ledger.events(kind)}
    return found


def run_records(root: Path, run_id: str) -> dict[str, Any]:
    """A run's case results by case id, its end records and decisions, with the run's own id
    and address taken out (they differ between any two runs), the end record's engine (what
    ran it) and the decision's policy path (the project's folder): nothing else."""
    cases: dict[str, Any] = {}
    ends: list[Any] = []
    decisions: list[Any] = []
    with open_ledger(root / ".oloproof") as ledger:
        run_address = next(
            a for a, e in ledger.events("oloproof.run") if e.body["run_id"] == run_id
        )
        for _, event in ledger.events("oloproof.case_result"):
            body = dict(event.body)
            if body.pop("run_id") != run_id:
                continue
            refs = [r for r in event.refs if r != run_address]
            assert len(refs) == len(event.refs) - 1  # the run is named exactly once
            cases[body["case_id"]] = {"body": _plain(body), "refs": refs}
        for _, event in ledger.events("oloproof.run_end"):
            if event.body["run_id"] == run_id:
                body = {k: v for k, v in event.body.items() if k not in ("run_id", "engine")}
                ends.append(_plain(body))
        for _, event in ledger.events("oloproof.decision"):
            if event.body["run_id"] == run_id:
                # The policy file's path names the project's folder, which differs by copy.
                mine = ("run_id", "policy_path")
                decisions.append(_plain({k: v for k, v in event.body.items() if k not in mine}))
    return {"cases": cases, "ends": ends, "decisions": decisions}


def result_addresses(root: Path, run_id: str) -> list[str]:
    """The run's case results, end records and decisions: exported, with every event they
    link to (the run, executions, stage outputs, judgments), they carry the whole run."""
    kinds = ("oloproof.case_result", "oloproof.run_end", "oloproof.decision")
    with open_ledger(root / ".oloproof") as ledger:
        return [
            address
            for kind in kinds
            for address, event in ledger.events(kind)
            if event.body["run_id"] == run_id
        ]


def engine_record(root: Path, run_id: str) -> Mapping[str, Any] | None:
    """What a run's latest end record says of its engine."""
    found = None
    with open_ledger(root / ".oloproof") as ledger:
        for _, event in ledger.events("oloproof.run_end"):
            if event.body["run_id"] == run_id:
                found = event.body.get("engine")
    return found


def run_id_of(result: Result) -> str:
    """The run id a report prints on its first line."""
    first = result.out.splitlines()[0]
    assert first.startswith("Run run_"), result.out + result.err
    return first.split()[1]


def report(result: Result) -> str:
    return normalise(result.out)


def _plain(value: Any) -> Any:
    # The ledger hands back frozen containers; compare them as JSON would.
    return json.loads(json.dumps(value, sort_keys=True, default=list))
