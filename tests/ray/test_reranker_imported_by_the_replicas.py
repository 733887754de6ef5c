"""``diagnose --reranker`` on Ray: the replicas import the reranker as they start.

The driver imports the reranker to check it, but the replicas run it, and they imported it
only at their first case: a reranker the workers could not import (it needs a package only
the driver has) wrote the intervention's child run, stopped it, and recorded the diagnosis as
stopped. It is now refused before anything is written, in one sentence, as a reranker the
driver cannot import is refused.
"""

from __future__ import annotations

import os
from pathlib import Path

from tests.ray.support import RayCluster
from tests.support import copy_example

from ledger import open_ledger

RERANKER = """
import driver_only  # installed where the driver runs, not on the workers

from rerank import shortest_first
"""
DIAGNOSE = ("diagnose", "latest", "--intervention", "reranker", "--criterion", "answer_correct")


def test_a_reranker_the_workers_cannot_import_is_refused_before_anything_is_written(
    tmp_path: Path, cluster: RayCluster
) -> None:
    root = copy_example("support_rag", tmp_path)
    assert cluster.run("run", "--engine", cluster.address, cwd=root).code == 3
    (root / "driver_rerank.py").write_text(RERANKER, encoding="utf-8")
    driver_only = tmp_path / "site"
    driver_only.mkdir()
    (driver_only / "driver_only.py").write_text("", encoding="utf-8")
    path = os.pathsep.join(p for p in (os.environ.get("PYTHONPATH"), str(driver_only)) if p)
    before = _addresses(root)

    refused = cluster.run(
        *DIAGNOSE, "--reranker", "driver_rerank:shortest_first", cwd=root, env={"PYTHONPATH": path}
    )

    assert refused.code == 2, refused.out + refused.err
    assert refused.err == (
        "error: oloproof diagnose: --reranker, on the Ray workers: importing 'driver_rerank' "
        "failed: No module named 'driver_only'\n"
    )
    assert refused.out == ""
    assert _addresses(root) == before
    # A reranker the workers import runs there, each replica importing it once.
    done = cluster.run(*DIAGNOSE, "--reranker", "rerank:shortest_first", cwd=root)
    assert done.code == 0, done.err
    assert "Child runs: " in done.out


def _addresses(root: Path) -> set[str]:
    with open_ledger(root / ".oloproof") as ledger:
        return {address for address, _ in ledger.events()}
