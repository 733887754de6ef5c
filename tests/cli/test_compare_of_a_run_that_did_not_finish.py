"""``oloproof compare CAND BASE`` of a candidate killed (no end record) or interrupted after a
few of its cases printed only ``not paired 4: only in baseline (c1, c2, c3, c4)``: nothing said the
candidate did not finish, so the cases it never ran read as cases it lacks by design. A note
on stderr now names the run, how far it got and that its unrun cases count as missing."""

from __future__ import annotations

import signal
from pathlib import Path

from tests.support import (
    HELD_TOY_APP,
    HELD_TOY_CONFIG,
    TOY_POLICY,
    interrupt_run,
    interrupted_while_held,
    oloproof,
    write_project,
)

from oloproof import events as ev
from oloproof.store import open_project_ledger


def _project(root: Path) -> tuple[Path, str]:
    cases = [
        {"id": f"c{i}", "input": {"q": q}, "expected": {"answer": q}}
        for i, q in enumerate("abcd", 1)
    ]
    root = write_project(
        root, app=HELD_TOY_APP, config=HELD_TOY_CONFIG, policy=TOY_POLICY, cases=cases
    )
    base = oloproof("run", cwd=root)
    assert base.code in (0, 3), base.out + base.err
    return root, base.lines[0].split()[1]


def _newest_run(root: Path) -> str:
    with open_project_ledger(root, create=False) as ledger:
        return str(ledger.get(ledger.lookup("type", ev.RUN)[-1]).body["run_id"])


def _noted(run_id: str, err: str) -> bool:
    return err.startswith(f"note: the candidate, {run_id}, did not finish (") and err.endswith(
        f" of 4 cases; finish it with: oloproof run --resume {run_id}); the cases it did not "
        "run count as missing\n"
    )


def test_a_killed_candidate_is_said_not_to_have_finished(tmp_path: Path) -> None:
    root, base = _project(tmp_path / "p")
    code, _, _ = interrupt_run(
        root, "holding\n", signal.SIGKILL, env={"HOLD": "c"}, args=("--no-cache",)
    )
    assert code == -signal.SIGKILL
    cand = _newest_run(root)

    compared = oloproof("compare", cand, base, cwd=root)
    assert "only in baseline" in compared.out, compared.out
    assert _noted(cand, compared.err), compared.err


def test_an_interrupted_candidate_is_said_not_to_have_finished(tmp_path: Path) -> None:
    root, base = _project(tmp_path / "p")
    cand = interrupted_while_held(root, "holding\n", {"HOLD": "c"}, ("--no-cache",))

    compared = oloproof("compare", cand, base, cwd=root)
    assert "only in baseline" in compared.out, compared.out
    assert _noted(cand, compared.err), compared.err
    finished = oloproof("compare", base, base, cwd=root)
    assert "note:" not in finished.err, finished.err
