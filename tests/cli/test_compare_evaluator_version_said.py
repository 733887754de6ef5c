"""A comparison whose evaluator changed only by the version of its code says so.

The probe: a baseline judged by the release before `contains` reached its current version
(spaces read alike) and a candidate judged by this one, with the same `oloproof.yaml`. The row
said `judged differently: the evaluator's settings differ between the runs`, and the user found
no setting that differed. It now says the evaluator differs, its settings or the version of its
code, in the CLI and the viewer alike.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.support import oloproof, toy_project

EARLIER_CONTAINS = """
from oloproof.evaluators.text import Contains

Contains.VERSION -= 1
from oloproof.cli.main import main

main()
"""
LINE = (
    "  judged differently: the evaluator differs between the runs (its settings, or the version "
    "of its code)"
)


def test_an_evaluator_code_version_change_is_said(tmp_path: Path) -> None:
    root = toy_project(tmp_path / "p", cases=3)
    base = oloproof("run", "--json", cwd=root, command=("-c", EARLIER_CONTAINS))
    cand = oloproof("run", "--json", cwd=root)
    ids = json.loads(cand.out)["run_id"], json.loads(base.out)["run_id"]
    done = oloproof("compare", *ids, cwd=root)
    assert done.code == 0, done.err
    assert LINE in done.lines, done.out
    (row,) = json.loads(oloproof("compare", *ids, "--json", cwd=root).out)["metrics"]
    assert row["same_evaluator"] is False
    site = tmp_path / "site"
    assert oloproof("view", "--export", str(site), *ids, cwd=root).code == 0
    (page,) = (site / "comparisons").glob("*/index.html")
    assert LINE.strip() in page.read_text()
