"""A replay carries the labels of a gold-context diagnosis that read the parent's results it
reads, through the real CLI.

A gold-context diagnosis of an interrupted run selects the failures written so far; once the
run is resumed, a replay of it selects more. Carrying the earlier labels then left the new
cases without one while the output read as the whole selection's: measured on the support
example, ``Selected: 4``, ``Labels from gold context (…): 3 of 3 recovered`` and the fourth
case's ``no gold-context label`` said nowhere but in ``inspect``.
"""

from __future__ import annotations

from pathlib import Path

from tests.cli.test_diagnose_unjudged import GOLD, SELECTED_3, brittle, diagnosis_of
from tests.support import oloproof

NO_LABELS = "No gold-context diagnosis of this run yet; run one to label the cases."
TOP_K = ("--intervention", "top-k", "--top-k", "4", "--criterion", "answer_correct")


def test_a_gold_diagnosis_made_before_the_run_was_resumed_is_not_carried(
    tmp_path: Path,
) -> None:
    root = brittle(tmp_path, interrupt_on="How often are failed webhook")  # the 7th line
    (root / "armed").touch()
    stopped = oloproof("run", "--concurrency", "1", cwd=root)
    assert stopped.code == 130, stopped.out + stopped.err
    run_id = stopped.err.split("--resume ")[1].split()[0]
    early = oloproof("diagnose", run_id, *GOLD, cwd=root)
    assert early.code == 0 and early.lines[0] == SELECTED_3, early.out + early.err
    # Carried while the parent holds the very results the gold-context diagnosis read.
    before = oloproof("diagnose", run_id, *TOP_K, cwd=root)
    assert before.code == 0, before.err
    assert f"Labels from gold context (diagnosis {diagnosis_of(early.out)})" in before.out

    resumed = oloproof("run", "--resume", run_id, cwd=root)
    assert resumed.code == 3, resumed.err
    replay = oloproof("diagnose", run_id, *TOP_K, cwd=root)
    assert replay.code == 0, replay.err
    assert replay.lines[0].startswith("Selected: 4 failed cases"), replay.out
    assert "Labels from gold context" not in replay.out, replay.out
    assert NO_LABELS in replay.lines, replay.out
    assert oloproof("diagnose", "--verify", diagnosis_of(replay.out), cwd=root).code == 0

    # A gold-context diagnosis of the resumed run is carried again, over all four cases.
    late = oloproof("diagnose", run_id, *GOLD, cwd=root)
    assert late.code == 0, late.err
    again = oloproof("diagnose", run_id, *TOP_K, cwd=root)
    assert f"Labels from gold context (diagnosis {diagnosis_of(late.out)})" in again.out
    assert oloproof("verify", cwd=root).code == 0
