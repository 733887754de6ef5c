"""A comparison policy that is a loop of symbolic links, or whose name holds bytes that are not
UTF-8 (``c\\xff.yaml`` on Linux), is refused naming it, before anything is recorded, by
``oloproof compare --policy`` and ``compare_runs(policy_path=...)`` alike, as ``oloproof run
--policy`` refuses a release policy.

Measured before: ``oloproof compare A B --policy c\\xff.yaml`` printed ``error: cannot encode
value: 'utf-8' codec can't encode character '\\udcff' in position 18: surrogates not allowed``
(naming no file: the comparison records the policy's path), and ``compare_runs`` raised that
``CodecError``; given a loop, ``compare_runs`` raised Python's ``RuntimeError: Symlink loop
from ...`` (``Path.resolve``), no ``OloproofError``."""

from __future__ import annotations

import os
from pathlib import Path

from tests.support import SAID, api_said, oloproof, toy_project

POLICY = "version: 1\nrules:\n  - {id: nw, metric: echo, non_inferiority: {margin: 10}}\n"

SCRIPT = (
    SAID
    + """
import json, os, oloproof
with oloproof.open_project_ledger(".", create=False) as ledger:
    a, b = open("runs.txt").read().split()
    for policy in ["loop", os.fsdecode(b"c\\xff.yaml")]:
        print(json.dumps(said(lambda: oloproof.compare_runs(ledger, a, b, policy_path=policy))))
    print(json.dumps(len(list(ledger.events("oloproof.comparison")))))
"""
)


def test_a_comparison_policy_path_is_checked_as_a_runs_is(tmp_path: Path) -> None:
    root = toy_project(tmp_path / "p")
    for _ in range(2):  # one case: the gate blocks for want of evidence
        assert oloproof("run", cwd=root).code == 3
    ids = [line.split()[0] for line in oloproof("runs", cwd=root).lines[:2]]
    (root / "runs.txt").write_text(" ".join(ids))
    os.symlink("loop2", root / "loop")
    os.symlink("loop", root / "loop2")
    (root / os.fsdecode(b"c\xff.yaml")).write_text(POLICY)
    loop = "loop: cannot read it (a loop of symbolic links)"
    name = (
        f"{root}/c\\udcff.yaml: its name holds bytes that are not UTF-8 text (written here "
        "as \\udcXX), which the ledger cannot record; rename it"
    )
    assert api_said(SCRIPT, root) == [["ConfigError", loop], ["ConfigError", name], 0]
    done = oloproof("compare", *ids, "--policy", os.fsdecode(b"c\xff.yaml"), cwd=root)
    assert (done.code, done.err) == (2, f"error: {name}\n")
