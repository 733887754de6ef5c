"""`oloproof run --resume` of a diagnosis's child run, through the real CLI.

A gold-context diagnosis of the support example re-executes its 4 failed cases with the gold
context; interrupted (Ctrl-C) on its third, it leaves its child run INTERRUPTED, which
`oloproof runs --all` lists with the id `--resume` takes. Resumed with `oloproof run --resume`:

- in the project as it was, it was refused for a reason that was not so: `the policy changed
  since run_… started`, where nothing had changed (a child run has no policy);
- with no `policy:` in the project file, it was resumed: all 13 cases of the cases file were
  executed into it, without the gold context (`13 of 4 observed`), and `verify` then found its
  diagnosis stale.

`inspect` of the child run offered `finish it with: oloproof run --resume run_…` all the same.
`run --resume` cannot repeat what a diagnosis chose and did; it now refuses a child run, naming
its diagnosis's run and what to do, before anything runs, and `inspect` says the same.
"""

from __future__ import annotations

from pathlib import Path

from tests.cli.test_diagnose_unjudged import GOLD, brittle, run_id_of
from tests.support import oloproof


def test_a_diagnosis_child_run_is_not_resumed_by_run(tmp_path: Path) -> None:
    root = brittle(tmp_path, interrupt_on="How soon is a refund")
    parent = oloproof("run", cwd=root)
    assert parent.code == 3, parent.err
    parent_id = run_id_of(parent.out)
    (root / "armed").touch()
    assert oloproof("diagnose", parent_id, *GOLD, cwd=root).code == 130
    (line,) = [row for row in oloproof("runs", "--all", cwd=root).lines if "INTERRUPTED" in row]
    child = line.split()[2]
    shown = oloproof("inspect", child, cwd=root)
    assert shown.lines[1].endswith(  # how many finished depends on the timing of Ctrl-C
        f" of 4 cases finished; a diagnosis's child run is not resumed: diagnose {parent_id} again"
    )
    refusal = (
        f"error: {child} is the gold context run of a diagnosis of {parent_id}: `oloproof run "
        "--resume` cannot repeat what the diagnosis chose and did; diagnose that run again: "
        f"oloproof diagnose {parent_id}\n"
    )
    config = root / "oloproof.yaml"
    for text in (config.read_text(), config.read_text().replace("policy: policy.yaml\n", "")):
        config.write_text(text)
        resumed = oloproof("run", "--resume", child, cwd=root)
        assert (resumed.code, resumed.err) == (2, refusal)
    assert oloproof("verify", cwd=root).code == 0
