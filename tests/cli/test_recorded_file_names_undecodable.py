"""A file whose path a command records (`run --config`, `calibrate --labels`), named with bytes
that are not UTF-8 (`c\\xff.yaml` on Linux), is refused naming it, before anything is written,
through the real CLI.

The probe: `oloproof run --config c\\xff.yaml` and `oloproof calibrate --labels l\\xff.jsonl`
each stopped with "error: cannot encode value: 'utf-8' codec can't encode character '\\udcff'
... surrogates not allowed", naming no file: the path, recorded in the run or the calibration,
holds a lone surrogate no ledger stores. Now each is refused naming the file with its escape.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from tests.support import copy_example, oloproof, toy_project

REFUSED = (
    "error: {name}: its name holds bytes that are not UTF-8 text (written here as \\udcXX), "
    "which the ledger cannot record; rename it\n"
)


def test_a_settings_file_of_undecodable_name_is_refused(tmp_path: Path) -> None:
    root = toy_project(tmp_path / "p")
    shutil.copy(root / "oloproof.yaml", root / os.fsdecode(b"c\xff.yaml"))
    done = oloproof("run", "--config", os.fsdecode(b"c\xff.yaml"), cwd=root)
    assert (done.code, done.err) == (2, REFUSED.format(name="c\\udcff.yaml"))
    assert not (root / ".oloproof").exists()


def test_a_labels_file_of_undecodable_name_is_refused(tmp_path: Path) -> None:
    root = copy_example("judge_gate", tmp_path)
    shutil.copy(root / "labels.jsonl", root / os.fsdecode(b"l\xff.jsonl"))
    done = oloproof(
        "calibrate", "--evaluator", "groundedness", "--labels", os.fsdecode(b"l\xff.jsonl"),
        cwd=root, env={"JUDGE_GATE_KEY": "test-key"},
    )  # fmt: skip
    assert (done.code, done.err) == (2, REFUSED.format(name="l\\udcff.jsonl"))
    assert not (root / ".oloproof").exists()
