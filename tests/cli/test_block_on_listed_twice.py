"""An outcome listed twice in ``block_on`` is refused, through the real CLI.

The probe: ``block_on: [FAIL, FAIL]`` was accepted by ``run`` and ``compare`` alike, the gate
reading it as ``[FAIL]``; most often the repeat stands for another outcome mistyped
(``[FAIL, MANUAL_REVIEW]`` meant), which then silently does not block. Rule ids and slices
listed twice were already refused. Now the policy is refused at its ``block_on`` line (exit 2,
nothing recorded), in a release policy and a comparison policy alike.
"""

from __future__ import annotations

from pathlib import Path

from tests.support import oloproof, toy_project

BLOCK_ON = "block_on:\n  - FAIL\n  - INSUFFICIENT_EVIDENCE\n  - FAIL\n"
SAID = "line 2: block_on: FAIL is listed twice; list each outcome that blocks once\n"


def test_a_release_policy(tmp_path: Path) -> None:
    policy = "version: 1\n" + BLOCK_ON + "rules:\n  - {id: floor, metric: echo, min: 0.5}\n"
    root = toy_project(tmp_path / "p", policy=policy)
    done = oloproof("run", cwd=root)
    assert (done.code, done.out) == (2, ""), done.out + done.err
    assert done.err == f"error: {root / 'policy.yaml'}, {SAID}"
    assert not (root / ".oloproof").exists()


def test_a_comparison_policy(tmp_path: Path) -> None:
    root = toy_project(
        tmp_path / "p", policy="version: 1\nrules:\n  - {id: f, metric: echo, min: 0.5}\n"
    )
    ids = []
    for args in (("run",), ("run", "--no-cache")):
        done = oloproof(*args, cwd=root)
        assert done.code == 3, done.out + done.err
        ids.append(done.lines[0].split()[1])
    policy = root / "compare.yaml"
    policy.write_text(
        "version: 1\n"
        + BLOCK_ON
        + "rules:\n  - {id: nw, metric: echo, non_inferiority: {margin: 5}}\n"
    )
    done = oloproof("compare", ids[1], ids[0], "--policy", str(policy), cwd=root)
    assert (done.code, done.out) == (2, ""), done.out + done.err
    assert done.err == f"error: {policy}, {SAID}"
    assert "0 comparison(s)" in oloproof("verify", cwd=root).out
